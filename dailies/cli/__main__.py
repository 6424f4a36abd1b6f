"""`python -m dailies.cli`: the `dailies` command, as `python -m dailies` is."""

from . import main

if __name__ == "__main__":  # not when a spawned child re-imports the parent's main module
    raise SystemExit(main())
