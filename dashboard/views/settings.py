"""Settings: which service to talk to and with which key, remembered for this browser, with a
connection test. The key is never shown whole; a base URL the client would refuse is never saved."""

from __future__ import annotations

import streamlit as st

from components.common import actions, catalogs, connection, identity, signin
from components.common.state_keys import API_KEY_KEY, CATALOG_KEY
from components.settings import notifications
from components.settings.key_check import check_key
from components.settings.state_keys import (
    API_KEY_FIELD,
    BASE_URL_FIELD,
    DISPLAY_NAME_KEY,
    FORGET_KEY,
    FORM_KEY,
    OUTCOME_KEY,
    SAVE_KEY,
    SHOWN_KEY,
    TEST_KEY,
)

st.header("Settings")
conn = connection.current()
user = signin.current_user()
if user is not None:
    st.info(f"You are signed in as **{user.name or 'unnamed'}**. Your key is kept with your sign-in on this "
            "dashboard's server: any browser where you sign in has it, nobody else does, until you press "
            "**Forget this key**. Signing out ends it in this browser.", icon=":material/badge:")
elif connection.team_mode():
    st.info("This dashboard is shared by a team: it has no key of its own. Enter **your** key below. It is "
            "remembered for this browser only (reloads, links and new tabs keep it; other browsers never get "
            "it) until you press **Forget this key**.", icon=":material/group:")
if conn.problem is None:
    # The address alone says where, not what answers there (Test connection asks the service).
    where = "a service on this machine" if conn.is_local else "a remote service"
    st.write(f"Connected to **{conn.base_url}** — {where}. API key: `{conn.masked_key}`.")
else:
    connection.show_problem(conn, link=False)  # this is Settings: the form is right below

# Save and Forget act in callbacks, before this page is drawn: the page, and the Base URL field, then
# show the connection as they left it. The field is keyed and filled from session state whenever the
# address in use changes. (A field keyed by its `value` was rebuilt when the address changed, which
# dropped a correction typed into it, and `clear_on_submit` put back the address from before the save.)
FALLBACK = "no key (this dashboard is shared)" if connection.team_mode() else "the dashboard's own connection"


def _save() -> None:
    typed_url, typed_key = st.session_state[BASE_URL_FIELD], st.session_state[API_KEY_FIELD].strip() or None
    st.session_state[API_KEY_FIELD] = ""  # the field never keeps a key; a refused address stays, to be mended
    problem = connection.base_url_refused(typed_url)
    checked = check_key(connection.normalized(typed_url), typed_key, connection.shared()) \
        if typed_key and problem is None else None
    if checked is not None and checked.refused:
        st.session_state[OUTCOME_KEY] = ("save", "error", f"The service at {connection.normalized(typed_url)} "
                                         "refused this API key (401): nothing was saved. Check the key.")
        return
    problem = problem or connection.save(typed_url, typed_key)
    signed_in = signin.current_user() is not None
    unchecked = (f" The service did not answer, so the key is not checked yet ({checked.message})"
                 if checked is not None and not checked.reached else "")
    st.session_state[OUTCOME_KEY] = (
        ("save", "error", f"Base URL: {problem}. Nothing was saved.") if problem
        else ("save", "warning", "Saved, with no key for this address: the dashboard's own key goes only to its "
              "own service. Enter your key for it.") if connection.own_key_withheld()
        else ("save", "warning" if unchecked else "success",
              ("Saved with your sign-in: any browser where you sign in has it." if signed_in
               else "Saved, and remembered in this browser: reloads, links and new tabs keep it.") + unchecked))


def _forget() -> None:
    connection.forget()
    st.session_state[OUTCOME_KEY] = ("forget", "success", f"Forgotten with your sign-in: back to {FALLBACK}."
                                     if signin.current_user() is not None
                                     else f"Forgotten in this browser and on the server: back to {FALLBACK}.")


def _show_outcome(action: str) -> None:
    """Say what the button just pressed did, under it, once."""
    outcome = st.session_state.get(OUTCOME_KEY)
    if outcome is not None and outcome[0] == action:
        del st.session_state[OUTCOME_KEY]
        getattr(st, outcome[1])(outcome[2])


