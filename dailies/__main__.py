"""`python -m dailies`: the `dailies` command (dailies/cli)."""

from .cli import main

if __name__ == "__main__":  # not when a spawned child re-imports the parent's main module
    raise SystemExit(main())
