"""The run tracker's protobuf field numbers are the installed Streamlit's, and a tracked page is
quiet only once its run is over."""

from __future__ import annotations

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.SessionStatus_pb2 import SessionStatus

from . import script_runs
from .ui import QUIET_MS, open_page


def test_the_field_numbers_are_streamlits():
    forward = ForwardMsg.DESCRIPTOR.fields_by_name
    assert forward["new_session"].number == script_runs.FORWARD_NEW_SESSION
    assert forward["session_status_changed"].number == script_runs.FORWARD_SESSION_STATUS
    assert forward["script_finished"].number == script_runs.FORWARD_SCRIPT_FINISHED
    assert ForwardMsg.FINISHED_EARLY_FOR_RERUN == script_runs.FINISHED_EARLY_FOR_RERUN
    assert SessionStatus.DESCRIPTOR.fields_by_name["script_is_running"].number == script_runs.STATUS_SCRIPT_IS_RUNNING
    assert BackMsg.DESCRIPTOR.fields_by_name["rerun_script"].number == script_runs.BACK_RERUN_SCRIPT


@pytest.mark.browser
def test_a_page_is_quiet_after_its_run_and_busy_while_a_rerun_is_asked(page, product):
    open_page(page, product, "/tasks")
    assert page.evaluate(script_runs.QUIET, [QUIET_MS, 0])
    runs = page.evaluate("() => ({...window.__dailiesRuns})")
    assert runs["open"] and not runs["running"] and not runs["asked"]
    # A click on a widget asks for a run, which the tracker sees start; quiet again once it is over.
    started = runs["started"]
    page.get_by_role("button", name="Refresh").first.click()
    page.wait_for_function("(n) => window.__dailiesRuns.started > n", arg=started)
    page.wait_for_function(script_runs.QUIET, arg=[QUIET_MS, 0], polling=50)
    assert page.evaluate("() => window.__dailiesRuns.started") > started


@pytest.mark.browser
def test_a_run_stopped_for_a_rerun_is_busy_until_the_next_one_starts(browser):
    """st.rerun: the server ends the run (script_finished FINISHED_EARLY_FOR_RERUN), says the session is
    not running, and only then starts the next run. The page must not look quiet in between."""
    context = browser.new_context()
    try:
        tab = context.new_page()
        tab.goto("about:blank")
        # A tracked socket that never opens: the test hands it the server's messages itself.
        tab.evaluate("() => { window.__socket = new WebSocket('ws://127.0.0.1:9/'); }")

        def receive(*message: int) -> dict:
            return tab.evaluate("""(bytes) => { window.__socket.dispatchEvent(new MessageEvent('message',
                {data: new Uint8Array(bytes).buffer})); return {...window.__dailiesRuns}; }""", list(message))

        def tag(field: int, wire: int) -> int:  # a protobuf field's key
            return field * 8 + wire
        finished = receive(tag(script_runs.FORWARD_SCRIPT_FINISHED, 0), script_runs.FINISHED_EARLY_FOR_RERUN)
        assert finished["asked"]
        status = receive(tag(script_runs.FORWARD_SESSION_STATUS, 2), 2, tag(script_runs.STATUS_SCRIPT_IS_RUNNING, 0), 0)
        assert status["asked"] and not status["running"]  # between the two runs: still busy
        started = receive(tag(script_runs.FORWARD_NEW_SESSION, 2), 0)
        assert not started["asked"] and started["running"]
        # A run that finished for good asks for nothing.
        done = receive(tag(script_runs.FORWARD_SCRIPT_FINISHED, 0), 0)
        assert not done["asked"]
    finally:
        context.close()
