"""A page section that asks an endpoint only a Dailies service has: on another service (the real Ark)
the section says so and stops; a Dailies service that does not answer now is warned of, and the page
decides whether to go on without the answer."""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from dailies.client import DailiesError, UnsupportedEndpointError

T = TypeVar("T")


class NoAnswer(enum.Enum):
    NOT_DAILIES = "not a Dailies service"
    FAILED = "no answer now"


def ask(call: Callable[[], T], *, elsewhere: str, failing: str) -> T | NoAnswer:
    """`call()`'s answer, or why there is none, said on the page: `elsewhere` on another service,
    `failing` and the error on a Dailies service that does not answer."""
    try:
        return call()
    except UnsupportedEndpointError:
        st.info(elsewhere)
        return NoAnswer.NOT_DAILIES
    except DailiesError as exc:
        st.warning(f"{failing}: {exc}")
        return NoAnswer.FAILED
