"""`dailies upstream`: a gateway's keys stored encrypted in the database, read by the service at start
in priority order after the environment's, shown masked with their health, never in clear."""

from __future__ import annotations

import re

import pytest

from dailies.service.api.app import create_app
from dailies.service.gateway.forwarding import UpstreamKey
from dailies.service.settings import Settings

from .running import run

SECRET_KEY_A = "ark-upstream-aaaaaaaaaaaa-0001"
SECRET_KEY_B = "ark-upstream-bbbbbbbbbbbb-0002"


def _service_database(data_dir) -> None:
    """The database `dailies serve` makes in its data directory when it first starts."""
    from dailies.service.db.engine import make_engine

    make_engine(data_dir / "dailies.sqlite3").dispose()


def test_upstream_keys_are_stored_encrypted_and_used_by_priority(tmp_path, monkeypatch):
    data = str(tmp_path)
    _service_database(tmp_path)
    with pytest.raises(SystemExit, match="DAILIES_UPSTREAM_SECRET is not set"):
        run("upstream", "add", "--name", "main", "--key", SECRET_KEY_A, "--data-dir", data)
    code, out, _ = run("upstream", "new-secret")
    secret = out.splitlines()[0]
    monkeypatch.setenv("DAILIES_UPSTREAM_SECRET", secret)
    for name, key, priority in (("spare", SECRET_KEY_B, "200"), ("main", SECRET_KEY_A, "10")):
        assert run("upstream", "add", "--name", name, "--key", key, "--priority", priority, "--data-dir", data)[0] == 0
    code, out, _ = run("upstream", "list", "--data-dir", data)
    assert [line.split()[0] for line in out.splitlines()] == ["main", "spare"]
    assert SECRET_KEY_A not in out and SECRET_KEY_B not in out and "ok" in out
    # Nothing of a key is in the database file in clear.
    database = (tmp_path / "dailies.sqlite3").read_bytes() + b"".join(
        p.read_bytes() for p in tmp_path.glob("dailies.sqlite3-*"))
    for key in (SECRET_KEY_A, SECRET_KEY_B):
        assert not re.search(re.escape(key[5:17]).encode(), database)

    settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, log_requests=False,
                        upstream_url="https://upstream.invalid/api/v3",
                        upstream_keys=[UpstreamKey("env", "ark-from-the-environment-0003")])
    services = create_app(settings, start_background=False).state.services
    try:
        assert [(k.name, k.key) for k in services.generator.keys] == [
            ("env", "ark-from-the-environment-0003"), ("main", SECRET_KEY_A), ("spare", SECRET_KEY_B)]
        services.generator.hooks.on_set_aside("main", "HTTP 401 AuthenticationError")
    finally:
        services.stop()
    code, out, _ = run("upstream", "list", "--data-dir", data)
    assert "set aside: HTTP 401 AuthenticationError" in out.splitlines()[0]
    code, out, _ = run("upstream", "remove", "--name", "spare", "--data-dir", data)
    assert code == 0 and out.startswith("upstream key spare removed")
    assert "spare" not in run("upstream", "list", "--data-dir", data)[1]

    # With the wrong secret, a service cannot start: a configuration error, said plainly.
    monkeypatch.setenv("DAILIES_UPSTREAM_SECRET", run("upstream", "new-secret")[1].splitlines()[0])
    with pytest.raises(ValueError, match="does not decrypt the upstream keys"):
        create_app(Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0,
                            upstream_url="https://upstream.invalid/api/v3"), start_background=False)


def test_an_upstream_key_is_read_from_standard_input(tmp_path, monkeypatch):
    """Without `--key` (or with `--key -`) the key comes from standard input: never in the shell's
    history or the process list."""
    import io

    from dailies.service.db.engine import make_engine
    from dailies.service.gateway import keys as upstream_keys

    monkeypatch.setenv("DAILIES_UPSTREAM_SECRET", run("upstream", "new-secret")[1].splitlines()[0])
    data = str(tmp_path)
    _service_database(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(SECRET_KEY_A + "\n"))
    assert run("upstream", "add", "--name", "piped", "--data-dir", data)[0] == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(SECRET_KEY_B + "\n"))
    assert run("upstream", "add", "--name", "dashed", "--key", "-", "--data-dir", data)[0] == 0
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    with pytest.raises(SystemExit, match="no key given"):
        run("upstream", "add", "--name", "empty", "--data-dir", data)
    engine = make_engine(tmp_path / "dailies.sqlite3")
    try:
        assert dict(upstream_keys.load(engine)) == {"piped": SECRET_KEY_A, "dashed": SECRET_KEY_B}
    finally:
        engine.dispose()
