"""How the processes of `dailies` log: text lines (as always), or JSON, one object per line.

A JSON line has `time` (ISO 8601, UTC), `level`, `logger` and `message`; `request_id` while an
HTTP request is answered and `task_id` while a render slot works on a task (the context variables
below, set by the service's request log and by the render slots), and `exception` (the traceback) when
the record carries one. `dailies serve`, `worker`, `dashboard` and `up` take `--log-format` or
DAILIES_LOG_FORMAT (LOG_FORMAT_ENV); the dashboard's Streamlit process reads it from its environment
(dailies/streamlit_logs.py).

The formatter and `configure` are all there is: no import of the service, uvicorn or Streamlit.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path

LOG_FORMAT_ENV = "DAILIES_LOG_FORMAT"
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# The request being answered (the service's RequestLog sets it) and the task a render slot works on.
request_id: ContextVar[str | None] = ContextVar("dailies_request_id", default=None)
task_id: ContextVar[str | None] = ContextVar("dailies_task_id", default=None)


@contextmanager
def for_task(task: str) -> Iterator[None]:
    """Records logged inside carry `task_id` (in this thread or task only)."""
    token = task_id.set(task)
    try:
        yield
    finally:
        task_id.reset(token)


def iso_utc(timestamp: float) -> str:
    """A record's time as ISO 8601 in UTC to the millisecond: 2026-05-01T09:30:00.123Z."""
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line (line breaks in a message or a traceback are escaped).
    `request_id` / `task_id` come from the record (`extra={"task_id": ...}`), else from the context
    variables of the code that logged it."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "time": iso_utc(record.created),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, variable in (("request_id", request_id), ("task_id", task_id)):
            value = getattr(record, name, None) or variable.get()
            if value:
                entry[name] = str(value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def log_format(text: str) -> str:
    """--log-format's (and DAILIES_LOG_FORMAT's) value: text or json, in any case."""
    value = text.strip().lower()
    if value not in FORMATS:
        raise ValueError(f"{text!r} is not a log format ({' or '.join(FORMATS)})")
    return value


def handler(kind: str, filename: Path | str | None = None) -> logging.Handler:
    """A handler writing `kind` lines to `filename` (appended), else to stderr."""
    made: logging.Handler = logging.FileHandler(filename) if filename else logging.StreamHandler()
    made.setFormatter(JsonFormatter() if kind == "json" else logging.Formatter(TEXT_FORMAT))
    return made


def configure(kind: str, filename: Path | str | None = None, level: int = logging.INFO) -> None:
    """The root logger of this process in `kind` lines. JSON also takes Python's warnings and an
    exception nothing caught, which would otherwise be text on stderr."""
    logging.basicConfig(level=level, handlers=[handler(kind, filename)])
    if kind == "json":
        logging.captureWarnings(True)
        sys.excepthook = _log_uncaught


def _log_uncaught(kind, value, traceback) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, traceback)
        return
    logging.getLogger("dailies").critical("uncaught exception", exc_info=(kind, value, traceback))
