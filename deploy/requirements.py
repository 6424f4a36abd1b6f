"""Print the requirements of `dailies[EXTRA]` read from pyproject.toml, one a line (default: all).

The image installs them in a layer of their own before copying the code (Dockerfile), so that a
change of the code rebuilds only the last, small layer. Extras naming other extras are followed.
Standard library only: it runs in the image's build stage before anything is installed.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

_SELF_EXTRA = re.compile(r"dailies\[(?P<extras>[^\]]+)\]")


def requirements(pyproject: dict, extra: str) -> list[str]:
    project = pyproject["project"]
    extras = project.get("optional-dependencies", {})
    found = list(project.get("dependencies", []))
    wanted, seen = [extra], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        for requirement in extras[name]:
            own = _SELF_EXTRA.fullmatch(requirement.strip())
            if own:
                wanted.extend(part.strip() for part in own.group("extras").split(","))
            elif requirement not in found:
                found.append(requirement)
    return found


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else Path("pyproject.toml")
    extra = argv[2] if len(argv) > 2 else "all"
    with path.open("rb") as file:
        print("\n".join(requirements(tomllib.load(file), extra)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
