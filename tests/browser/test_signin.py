"""A team dashboard with sign-in (OIDC, `st.login`) against a fake provider (tests/browser/oidc_provider.py),
in headless Chromium: every page asks for sign-in first; alice signs in and enters her key in Settings;
a fresh browser where alice signs in has her key without entering it again; bob, signed in, has no key;
signing out ends the session's key; "Forget this key" removes it from alice's record; mallory, whose
account the provider accepts but the dashboard's allow-list (DAILIES_SIGNIN_ALLOWED_DOMAINS) does not
name, is told so and gets nothing else. The key is kept on the server with the (hashed) identity, never
in a browser cookie. Screenshots: signin-*.png.
"""

from __future__ import annotations

import json
import stat

import pytest

from dailies.api_keys import mask
from dailies.service.access import keys as key_store

from .conftest import running_product
from .oidc_provider import FakeProvider
from .ui import open_page, screenshot, settle, until_quiet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

USERS = {"alice": {"sub": "alice-0001", "name": "Alice Archer", "email": "alice@example.com", "email_verified": True},
         "bob": {"sub": "bob-0002", "name": "Bob Baker", "email": "bob@example.com"},
         "mallory": {"sub": "mallory-0003", "name": "Mallory", "email": "mallory@elsewhere.test"}}


@pytest.fixture(scope="module")
def signed(tmp_path_factory, chromium_path):
    data_dir = tmp_path_factory.mktemp("signin")
    key = key_store.create_key(data_dir, "alpha").key
    with FakeProvider(USERS) as provider:
        # The dashboard runs in the data directory: Streamlit reads ./.streamlit/secrets.toml there.
        (data_dir / ".streamlit").mkdir()
        (data_dir / ".streamlit" / "secrets.toml").write_text(provider.secrets_toml())
        with pytest.MonkeyPatch.context() as env:  # the dashboard inherits it: alice and bob, not mallory
            env.setenv("DAILIES_SIGNIN_ALLOWED_DOMAINS", "example.com")
            with running_product(data_dir, "--team") as product:
                yield product, provider, key


def fresh_tab(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    return context, tab


def sign_in(tab, product, provider, who: str) -> None:
    """From a page that asks for sign-in: the button, the provider's round trip, back signed in."""
    provider.signing_in_as = who  # before the click: the provider may answer before the next line
    tab.goto(product.ui_url + "/")
    tab.get_by_role("button", name="Sign in").click()
    tab.get_by_text(f"Signed in as {USERS[who]['name']}", exact=False).wait_for()
    settle(tab)


def body(tab) -> str:
    return tab.evaluate("() => document.body.innerText")


def test_a_signed_in_users_key_follows_them_and_nobody_else(browser, signed):
    product, provider, key = signed
    contexts = []
    try:
        # Not signed in: every page shows the sign-in button and nothing of the dashboard.
        first, tab = fresh_tab(browser)
        contexts.append(first)
        for path in ("/", "/tasks", "/settings"):
            tab.goto(product.ui_url + path)
            tab.get_by_role("button", name="Sign in").wait_for()
            assert tab.locator("[data-testid=stSidebarNav]").count() == 0
            assert "No API key yet" not in body(tab)
        screenshot(tab, "signin-01-asks-to-sign-in")

        # Alice signs in and saves her key in Settings.
        sign_in(tab, product, provider, "alice")
        open_page(tab, product, "/settings")
        tab.get_by_text("You are signed in as Alice Archer", exact=False).wait_for()
        tab.get_by_label("API key").fill(key)
        tab.get_by_role("button", name="Save", exact=True).click()
        tab.get_by_text("Saved with your sign-in", exact=False).wait_for()
        settle(tab)
        assert mask(key) in body(tab)
        screenshot(tab, "signin-02-alice-saved")
        # Kept on the server with alice's hashed identity; no remembered-key cookie in the browser.
        stored = product.data_dir / "dashboard" / "user_keys.json"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        text = stored.read_text()
        assert len(json.loads(text)["entries"]) == 1
        assert not any(clear in text for clear in ("alice-0001", "alice@example.com", "Alice Archer"))
        assert not [c for c in first.cookies() if c["name"].startswith("dailies_key_")]

        # Another browser, alice signs in again: her key is there, not entered again.
        second, other_tab = fresh_tab(browser)
        contexts.append(second)
        sign_in(other_tab, product, provider, "alice")
        open_page(other_tab, product, "/tasks")
        assert "No API key yet" not in body(other_tab)
        open_page(other_tab, product, "/settings")
        assert mask(key) in body(other_tab)
        screenshot(other_tab, "signin-03-alice-second-browser")

        # Bob, signed in in a third browser: no key.
        third, bob_tab = fresh_tab(browser)
        contexts.append(third)
        sign_in(bob_tab, product, provider, "bob")
        open_page(bob_tab, product, "/tasks")
        bob_tab.get_by_text("No API key yet", exact=False).wait_for()
        assert "kept with your sign-in" in body(bob_tab)
        screenshot(bob_tab, "signin-04-bob-no-key")

        # Alice signs out in the second browser: back to the sign-in page, no key there any more.
        other_tab.get_by_role("button", name="Sign out").click()
        other_tab.get_by_role("button", name="Sign in").wait_for()
        for path in ("/tasks", "/settings"):
            other_tab.goto(product.ui_url + path)
            other_tab.get_by_role("button", name="Sign in").wait_for()
            assert mask(key) not in body(other_tab) and "Signed in as" not in body(other_tab)
        screenshot(other_tab, "signin-05-signed-out")

        # Alice forgets the key in the first browser: gone from her record, for every browser.
        open_page(tab, product, "/settings")
        tab.get_by_role("button", name="Forget this key").click()
        tab.get_by_text("Forgotten with your sign-in", exact=False).wait_for()
        settle(tab)
        assert json.loads(stored.read_text())["entries"] == {}
        sign_in(other_tab, product, provider, "alice")
        open_page(other_tab, product, "/tasks")
        other_tab.get_by_text("No API key yet", exact=False).wait_for()
        assert provider.token_requests == 4

        # Mallory: the provider accepts her, the allow-list does not. Nothing but the reason and Sign out.
        fourth, mallory_tab = fresh_tab(browser)
        contexts.append(fourth)
        provider.signing_in_as = "mallory"
        mallory_tab.goto(product.ui_url + "/")
        mallory_tab.get_by_role("button", name="Sign in").click()
        mallory_tab.get_by_text("The account mallory@elsewhere.test is not allowed", exact=False).wait_for()
        for path in ("/tasks", "/settings"):
            mallory_tab.goto(product.ui_url + path)
            mallory_tab.get_by_text("is not allowed on this dashboard", exact=False).wait_for()
            until_quiet(mallory_tab)  # no page list to wait for: there is none
            assert mallory_tab.locator("[data-testid=stSidebarNav]").count() == 0
            assert "No API key yet" not in body(mallory_tab) and "Base URL" not in body(mallory_tab)
        screenshot(mallory_tab, "signin-06-not-allowed")
        mallory_tab.get_by_role("button", name="Sign out").click()
        mallory_tab.get_by_role("button", name="Sign in").wait_for()
    finally:
        for context in contexts:
            context.close()
