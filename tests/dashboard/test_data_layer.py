"""The dashboard's data layer (components/common/data.py) in AppTest sessions against a live service whose two
keys are in two projects: listings are cached per connection (base URL + key fingerprint), never
shared between keys, shared by the sessions of one key, and read anew when the reader asks, when a
session is newer than the listing, or when this dashboard changed the connection's tasks.

Every read of the service is counted by wrapping the client's `tasks.list`.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from streamlit.testing.v1 import AppTest

from components.common import connection
from dailies.api_keys import fingerprint
from dailies.client import Client, Tasks
from tests.support.live_service import start_live_service, wait_until_listed

KEY_A = "data-key-0001-alpha-5c1e"
KEY_B = "data-key-0002-bravo-9d07"
V2 = "doubao-seedance-2-0-260128"


def listing_app() -> None:
    """A page that lists through the data layer: `max_age` and a change come from the session."""
    import streamlit as st

    from components.common import connection, data

    if st.session_state.pop("test.changed", False):
        data.changed()
    page = data.list_tasks(max_age=st.session_state.get("test.max_age", data.LIST_MAX_AGE_S), page_size=20)
    st.markdown("ids: " + " ".join(sorted(r.id for r in page.items)))
    st.caption(connection.current().cache_id)


def queued(base_url: str, key: str, count: int) -> set[str]:
    with Client(base_url=base_url, api_key=key) as client:
        return {client.tasks.create({"model": V2, "content": [{"type": "text", "text": f"task {i}"}]}).id
                for i in range(count)}


@dataclass
class TwoProjects:
    base_url: str
    ids: dict[str, set[str]]  # key -> its project's task ids


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    """A service without a worker (its tasks stay queued, all a listing needs), with keys in two projects."""
    svc = start_live_service(tmp_path_factory.mktemp("data-layer"), workers=0,
                             api_keys={KEY_A: "alpha", KEY_B: "bravo"})
    try:
        ids = {KEY_A: queued(svc.base_url, KEY_A, 2), KEY_B: queued(svc.base_url, KEY_B, 1)}
        for key, task_ids in ids.items():
            wait_until_listed(svc.base_url, key, task_ids)
        yield TwoProjects(svc.base_url, ids)
    finally:
        svc.stop()


@pytest.fixture
def reads(monkeypatch, tmp_path, two) -> list[str]:
    """A team dashboard on the service (no key of its own); returns the list of the service's list calls."""
    monkeypatch.setenv("ARK_BASE_URL", two.base_url)
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    calls: list[str] = []
    real_list = Tasks.list

    def counted(self, **query):
        calls.append(repr(query))
        return real_list(self, **query)

    monkeypatch.setattr(Tasks, "list", counted)
    return calls


def session(key: str, **state) -> AppTest:
    at = AppTest.from_function(listing_app, default_timeout=30)
    at.session_state[connection.API_KEY_KEY] = key  # as Settings leaves it after Save
    for name, value in state.items():
        at.session_state[name] = value
    return at.run()


def listed(at: AppTest) -> set[str]:
    assert not at.exception, [e.message for e in at.exception]
    return set(next(m.value for m in at.markdown if m.value.startswith("ids:")).split()[1:])


def test_two_keys_on_one_service_never_share_a_listing(reads, two):
    alpha = session(KEY_A)
    bravo = session(KEY_B)  # the same query, a moment later: another key, another entry
    assert listed(alpha) == two.ids[KEY_A]
    assert listed(bravo) == two.ids[KEY_B]
    alpha.run()
    bravo.run()
    assert listed(alpha) == two.ids[KEY_A] and listed(bravo) == two.ids[KEY_B]
    assert len(reads) == 2  # one read per key; the reruns were served from the cache


def test_the_cache_names_a_connection_by_its_key_fingerprint_never_the_key(reads, two):
    cache_id = session(KEY_A).caption[0].value
    assert fingerprint(KEY_A) in cache_id and KEY_A not in cache_id
    assert session(KEY_B).caption[0].value != cache_id


def test_sessions_of_one_key_share_a_listing_no_older_than_themselves(reads, two):
    first = session(KEY_A)
    second = session(KEY_A)  # a new tab: it does not take a listing read before it opened
    assert len(reads) == 2
    first.run()  # the older tab takes the newer tab's listing
    second.run()
    assert len(reads) == 2
    assert listed(first) == listed(second) == two.ids[KEY_A]


def test_a_reader_may_ask_for_a_listing_read_now(reads, two):
    at = session(KEY_A)
    at.session_state["test.max_age"] = 0
    at.run()
    at.run()
    assert len(reads) == 3


def test_a_change_made_here_drops_that_connections_listings_only(reads, two):
    alpha = session(KEY_A)
    bravo = session(KEY_B)
    alpha.session_state["test.changed"] = True  # as a create, a cancel or a delete from here does
    alpha.run()
    bravo.run()
    assert len(reads) == 3  # alpha read anew; bravo's listing stayed
    assert listed(alpha) == two.ids[KEY_A] and listed(bravo) == two.ids[KEY_B]


def two_listings_app() -> None:
    """A page that lists two queries at once (as Review lists both tiers), then one of them alone."""
    import streamlit as st

    from components.common import data

    pages = data.list_each([{"page_size": 20}, {"page_size": 20, "service_tier": "flex"}],
                           max_age=st.session_state.get("test.max_age", data.LIST_MAX_AGE_S))
    st.markdown("ids: " + " ".join(sorted(r.id for r in pages[0].items)))
    st.markdown(f"flex: {len(pages[1].items)}")
    again = data.list_tasks(page_size=20)  # the same query as the first: the listing just read
    st.markdown("again: " + " ".join(sorted(r.id for r in again.items)))


def test_several_listings_at_once_are_read_once_each_and_cached_like_one(reads, two):
    at = AppTest.from_function(two_listings_app, default_timeout=30)
    at.session_state[connection.API_KEY_KEY] = KEY_A
    at.run()
    assert listed(at) == two.ids[KEY_A]
    assert any(m.value == "flex: 0" for m in at.markdown)  # every task here is on the default tier
    again = next(m.value for m in at.markdown if m.value.startswith("again:"))
    assert set(again.split()[1:]) == two.ids[KEY_A]
    assert sorted(reads) == sorted([repr({"page_size": 20}), repr({"page_size": 20, "service_tier": "flex"})])
    at.run()
    assert len(reads) == 2  # a rerun is served from the cache
    at.session_state["test.max_age"] = 0
    at.run()
    assert len(reads) == 4  # read now: both anew


def test_a_key_the_service_no_longer_takes_loses_its_projects_journal_at_the_next_run():
    """The key's project is kept a few minutes (components/common/identity.py); a listing answered 401 (the
    key revoked, or taken out of its project) forgets it, so the next run reads the key's own scope."""
    import time

    import httpx

    from components.common import data, identity
    from dailies.spec.models import Identity

    revoked = httpx.MockTransport(lambda request: httpx.Response(401, json={"error": {
        "code": "AuthenticationError", "message": "The API key is invalid.", "param": "Authorization"}}))
    cache_id = "http://dailies.test/api/v3#revoked"
    identity._answers[cache_id] = (time.monotonic(), identity.Answer(Identity(project="studio", member="eve")))
    identity._last_known[cache_id] = Identity(project="studio", member="eve")
    with Client(base_url="http://dailies.test/api/v3", api_key="sk-revoked", transport=revoked,
                max_retries=0) as client:
        answer = data._read_or_error((cache_id, 0, ()), client)
    assert type(answer).__name__ == "AuthenticationError"
    assert cache_id not in identity._answers and cache_id not in identity._last_known
