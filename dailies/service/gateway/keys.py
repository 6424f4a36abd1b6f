"""The team's upstream keys (a gateway's Ark / ModelArk keys), kept in the service's database,
encrypted at rest with Fernet (AES-128-CBC + HMAC-SHA256, from `cryptography`) under a secret that
lives in the environment (`DAILIES_UPSTREAM_SECRET`), never in the database: a copy of the database
alone hands out no working key.

`dailies upstream add --name N --key K [--priority P]`, `list`, `remove --name N`. Keys given in
`DAILIES_UPSTREAM_KEYS` come first, then these by priority (lower first). A key the upstream answers
401/403 is marked set aside here, so `dailies upstream list` shows it on every machine.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqlalchemy import Engine, select, update

from dailies.api_keys import mask
from dailies.service.db.tables import upstream_keys

SECRET_ENV = "DAILIES_UPSTREAM_SECRET"



@dataclass(frozen=True)
class StoredKey:
    name: str
    priority: int
    masked: str
    set_aside: str | None


def _fernet(secret: str | None = None):
    from cryptography.fernet import Fernet

    if not secret:
        from dailies.config import current

        secret = current().dailies_upstream_secret.get_secret_value()
    if not secret:
        raise ValueError(f"{SECRET_ENV} is not set: the key that encrypts upstream keys at rest. Make one with "
                         "`dailies upstream new-secret` and give it to every API node and worker")
    try:
        return Fernet(secret.encode())
    except ValueError as exc:
        raise ValueError(f"{SECRET_ENV} is not a Fernet key (32 url-safe base64-encoded bytes)") from exc


def new_secret() -> str:
    from cryptography.fernet import Fernet

    return Fernet.generate_key().decode()


def add(engine: Engine, name: str, key: str, priority: int = 100, secret: str | None = None) -> None:
    if not name or ":" in name or "," in name:
        raise ValueError("an upstream key's name is not empty and has no ':' or ','")
    token = _fernet(secret).encrypt(key.encode()).decode()
    with engine.begin() as conn:
        conn.execute(upstream_keys.delete().where(upstream_keys.c.name == name))
        conn.execute(upstream_keys.insert().values(name=name, priority=priority, ciphertext=token, masked=mask(key),
                                                   created_at=int(time.time()), set_aside=None))


def remove(engine: Engine, name: str) -> bool:
    with engine.begin() as conn:
        return conn.execute(upstream_keys.delete().where(upstream_keys.c.name == name)
                            .returning(upstream_keys.c.name)).first() is not None


def listed(engine: Engine) -> list[StoredKey]:
    with engine.connect() as conn:
        rows = conn.execute(select(upstream_keys).order_by(upstream_keys.c.priority, upstream_keys.c.name)).all()
    return [StoredKey(r.name, r.priority, r.masked, r.set_aside) for r in rows]


def load(engine: Engine, secret: str | None = None) -> list[tuple[str, str]]:
    """(name, key) of the stored keys, by priority, decrypted; empty when none are stored."""
    with engine.connect() as conn:
        rows = conn.execute(select(upstream_keys.c.name, upstream_keys.c.ciphertext)
                            .order_by(upstream_keys.c.priority, upstream_keys.c.name)).all()
    if not rows:
        return []
    from cryptography.fernet import InvalidToken

    fernet = _fernet(secret)
    try:
        return [(row.name, fernet.decrypt(row.ciphertext.encode()).decode()) for row in rows]
    except InvalidToken:
        raise ValueError(f"{SECRET_ENV} does not decrypt the upstream keys stored in the database (they were "
                         "stored under another secret)") from None


def mark_set_aside(engine: Engine, name: str, why: str) -> None:
    with engine.begin() as conn:
        conn.execute(update(upstream_keys).where(upstream_keys.c.name == name).values(set_aside=why))
