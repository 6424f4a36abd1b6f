"""Dailies: compose, run and review AI video generations.

`__version__` is the one place the version is written: the package's metadata (pyproject.toml reads
it), `dailies --version`, the service's OpenAPI document and the client's User-Agent read it here.
"""

__version__ = "0.1.0"
