"""A member's journal through a moment when `/dailies/v1/me` does not answer (components/common/identity.py):
no answer now (refused, timed out, 5xx) is not an identity. A key whose project was known keeps
writing into the project; a key never known is told the project's journal cannot be opened; a
service without /me (404) keeps the key's own scope. And the key's own scope joins the project
again after the first adoption, not once per process."""

from __future__ import annotations

import itertools

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from components.common import identity
from dailies.api_keys import fingerprint
from dailies.client import Client
from dailies.journal import Journal, Scope
from dailies.spec.models import Identity

BASE = "http://dailies.test/api/v3"
TASK = "cgt-20260101000000-outage"
_ids = itertools.count()


class Service:
    """/dailies/v1/me as a service answers it: "up" (the key's project), "down" (refused), "503", "404"."""

    def __init__(self, project: str = "alpha", member: str = "ana") -> None:
        self.state = "up"
        self.identity = {"project": project, "member": member}
        self.asked = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.asked += 1
        if self.state == "down":
            raise httpx.ConnectError("connection refused", request=request)
        if self.state == "503":
            return httpx.Response(503, json={"error": {"code": "ServiceUnavailable", "message": "restarting"}})
        if self.state == "404":
            return httpx.Response(404, json={"error": {"code": "NotFound", "message": "no such endpoint"}})
        return httpx.Response(200, json=self.identity)


@pytest.fixture
def key():
    """A key of its own per test (the identity cache is the process's), and its cache id."""
    api_key = f"dk-outage-{next(_ids)}-{id(object())}"
    cache_id = f"{BASE}#{fingerprint(api_key)}"
    yield api_key, cache_id
    identity.forget(cache_id)


def client_of(service: Service, api_key: str) -> Client:
    return Client(base_url=BASE, api_key=api_key, transport=httpx.MockTransport(service), max_retries=0)


def expire(cache_id: str) -> None:
    """As if the identity's few minutes had passed (not `forget`: that is a revocation)."""
    at, answer = identity._answers[cache_id]
    identity._answers[cache_id] = (at - identity.IDENTITY_MAX_AGE_S - 1, answer)


def comments(view: Journal) -> list[str]:
    return [c.body for c in view.comments([TASK]).get(TASK, [])]


@pytest.mark.parametrize("failure", ["down", "503"])
def test_a_member_keeps_writing_into_the_project_while_me_does_not_answer(tmp_path, key, failure):
    api_key, cache_id = key
    shared = Journal(tmp_path / "journal.sqlite3")
    key_scope = Scope.of(BASE, api_key)
    bob = shared.scoped(Scope.of_project(BASE, "alpha", author="bob"))
    service = Service()
    with client_of(service, api_key) as client:
        ana = identity.journal_for(shared, key_scope, identity.identity(client, cache_id))
        assert ana.scope.name == bob.scope.name and ana.author == "ana"
        ana.add_comment(TASK, "before the restart")

        service.state = failure
        expire(cache_id)
        answer = identity.lookup(client, cache_id)
        assert not answer.reached and answer.who == Identity(project="alpha", member="ana")
        during = identity.journal_for(shared, key_scope, answer.who)
        assert during.scope.name == bob.scope.name and during.author == "ana"
        during.add_comment(TASK, "written during the restart")
        during.set_status(TASK, "approved")
        # Bob sees it at once, not after Ana's dashboard restarts.
        assert comments(bob) == ["before the restart", "written during the restart"]
        assert bob.status_of(TASK) == "approved"

        # No answer is asked again within seconds, not kept for the identity's minutes.
        asked = service.asked
        identity.lookup(client, cache_id)
        assert service.asked == asked
        at, unanswered = identity._answers[cache_id]
        identity._answers[cache_id] = (at - identity.UNREACHED_RETRY_S - 1, unanswered)
        service.state = "up"
        assert identity.lookup(client, cache_id).reached and service.asked == asked + 1


def test_a_key_never_answered_is_not_given_its_own_scope_as_if_it_were_no_project(tmp_path, key, monkeypatch):
    api_key, cache_id = key
    service = Service()
    service.state = "down"
    with client_of(service, api_key) as client:
        answer = identity.lookup(client, cache_id)
    assert answer == identity.Answer(None, reached=False, problem=answer.problem) and answer.problem
    # The page says so and stops: nothing is written to a journal the project does not read.
    def page(base: str, api_key: str) -> None:
        import streamlit as st

        from components.common import connection

        st.session_state["settings.base_url"] = base
        st.session_state["settings.api_key"] = api_key
        view = connection.journal()
        st.write(f"opened {view.scope.name}")

    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "data"))
    at = AppTest.from_function(page, args=(BASE, api_key)).run()
    assert not at.exception
    assert any("journal cannot be opened now" in w.value for w in at.warning)
    assert not at.markdown


def test_a_service_without_me_keeps_the_keys_own_scope_for_minutes(tmp_path, key):
    api_key, cache_id = key
    service = Service()
    service.state = "404"
    with client_of(service, api_key) as client:
        answer = identity.lookup(client, cache_id)
        assert answer == identity.Answer(None) and answer.reached
        identity._answers[cache_id] = (identity._answers[cache_id][0] - identity.UNREACHED_RETRY_S - 1, answer)
        asked = service.asked
        identity.lookup(client, cache_id)
        assert service.asked == asked  # an answer: remembered like an identity
    shared = Journal(tmp_path / "journal.sqlite3")
    view = identity.journal_for(shared, Scope.of(BASE, api_key), answer.who)
    assert view.scope.name == Scope.of(BASE, api_key).name


def test_a_revoked_key_forgets_its_project_even_while_the_service_is_down(tmp_path, key):
    api_key, cache_id = key
    service = Service()
    with client_of(service, api_key) as client:
        assert identity.identity(client, cache_id) is not None
        identity.forget(cache_id)  # a listing answered 401 (components/common/data.py)
        service.state = "down"
        assert identity.lookup(client, cache_id) == identity.Answer(None, reached=False,
                                                                      problem=identity._answers[cache_id][1].problem)


def test_rows_in_the_keys_scope_join_the_project_after_the_first_adoption(tmp_path, key, monkeypatch):
    api_key, _ = key
    shared = Journal(tmp_path / "journal.sqlite3")
    key_scope = Scope.of(BASE, api_key)
    who = Identity(project="alpha")
    identity.set_display_name(shared.scoped(key_scope), "Ana")
    first = identity.journal_for(shared, key_scope, who)
    assert first.author.startswith("Ana (key ")
    # Written in the key's own scope after the first adoption (an older release during an outage,
    # another dashboard process): it must reach the project, not wait for this process to restart.
    shared.scoped(Scope(BASE, key_scope.key_fingerprint, author="Ana")).add_comment(TASK, "in the key's scope")
    bob = shared.scoped(Scope.of_project(BASE, "alpha", author="bob"))
    assert comments(bob) == []
    import time

    later = time.monotonic() + identity.IDENTITY_MAX_AGE_S + 1
    monkeypatch.setattr(identity.time, "monotonic", lambda: later)
    again = identity.journal_for(shared, key_scope, who)
    assert comments(bob) == ["in the key's scope"]
    # The display name is read from the key's scope: it stays there.
    assert identity.display_name(shared.scoped(key_scope)) == "Ana" and again.author == first.author
