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
