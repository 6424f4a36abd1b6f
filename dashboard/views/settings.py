"""Settings: which service to talk to, with a connection test. The key is never shown whole."""

from __future__ import annotations

import streamlit as st

from components import connection
from dailies.client import APIConnectionError, APIStatusError, AuthenticationError, Client, DailiesError

st.header("Settings")
conn = connection.current()
where = "the local Dailies service (preview renderer)" if conn.is_local else "a remote service"
st.write(f"Connected to **{conn.base_url}** — {where}. API key: `{conn.masked_key}`.")

with st.form("settings.form"):
    base_url = st.text_input("Base URL", value=conn.base_url,
                             help="Ends in /api/v3. Volcengine Ark: https://ark.cn-beijing.volces.com/api/v3, "
                                  "BytePlus ModelArk: https://ark.ap-southeast.bytepluses.com/api/v3")
    api_key = st.text_input("API key", value="", type="password",
                            placeholder="leave empty to keep the current key")
    saved = st.form_submit_button("Save")
if saved:
    problem = connection.base_url_problem(base_url)
    if problem:
        st.error(f"Base URL: {problem}. Nothing was saved.")
    else:
        st.session_state[connection.BASE_URL_KEY] = base_url.strip().rstrip("/")
        if api_key.strip():
            st.session_state[connection.API_KEY_KEY] = api_key.strip()
        st.success("Saved for this browser session.")
        conn = connection.current()

if st.button("Test connection", key="settings.test"):
    try:
        with Client(base_url=conn.base_url, api_key=conn.api_key, timeout=10, max_retries=0) as probe:
            page = probe.tasks.list(page_size=1)
        st.success(f"Connected: {page.total} task(s) in the last 7 days on the default tier.")
    except AuthenticationError:
        st.error("The service refused the API key (401). Check the key.")
    except APIStatusError as exc:
        st.error(f"The service answered {exc.status_code}: {exc.message}")
    except APIConnectionError as exc:
        st.error(f"Could not reach {conn.base_url}: {exc}")
    except DailiesError as exc:
        st.error(str(exc))

st.subheader("Local data")
st.write(f"Journal, kept videos and uploads live in `{connection.data_dir().resolve()}`.")
