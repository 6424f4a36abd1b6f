"""components/common/actions.py: a button's action runs once per click, also when the click reaches a
Streamlit session that never registered its callback (the dashboard's process restarted under the page)."""

from __future__ import annotations

from dataclasses import replace

from streamlit.testing.v1 import AppTest


def page():
    import streamlit as st

    from components.common import actions

    st.session_state.setdefault("runs", [])

    def act(what: str) -> None:
        st.session_state.runs.append(what)

    def start_afresh() -> None:  # as a new connection does: the session's state cleared
        for name in list(st.session_state.keys()):
            if name != "runs":
                del st.session_state[name]
        act("afresh")

    actions.button("Act", key="act", on_click=act, args=("act",))
    actions.button("Afresh", key="afresh", on_click=start_afresh)
    with st.form("form"):
        st.text_input("Name", key="name")
        actions.form_submit_button("Save", key="save", on_click=act, args=("save",))
    st.write(f"runs: {st.session_state.runs}")


def opened() -> AppTest:
    at = AppTest.from_function(page, default_timeout=30)
    at.run()
    assert not at.exception
    return at


def lose_callbacks(at: AppTest) -> None:
    """What a new session knows of the page's callbacks before its first run: none (Streamlit's own
    registry of widgets, their callbacks taken out, as a restarted process has it)."""
    registry = at.session_state._state._state._new_widget_state.widget_metadata
    for widget_id, metadata in list(registry.items()):
        registry[widget_id] = replace(metadata, callback=None, callback_args=None)


def test_a_click_runs_its_action_once():
    at = opened()
    at.button(key="act").click().run()
    at.button(key="save").click().run()
    at.button(key="afresh").click().run()  # the action clears the state: not taken for a lost click
    assert at.session_state.runs == ["act", "save", "afresh"]
    at.run()  # a run without a click acts on nothing
    assert at.session_state.runs == ["act", "save", "afresh"] and not at.exception


def test_a_click_whose_callback_streamlit_lost_still_acts_once():
    at = opened()
    lose_callbacks(at)
    at.button(key="act").click().run()
    assert at.session_state.runs == ["act"] and not at.exception
    assert at.markdown[-1].value == "runs: ['act']"  # the page ran again with the action done
    lose_callbacks(at)
    at.button(key="save").click().run()
    assert at.session_state.runs == ["act", "save"]
