"""Garbage collection for a long-running dashboard server.

Importing the dashboard's modules (Streamlit, pandas, pyarrow, altair, pydantic's schemas) makes about
150,000 objects that live as long as the process. Python's full collections examine every one of them:
100-250 ms on 2 cores, inside whichever script run happens to trigger one (Streamlit's own collection
after every run is switched off for the same reason, see dailies/launcher.py). Freezing them moves them
out of the collector's sight, so a full collection only examines what the sessions made since.

`freeze_imported_objects` runs after each page run and acts only when modules were imported since it
last did: a handful of times per process, the first visits of each page. It collects first, so no
garbage is frozen; what the sessions of that moment hold is frozen with the modules (a few KB, once).
"""

from __future__ import annotations

import gc
import sys

_modules_when_frozen = 0


def freeze_imported_objects() -> None:
    global _modules_when_frozen
    if len(sys.modules) == _modules_when_frozen:
        return
    gc.collect()
    gc.freeze()
    _modules_when_frozen = len(sys.modules)
