"""The server's side of remembered keys: a browser's opaque token maps to its connection, the file is
0600 and holds no token, entries expire, and a token from elsewhere finds nothing."""

from __future__ import annotations

import stat

from components.common.remembered_keys import MAX_AGE_S, RememberedKeys

BASE = "http://127.0.0.1:8000/api/v3"
KEY = "team-key-0001-alpha-7f3a9c"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def test_a_token_finds_its_connection_and_nothing_else(tmp_path):
    store = RememberedKeys(tmp_path / "remembered_keys.json")
    token = store.remember(BASE, KEY)
    other = store.remember(BASE, "team-key-0002-bravo-41d2e8")
    assert len(token) >= 43 and token != other
    found = store.lookup(token)
    assert (found.base_url, found.api_key) == (BASE, KEY)
    assert KEY not in repr(found)
    assert store.lookup(other).api_key != KEY
    for stranger in (None, "", token[:-1] + ("A" if token[-1] != "A" else "B"), "x" * 500):
        assert store.lookup(stranger) is None


def test_the_file_is_private_and_holds_no_token(tmp_path):
    path = tmp_path / "remembered_keys.json"
    store = RememberedKeys(path)
    token = store.remember(BASE, KEY)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert token not in path.read_text()
    path.chmod(0o644)  # loosened by hand: the next write makes it private again
    store.remember(BASE, KEY)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_forget_removes_the_entry(tmp_path):
    store = RememberedKeys(tmp_path / "remembered_keys.json")
    token = store.remember(BASE, KEY)
    assert store.forget(token) is True
    assert store.lookup(token) is None and len(store) == 0
    assert store.forget(token) is False


def test_entries_expire(tmp_path):
    clock = Clock()
    store = RememberedKeys(tmp_path / "remembered_keys.json", clock=clock)
    token = store.remember(BASE, KEY)
    clock.now += MAX_AGE_S - 1
    assert store.lookup(token) is not None
    clock.now += 2
    assert store.lookup(token) is None
    store.remember(BASE, "another-key-for-the-cleanup")  # a write drops what has expired
    assert len(store) == 1


def test_a_damaged_file_remembers_nothing_rather_than_failing(tmp_path):
    path = tmp_path / "remembered_keys.json"
    path.write_text("{not json")
    store = RememberedKeys(path)
    assert store.lookup("anything") is None
    token = store.remember(BASE, KEY)
    assert store.lookup(token).api_key == KEY


def test_each_data_directory_has_its_own_cookie_name(tmp_path):
    one = RememberedKeys(tmp_path / "one" / "remembered_keys.json").cookie_name
    two = RememberedKeys(tmp_path / "two" / "remembered_keys.json").cookie_name
    assert one != two and one.startswith("dailies_key_")
