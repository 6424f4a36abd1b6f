"""The server's side of signed-in users' keys (components/common/signin.py): a user (issuer + subject) finds
their connection and nobody else's, the file is 0600 and names nobody, records do not expire, "Forget
this key" deletes the user's; and without an [auth] section in the secrets sign-in is simply off."""

from __future__ import annotations

import stat

from components.common import identity, signin
from components.common.signin import User, UserKeys
from dailies.journal import Journal, Scope

BASE = "http://127.0.0.1:8000/api/v3"
KEY = "team-key-0001-alpha-7f3a9c"
ISSUER = "https://id.example.com/realms/team"
ALICE = User(ISSUER, "3f1e0c5a-alice-subject", "Alice Example")


def test_a_user_finds_their_connection_and_nobody_else_does(tmp_path):
    store = UserKeys(tmp_path / "user_keys.json")
    store.save(ALICE, BASE, KEY)
    found = store.lookup_user(ALICE)
    assert (found.base_url, found.api_key) == (BASE, KEY)
    # The same person renamed by the provider is still the same user; the name plays no part.
    assert store.lookup_user(User(ISSUER, ALICE.subject, "Alice New Name")).api_key == KEY
    for stranger in (User(ISSUER, "bob-subject", "Bob"), User("https://other.example.com", ALICE.subject, "Alice")):
        assert store.lookup_user(stranger) is None
    store.save(ALICE, BASE, "team-key-0003-alpha-replaced")  # a new save replaces the user's one record
    assert store.lookup_user(ALICE).api_key == "team-key-0003-alpha-replaced" and len(store) == 1


def test_identities_are_hashed_and_the_file_is_private(tmp_path):
    path = tmp_path / "user_keys.json"
    store = UserKeys(path)
    store.save(ALICE, BASE, KEY)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    text = path.read_text()
    for clear in (ALICE.subject, ISSUER, ALICE.name, "id.example.com"):
        assert clear not in text
    assert ALICE.digest in text and len(ALICE.digest) == 64
    assert User(ISSUER, "other", "").digest != ALICE.digest
    # Issuer and subject are separated: ("a", "bc") and ("ab", "c") are different people.
    assert User("a", "bc").digest != User("ab", "c").digest
    path.chmod(0o644)  # loosened by hand: the next write makes it private again
    store.save(ALICE, BASE, KEY)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_forget_removes_the_users_record_only(tmp_path):
    store = UserKeys(tmp_path / "user_keys.json")
    bob = User(ISSUER, "bob-subject", "Bob")
    store.save(ALICE, BASE, KEY)
    store.save(bob, BASE, "team-key-0002-bravo-41d2e8")
    assert store.forget_user(ALICE) is True
    assert store.lookup_user(ALICE) is None
    assert store.lookup_user(bob).api_key == "team-key-0002-bravo-41d2e8"
    assert store.forget_user(ALICE) is False


def test_records_do_not_expire(tmp_path):
    now = [1_800_000_000.0]
    store = UserKeys(tmp_path / "user_keys.json", clock=lambda: now[0])
    store.save(ALICE, BASE, KEY)
    now[0] += 10 * 365 * 24 * 3600
    assert store.lookup_user(ALICE).api_key == KEY


def test_without_secrets_sign_in_is_off():
    # The test run has no secrets.toml (nor an [auth] section): no exception, nobody signed in.
    assert signin.configured() is False
    assert signin.current_user() is None
    assert signin.display_name() == ""
    signin.require()  # does nothing, stops nothing


def test_the_providers_name_signs_when_the_person_gave_none(tmp_path):
    shared = Journal(tmp_path / "journal.sqlite3")
    scope = Scope.of("https://ark.example.com/api/v3", KEY)
    assert identity.journal_for(shared, scope, None, fallback_name="Alice Example").scope.author == "Alice Example"
    assert identity.journal_for(shared, scope, None).scope.author.startswith("key ")
    identity.set_display_name(shared.scoped(scope), "Ali")  # a name given in Settings comes first
    assert identity.journal_for(shared, scope, None, fallback_name="Alice Example").scope.author == "Ali"


def test_a_share_links_guest_is_not_asked_to_sign_in():
    """Where sign-in is set up, every page asks to sign in, except a share link's guest page: a guest has
    no account, and the share itself is checked there (dailies/journal/shares.py)."""
    from streamlit.testing.v1 import AppTest

    def page() -> None:
        import streamlit as st

        from components.common import signin

        real = signin.setup, signin.current_user
        signin.setup = lambda: signin.Setup(True)  # as with an [auth] section and an allow-list
        signin.current_user = lambda: None  # nobody signed in
        try:
            signin.require()
        finally:  # this process runs other tests' pages next
            signin.setup, signin.current_user = real
        st.write("the guest page")

    member = AppTest.from_function(page).run()
    assert [b.key for b in member.button] == ["signin.login"] and not member.markdown
    guest = AppTest.from_function(page)
    guest.query_params["share"] = "a-share-token"
    guest.run()
    assert not guest.button and [m.value for m in guest.markdown] == ["the guest page"]
    from components.common import signin

    assert not signin.configured()  # restored


def test_a_key_without_a_member_name_cannot_sign_as_a_member_of_its_project(tmp_path):
    """The project's journal keys stars and statuses by name: a key the service names no member for
    signs with its fingerprint beside the name given, so typing "alice" does not make one alice."""
    from dailies.spec.models import Identity

    shared = Journal(tmp_path / "journal.sqlite3")
    scope = Scope.of("https://dailies.example/api/v3", KEY)
    tag = f"key {scope.key_fingerprint[:8]}"
    identity.set_display_name(shared.scoped(scope), "alice")
    unnamed = identity.journal_for(shared, scope, Identity(project="studio"))
    assert unnamed.scope.author == f"alice ({tag})"
    named = identity.journal_for(shared, scope, Identity(project="studio", member="alice"))
    assert named.scope.author == "alice"  # the service's member name, as it is
    identity.set_display_name(shared.scoped(scope), "")
    assert identity.journal_for(shared, scope, Identity(project="studio")).scope.author == tag
    # Stars by name: the unnamed key's never replace alice's.
    named.rate("cgt-1", 5)
    unnamed.rate("cgt-1", 1)
    assert named.ratings(["cgt-1"])["cgt-1"] == {"alice": 5, f"alice ({tag})": 1}