# (A field off the page, on another page, loses its state: it is filled again too.)
if st.session_state.get(SHOWN_KEY) != conn.base_url or BASE_URL_FIELD not in st.session_state:
    st.session_state[BASE_URL_FIELD] = st.session_state[SHOWN_KEY] = conn.base_url
st.session_state.setdefault(API_KEY_FIELD, "")
with st.form(FORM_KEY):
    st.text_input("Base URL", key=BASE_URL_FIELD,
                  help="Ends in /api/v3. Volcengine Ark: https://ark.cn-beijing.volces.com/api/v3, "
                       "BytePlus ModelArk: https://ark.ap-southeast.bytepluses.com/api/v3")
    st.text_input("API key", key=API_KEY_FIELD, type="password", placeholder="leave empty to keep the current key")
    actions.form_submit_button("Save", key=SAVE_KEY, on_click=_save)
_show_outcome("save")

if connection.is_remembered() or st.session_state.get(API_KEY_KEY):
    actions.button("Forget this key", key=FORGET_KEY, icon=":material/logout:", on_click=_forget,
                   help=f"Removes the key from this browser and from the dashboard's server; back to {FALLBACK}.")
_show_outcome("forget")

st.selectbox("Model ids this service speaks", catalogs.CHOICES, key=CATALOG_KEY,
             format_func=catalogs.CHOICE_LABELS.get, persist_state="session",
             help="Compose offers the model ids of this catalog. Volcengine and BytePlus hosts are recognised from "
                  "the address; say here which one a proxy or gateway speaks.")
info = catalogs.service_info(connection.client())
if info is not None and info.upstream is not None:
    keys = ", ".join(f"{k.name} {'ok' if k.healthy else 'set aside'}" for k in info.upstream.keys) or "none"
    st.info(f"This service is a Dailies **gateway** to {info.upstream.region or 'another service'} "
            f"({info.upstream.url}); upstream keys: {keys}.")
region = catalogs.region_for(conn.base_url, catalogs.current_choice(),
                             info.upstream.region if info is not None and info.upstream is not None else None)
st.caption(f"Compose offers {'both catalogs' if region is None else f'the {region.value} catalog'} here.")

if st.button("Test connection", key=TEST_KEY, disabled=not conn.usable):
    tested = check_key(conn.base_url, conn.api_key or "", connection.shared())
    (st.success if tested.ok else st.error)(tested.message)

st.subheader("Who you are")
answer = identity.lookup(connection.client(), conn.cache_id) if conn.usable else identity.Answer(None)
who = answer.who
if not answer.reached:
    st.warning(f"The service does not answer who this key is right now ({answer.problem}). "
               + ("Your project, as it last answered, is used meanwhile." if who is not None else
                  "Review, Tasks and Compose wait until it does."))
if who is not None:
    st.write(f"This key is **{who.member or 'unnamed'}** in project **{who.project}** (the service says so). "
             "Prompts, statuses, stars, comments and kept videos are the project's: every member sees them, "
             "each with who wrote it; other projects see none of it.")
if (who is None and answer.reached) or (who is not None and not who.member):
    own = connection.key_journal()
    st.text_input("Your name", value=identity.display_name(own), key=DISPLAY_NAME_KEY,
                  max_chars=60, placeholder=signin.display_name() or "shown on your statuses and comments",
                  on_change=lambda: connection.rename_me(st.session_state[DISPLAY_NAME_KEY]),
                  help="This service does not say whose a key is: the name you give here signs your statuses, "
                       "stars and comments. It is remembered with your key.")

if conn.usable and who is not None:
    notifications.render(connection.client(), connection.journal().author)

st.subheader("Local data")
if who is None and answer.reached:
    st.write("Prompts you submitted, your statuses, stars and comments, and the videos you kept are recorded for "
             "this connection (service address and key) only: another key on this dashboard has a journal of "
             "its own.")
st.caption(f"Data folder: `{connection.data_dir().resolve()}`.")
