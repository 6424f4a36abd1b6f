"""Sign-in fails closed (components/common/signin.py): a secrets file that does not parse, an `[auth]` section
that lacks a setting, or sign-in without an allow-list serve only a message saying what is wrong; an
account the operator's allow-list (e-mail domains, addresses, group claims) does not name is told so and
gets nothing else, whatever the provider accepted."""

from __future__ import annotations

from unittest import mock

import pytest
import streamlit as st
from streamlit import config as st_config
from streamlit.runtime.secrets import Secrets
from streamlit.testing.v1 import AppTest

from components.common import signin

AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "c" * 40, "client_id": "dailies",
        "client_secret": "s3cret", "server_metadata_url": "https://id.example.com/.well-known/openid-configuration"}
ALLOW_ENVS = (signin.ALLOWED_DOMAINS_ENV, signin.ALLOWED_EMAILS_ENV, signin.ALLOWED_GROUPS_ENV, signin.GROUPS_CLAIM_ENV)
ISSUER = "https://id.example.com"


@pytest.fixture(autouse=True)
def no_allow_list(monkeypatch):
    for name in ALLOW_ENVS:
        monkeypatch.delenv(name, raising=False)


def _app() -> None:
    import streamlit as st

    from components.common import signin

    signin.require()
    st.write("the dashboard")


def run(auth: dict | None = None, user: dict | None = None, guest: bool = False) -> AppTest:
    at = AppTest.from_function(_app, default_timeout=30)
    if auth is not None:
        at.secrets["auth"] = auth
    user = user if user is not None else {"is_logged_in": False}
    if guest:
        at.query_params["share"] = "a-share-token"
    if hasattr(at, "user"):  # AppTest gives the script this st.user (Streamlit 1.67 on)
        at.user = user
        return at.run()
    # Streamlit 1.66 (the floor) has no st.user for AppTest: the account's claims are handed over one step later.
    claims = {k: v for k, v in user.items() if k != "is_logged_in"} if user.get("is_logged_in") else None
    with mock.patch.object(signin, "_claims", lambda: claims):
        return at.run()


def served(at: AppTest) -> bool:
    return any(m.value == "the dashboard" for m in at.markdown)


def errors(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error)


def signed_in(email: str, **claims) -> dict:
    return {"is_logged_in": True, "iss": ISSUER, "sub": f"sub-{email}", "name": email.split("@")[0],
            "email": email, **claims}


def test_without_secrets_nothing_changes():
    at = run()
    assert served(at) and not at.error and not at.button


def test_a_secrets_file_that_does_not_parse_serves_nothing(tmp_path, monkeypatch):
    broken = tmp_path / "secrets.toml"
    broken.write_text('[auth\nclient_id = "dailies"\n')
    before = st_config.get_option("secrets.files")
    st_config.set_option("secrets.files", [str(broken)])
    monkeypatch.setattr(st, "secrets", Secrets())  # read afresh, from the broken file
    try:
        assert signin.configured() and signin.current_user() is None
        for guest in (False, True):
            at = run(guest=guest)
            assert not at.exception
            assert not served(at) and "secrets file cannot be read" in errors(at) and "line 1" in errors(at)
    finally:
        st_config.set_option("secrets.files", before)


def test_an_auth_section_that_lacks_settings_names_them_and_serves_nothing(monkeypatch):
    monkeypatch.setenv(signin.ALLOWED_DOMAINS_ENV, "example.com")
    partial = {k: AUTH[k] for k in ("redirect_uri", "cookie_secret", "client_id")}
    at = run(partial, signed_in("alice@example.com"))
    assert not served(at) and not at.button
    assert "lacks client_secret, server_metadata_url" in errors(at)


def test_sign_in_without_an_allow_list_lets_nobody_in():
    at = run(AUTH, signed_in("alice@example.com"))
    assert not served(at) and not at.button
    assert "no account is allowed" in errors(at) and signin.ALLOWED_DOMAINS_ENV in errors(at)


def test_an_account_the_allow_list_does_not_name_gets_nothing_but_a_sign_out(monkeypatch):
    monkeypatch.setenv(signin.ALLOWED_DOMAINS_ENV, "example.com")
    for refused in (signed_in("mallory@elsewhere.test"), signed_in("mallory@evil.example.com"),
                    signed_in("alice@example.com", email_verified=False)):
        at = run(AUTH, refused)
        assert not at.exception
        assert not served(at), refused
        assert "is not allowed on this dashboard" in errors(at)
        assert [b.key for b in at.button] == ["signin.logout"]
    at = run(AUTH, signed_in("alice@example.com", email_verified=True))
    assert served(at) and not at.error
    assert any("Signed in as **alice**" in c.value for c in at.sidebar.caption)


def test_a_share_links_guest_needs_no_account_where_sign_in_works(monkeypatch):
    monkeypatch.setenv(signin.ALLOWED_DOMAINS_ENV, "example.com")
    assert served(run(AUTH, guest=True))
    at = run(AUTH)
    assert not served(at) and [b.key for b in at.button] == ["signin.login"]


@pytest.mark.parametrize("claims, allowed", [
    ({"email": "Alice@Example.COM"}, True),
    ({"email": "alice@example.com", "email_verified": True}, True),
    ({"email": "alice@example.com", "email_verified": False}, False),
    ({"email": "alice@example.com", "email_verified": "false"}, False),
    ({"email": "alice@sub.example.com"}, False),  # a domain is that domain, not its subdomains
    ({"email": "alice@example.com.evil.test"}, False),
    ({"email": "bob@partner.test"}, True),  # named by address
    ({"email": "carol@partner.test"}, False),
    ({"email": "dan@nowhere.test", "roles": ["viewers", "dailies-team"]}, True),
    ({"email": "dan@nowhere.test", "roles": "dailies-team"}, True),
    ({"email": "dan@nowhere.test", "groups": ["dailies-team"]}, False),  # the claim named is "roles"
    ({"email": "dan@nowhere.test", "roles": ["Dailies-Team"]}, False),
    ({}, False),
])
def test_the_allow_list(monkeypatch, claims, allowed):
    monkeypatch.setenv(signin.ALLOWED_DOMAINS_ENV, " @example.com ")
    monkeypatch.setenv(signin.ALLOWED_EMAILS_ENV, "Bob@Partner.test")
    monkeypatch.setenv(signin.ALLOWED_GROUPS_ENV, "dailies-team")
    monkeypatch.setenv(signin.GROUPS_CLAIM_ENV, "roles")
    assert signin.Allowed.from_env().admits(claims) is allowed


def test_groups_are_read_from_the_groups_claim_by_default(monkeypatch):
    monkeypatch.setenv(signin.ALLOWED_GROUPS_ENV, "a1b2c3d4-0000-4000-8000-000000000000")
    assert signin.Allowed.from_env().admits({"groups": ["a1b2c3d4-0000-4000-8000-000000000000"]})
    assert not signin.Allowed.from_env().admits({"email": "x@example.com"})
