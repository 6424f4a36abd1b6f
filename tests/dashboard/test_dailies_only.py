"""Sections that ask an endpoint only a Dailies service has (components/common/dailies_only.py): on
another service the section says so and stops, on a Dailies service that fails now the page is warned
with the error and goes on. Through the typed client against answers the two kinds of service give."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest


def page(status: int) -> None:
    import httpx
    import streamlit as st

    from components.common import dailies_only
    from dailies.client import Client

    def answer(request: httpx.Request) -> httpx.Response:
        if status == 200:
            return httpx.Response(200, json={"sessions": []})
        return httpx.Response(status, json={"error": {"code": "X", "message": f"status {status}"}})

    client = Client(base_url="http://dailies.test/api/v3", api_key="k", transport=httpx.MockTransport(answer),
                    max_retries=0)
    listed = dailies_only.ask(client.live_sessions, elsewhere="Not here.", failing="No list now")
    st.write(f"answer: {listed!r}")


@pytest.mark.parametrize(("status", "said", "kind", "answer"), [
    (404, "Not here.", "info", "answer: <NoAnswer.NOT_DAILIES: 'not a Dailies service'>"),
    (503, "No list now: ", "warning", "answer: <NoAnswer.FAILED: 'no answer now'>"),
    (200, None, None, "answer: []"),
])
def test_a_dailies_only_section_says_why_it_has_no_answer(status, said, kind, answer):
    at = AppTest.from_function(page, args=(status,)).run()
    assert not at.exception
    assert [m.value for m in at.markdown] == [answer]
    if kind is None:
        assert not at.info and not at.warning
    else:
        shown = [m.value for m in getattr(at, kind)]
        assert len(shown) == 1 and shown[0].startswith(said), shown
        assert kind != "warning" or "status 503" in shown[0]  # the error itself, for whoever reads it

