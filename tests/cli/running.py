"""Running the `dailies` command in this process, its output captured."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

from dailies.cli import main


def run(*argv: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `dailies *argv`."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()
