"""Which commands need which extra of the distribution (pyproject.toml, [project.optional-dependencies]).

`pip install dailies` is the typed client, the contract and the client commands (create, list, get,
request, cancel, wait, download): pydantic, httpx and anyio. The other commands need an extra; on an
install without it they exit 2 with one line naming it, never a traceback: `main` checks a command's
extras before running it (`missing`), and turns a ModuleNotFoundError of a module an extra brings, raised
while it runs (`extra_of`: a team backend's driver, say), into the same line.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.util import find_spec

# The modules each extra brings that Dailies imports (their import names, not their distributions').
MODULES: dict[str, tuple[str, ...]] = {
    "service": ("fastapi", "uvicorn", "sqlalchemy", "alembic", "av", "numpy", "PIL", "prometheus_client",
                "pydantic_settings"),
    "dashboard": ("streamlit", "pandas", "altair", "fpdf", "sqlalchemy", "alembic", "av", "numpy", "PIL",
                  "pydantic_settings", "opentimelineio"),
    "team": ("psycopg", "boto3", "botocore", "cryptography", "authlib"),
}

# The extras each command needs; a command not listed needs the core alone.
COMMANDS: dict[str, tuple[str, ...]] = {
    "serve": ("service",),
    # The settings list is pydantic-settings, which the service and the dashboard bring.
    "config": ("service",),
    "worker": ("service",),
    "keys": ("service",),
    "budget": ("service",),
    "spend": ("service",),
    "upstream": ("service",),
    "up": ("service", "dashboard"),
    "dashboard": ("dashboard",),
    "report": ("dashboard",),
    "share": ("dashboard",),
    "reel": ("dashboard",),
    "export": ("dashboard",),
}


def install_line(extras: Iterable[str]) -> str:
    return f"pip install 'dailies[{','.join(extras)}]'"


def _installed(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, a module with no spec
        return False


def missing(extras: Iterable[str]) -> tuple[list[str], str] | None:
    """(the extras `extras` lacks, a module missing) when any of them is not installed, else None."""
    lacking, first = [], None
    for extra in extras:
        absent = [module for module in MODULES[extra] if not _installed(module)]
        if absent:
            lacking.append(extra)
            first = first or absent[0]
    return (lacking, first) if first else None


def extra_of(module: str | None, preferred: Iterable[str] = ()) -> str | None:
    """The extra that brings `module` (a dotted name: its top level counts), one of `preferred` (the
    command's own) first; None for a module no extra brings (a bug, not an install to complete)."""
    if not module:
        return None
    top = module.partition(".")[0]
    for extra in [*preferred, *MODULES]:
        if top in MODULES[extra]:
            return extra
    return None


def message(command: str, extras: list[str], module: str) -> str:
    named = " and ".join(extras)
    return (f"dailies {command}: needs the {named} extra{'s' if len(extras) > 1 else ''}, not installed "
            f"(no module {module}): {install_line(extras)}")
