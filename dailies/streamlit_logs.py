"""`python -m dailies.streamlit_logs run SCRIPT [flags]`: `streamlit run`, logging as DAILIES_LOG_FORMAT says.

`dailies dashboard --log-format json` and `dailies up --log-format json` start the dashboard's Streamlit
process through this module (dailies/launcher.py, `streamlit_command`), with DAILIES_LOG_FORMAT=json in
its environment. Then:

- our loggers (dailies, components, dashboard) go through the root logger, in JSON on stderr;
- Streamlit's loggers, which Streamlit gives a handler of its own each (`streamlit.logger.get_logger`,
  not propagating, with the `logger.messageFormat` %-format, which cannot escape a message into JSON),
  get a JSON handler instead: `streamlit.logger.setup_formatter` is replaced, and Streamlit calls it
  for every logger it makes and again when its configuration is read;
- the lines Streamlit prints rather than logs (the "You can now view your Streamlit app" welcome with
  its URLs, static-folder warnings: `streamlit.cli_util.print_to_cli`, on stdout) become log records
  of the logger `streamlit.cli`, one per line, empty lines left out.

Not covered: what a C library writes straight to the file descriptors, and a Python that dies before
this module has run. With any other DAILIES_LOG_FORMAT it is `streamlit run` unchanged.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from .log_format import JsonFormatter, configure, log_format


def json_for_streamlit() -> None:
    """Streamlit's loggers and its printed lines in JSON on stderr (see the module's docstring)."""
    import streamlit.cli_util
    import streamlit.logger

    def setup_formatter(logger: logging.Logger) -> None:
        previous = getattr(logger, "streamlit_console_handler", None)
        if previous is not None:
            logger.removeHandler(previous)
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        logger.streamlit_console_handler = handler  # type: ignore[attr-defined]  # where Streamlit looks
        logger.addHandler(handler)

    streamlit.logger.setup_formatter = setup_formatter
    streamlit.logger.update_formatter()  # the loggers made while Streamlit was imported

    printed = logging.getLogger("streamlit.cli")
    pending: list[str] = []

    def print_to_cli(message: str, **kwargs: Any) -> None:
        pending.append(str(message))
        if kwargs.get("nl", True):
            line = "".join(pending).strip()
            pending.clear()
            if line:
                printed.info(line)

    streamlit.cli_util.print_to_cli = print_to_cli


def main() -> None:
    try:
        from .config import current

        kind = log_format(current().dailies_log_format)
    except ValueError:
        kind = "text"
    if kind == "json":
        configure("json")
        json_for_streamlit()
    from streamlit.web.cli import main as streamlit_main

    sys.argv = ["streamlit", *sys.argv[1:]]
    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    main()
