"""Fixtures for the client tests; the test doubles themselves are in client_fakes.py."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from dailies.client import AsyncClient, Client, SystemClock

from .client_fakes import API_KEY, BASE_URL, FakeClock, ScriptedServer


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own ARK_* settings must not leak into the tests."""
    monkeypatch.delenv("ARK_API_KEY", raising=False)
    monkeypatch.delenv("ARK_BASE_URL", raising=False)


@pytest.fixture(autouse=True)
def _no_real_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that reached the real clock's sleep forgot to pass the fake clock."""

    def refuse(*_: object) -> None:
        raise AssertionError("a test slept on the real clock")

    async def arefuse(*_: object) -> None:
        refuse()

    monkeypatch.setattr(SystemClock, "sleep", refuse)
    monkeypatch.setattr(SystemClock, "asleep", arefuse)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make_client(clock: FakeClock):
    """Build a Client on a scripted server, with the fake clock and mid-range jitter."""
    made: list[Client] = []

    def make(server: ScriptedServer, **kwargs: Any) -> Client:
        options: dict[str, Any] = {"api_key": API_KEY, "base_url": BASE_URL, "clock": clock,
                                   "rng": lambda: 0.5, "transport": httpx.MockTransport(server)}
        options.update(kwargs)
        client = Client(**options)
        made.append(client)
        return client

    yield make
    for client in made:
        client.close()


@pytest.fixture
def make_async_client(clock: FakeClock):
    """Build an AsyncClient on a scripted server, with the fake clock and mid-range jitter."""

    def make(server: ScriptedServer, **kwargs: Any) -> AsyncClient:
        options: dict[str, Any] = {"api_key": API_KEY, "base_url": BASE_URL, "clock": clock,
                                   "rng": lambda: 0.5, "transport": httpx.MockTransport(server)}
        options.update(kwargs)
        return AsyncClient(**options)

    return make

