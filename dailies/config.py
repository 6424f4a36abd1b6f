"""Every environment variable Dailies reads: one list, with its type, default and meaning.

`Environment` (pydantic-settings) names each variable once; `current()` reads the process's
environment, then a `.env` file in the working directory for what the environment does not set
(an empty value counts as unset), and checks every value. It reads at call time (cached per
snapshot of the variables and of `.env`), so a test's `monkeypatch.setenv` holds at once.

`dailies serve`, `worker`, `dashboard` and `up` call `check_at_start()` before anything else: a bad
value ends them with exit 2 and one line naming the variable. `dailies config` (dailies/cli/config.py)
prints the effective values (`describe()`), where each came from, secrets masked. README's
"Configuration" table lists the same variables (tests/cli/test_config.py checks both ways).

Two variables are read by the typed client itself, which must import without pydantic-settings:
`ARK_API_KEY` and `ARK_BASE_URL` (dailies/client/_base.py, `environment_defaults`). They are listed
here so that `dailies config` shows them and the README documents them; the client stays their reader.
Likewise `FORWARDED_ALLOW_IPS` is uvicorn's own and the `AWS_*` credentials boto3's: only
`AWS_REGION` is read by Dailies (the S3 session's region).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit, urlunsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from .api_keys import mask
from .client._base import DEFAULT_BASE_URL

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

ENV_FILE = ".env"

Theme = Literal["light", "dark"]
THEMES: tuple[str, ...] = ("dark", "light")


def _var(default, name: str, description: str, **kwargs):
    return Field(default, alias=name, description=description, **kwargs)


class Environment(BaseSettings):
    """The variables, by their names (the aliases); attribute names are the same in lower case."""

    model_config = SettingsConfigDict(env_file=ENV_FILE, env_file_encoding="utf-8", extra="ignore",
                                      case_sensitive=True, env_ignore_empty=True, populate_by_name=True,
                                      frozen=True)

    # --- the service ---
    dailies_api_keys: SecretStr = _var(
        SecretStr(""), "DAILIES_API_KEYS",
        "API keys of the local service, `project:key,other-key` (a bare key is a project of its own); "
        "else keys.json in the data directory (`dailies keys create`)")
    dailies_data_dir: Path = _var(Path(".dailies"), "DAILIES_DATA_DIR",
                                  "the data directory (`--data-dir`): keys, SQLite database, results, journal")
    dailies_database_url: SecretStr = _var(
        SecretStr(""), "DAILIES_DATABASE_URL",
        "the service's and the journal's database (`--database-url`); default SQLite in the data directory")
    dailies_storage: str = _var("", "DAILIES_STORAGE",
                                "result files and kept copies (`--storage s3://bucket/prefix`); default a folder "
                                "in the data directory")
    dailies_public_url: str = _var("", "DAILIES_PUBLIC_URL",
                                   "the address clients reach the service at (`--public-url`): base of result URLs "
                                   "in callbacks; default http://HOST:PORT")
    dailies_forwarded_allow_ips: str = _var(
        "", "DAILIES_FORWARDED_ALLOW_IPS",
        "proxies whose X-Forwarded-Proto/-For/-Host are believed (`--forwarded-allow-ips`, `*`: any); "
        "else FORWARDED_ALLOW_IPS, else 127.0.0.1,::1")
    forwarded_allow_ips: str = _var("", "FORWARDED_ALLOW_IPS",
                                    "uvicorn's own name for DAILIES_FORWARDED_ALLOW_IPS (read by uvicorn)")
    dailies_log_format: Literal["text", "json"] = _var(
        "text", "DAILIES_LOG_FORMAT", "the log's format (`--log-format`): text lines or a JSON object per line")
    dailies_prices_file: Path | None = _var(None, "DAILIES_PRICES_FILE",
                                            "a JSON file of negotiated prices replacing the catalog's (docs/prices.md)")
    # --- notifications out (docs/notifications.md) ---
    dailies_smtp_url: SecretStr = _var(
        SecretStr(""), "DAILIES_SMTP_URL",
        "the mail server of e-mail notifications, `smtp://user:password@host:587` (STARTTLS) or `smtps://...:465`; "
        "unset: no e-mail targets")
    dailies_smtp_from: str = _var("Dailies <dailies@localhost>", "DAILIES_SMTP_FROM",
                                  "the From of e-mail notifications")
    dailies_smtp_ca_file: Path | None = _var(None, "DAILIES_SMTP_CA_FILE",
                                             "a CA file the mail server's certificate is checked with; default "
                                             "the system's")
    dailies_notification_window: float = _var(
        30.0, "DAILIES_NOTIFICATION_WINDOW",
        "seconds a notification waits, gathering what follows for the same target into one message", ge=0, le=3600)
    # --- a gateway ---
    dailies_upstream_url: str = _var("", "DAILIES_UPSTREAM_URL",
                                     "a gateway's upstream /api/v3 base (`--upstream`)")
    dailies_upstream_keys: SecretStr = _var(SecretStr(""), "DAILIES_UPSTREAM_KEYS",
                                            "a gateway's upstream keys by priority, `name:key,...`")
    dailies_upstream_secret: SecretStr = _var(SecretStr(""), "DAILIES_UPSTREAM_SECRET",
                                              "encrypts upstream keys kept in the database (`dailies upstream add`)")
    # --- the dashboard ---
    dailies_dashboard_team: bool = _var(False, "DAILIES_DASHBOARD_TEAM",
                                        "a dashboard shared by a team, without a key of its own (`--team`): "
                                        "1/true/yes/on or 0/false/no/off")
    dailies_dashboard_url: str = _var("", "DAILIES_DASHBOARD_URL",
                                      "the dashboard's address in share links (`dailies share create --dashboard-url`)")
    dailies_dashboard_trusted_hosts: str = _var(
        "", "DAILIES_DASHBOARD_TRUSTED_HOSTS",
        "origins a shared dashboard's server may contact besides the configured service, comma-separated")
    dailies_theme: Theme = _var("dark", "DAILIES_THEME",
                                "the dashboard's theme (`--theme`): dark or light; .streamlit/config.toml's "
                                "[theme] or STREAMLIT_THEME_* win over it")
    dailies_signin_allowed_domains: str = _var("", "DAILIES_SIGNIN_ALLOWED_DOMAINS",
                                               "sign-in: e-mail domains allowed, comma-separated")
    dailies_signin_allowed_emails: str = _var("", "DAILIES_SIGNIN_ALLOWED_EMAILS",
                                              "sign-in: e-mail addresses allowed, comma-separated")
    dailies_signin_allowed_groups: str = _var("", "DAILIES_SIGNIN_ALLOWED_GROUPS",
                                              "sign-in: identity-provider groups allowed, comma-separated")
    dailies_signin_groups_claim: str = _var("groups", "DAILIES_SIGNIN_GROUPS_CLAIM",
                                            "sign-in: the ID token's claim that lists a person's groups")
    # --- the client (read by dailies/client/_base.py itself) and S3 ---
    ark_api_key: SecretStr = _var(SecretStr(""), "ARK_API_KEY",
                                  "the client's, the CLI's and one person's dashboard's key (`--api-key`)")
    ark_base_url: str = _var(DEFAULT_BASE_URL, "ARK_BASE_URL",
                             "the service the client, the CLI and the dashboard call (`--base-url`)")
    aws_region: str = _var("", "AWS_REGION",
                           "the S3 region of `--storage s3://...`; other AWS_* settings are boto3's own")

    @field_validator("dailies_log_format", "dailies_theme", mode="before")
    @classmethod
    def _a_word(cls, value):
        """` JSON ` is json, as `--log-format` takes it (log_format.log_format)."""
        return value.strip().lower() if isinstance(value, str) else value


# Secrets that are lists of `name:key` (each key masked, names shown) and URLs (the password masked).
_KEY_LISTS = {"DAILIES_API_KEYS", "DAILIES_UPSTREAM_KEYS"}
_URLS = {"DAILIES_DATABASE_URL", "DAILIES_SMTP_URL"}

Source = Literal["environment", ".env", "default"]


class ConfigError(ValueError):
    """A variable holds a value Dailies cannot use; the message names it (one line)."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name


def names() -> list[str]:
    """Every variable, in the order listed."""
    return [info.alias for info in Environment.model_fields.values() if info.alias]


def _dotenv(path: Path) -> dict[str, str]:
    from dotenv import dotenv_values

    try:
        return {k: v for k, v in dotenv_values(path).items() if v is not None}
    except OSError:
        return {}


def _env_file_stamp() -> tuple:
    try:
        stat = os.stat(ENV_FILE)
    except OSError:
        return ()
    return (os.path.abspath(ENV_FILE), stat.st_mtime_ns, stat.st_size)


_cache: dict[tuple, Environment] = {}


def current() -> Environment:
    """The settings now (environment, then .env, then defaults); ConfigError naming the variable
    when one is invalid. Cheap on repeat: cached per snapshot of the variables and of .env."""
    key = (tuple(os.environ.get(name) for name in names()), _env_file_stamp())
    found = _cache.get(key)
    if found is None:
        try:
            found = Environment()
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0]) if error.get("loc") else "settings"
            raise ConfigError(name, f"{error['msg']} (got {_shown_input(name, error.get('input'))})") from None
        if len(_cache) > 64:
            _cache.clear()
        _cache[key] = found
    return found


def _shown_input(name: str, value) -> str:
    info = _field_by_name(name)
    if info is not None and info.annotation is SecretStr:
        return "a value, not shown"
    return repr(value)


def _field_by_name(name: str) -> FieldInfo | None:
    return next((info for info in Environment.model_fields.values() if info.alias == name), None)


def load_env_file() -> list[str]:
    """Put what `.env` sets, and the environment does not, into this process's environment, so that
    what reads the environment itself (the client, uvicorn, boto3, the dashboard's process) sees it
    too. Every name of the file, not only the listed ones (AWS credentials, STREAMLIT_*). The names put."""
    put = []
    for name, value in _dotenv(Path(ENV_FILE)).items():
        if value and not os.environ.get(name):
            os.environ[name] = value
            put.append(name)
    return put


def check_at_start(command: str) -> str | None:
    """For `dailies serve`, `worker`, `dashboard` and `up`: `.env` loaded (load_env_file), then every
    variable checked. The line to print (and exit 2 after) when one is invalid, else None."""
    load_env_file()
    try:
        current()
    except ConfigError as exc:
        return f"dailies {command} cannot start: {exc}"
    return None


def source_of(name: str, environ: Mapping[str, str] | None = None, dotenv: Mapping[str, str] | None = None) -> Source:
    environ = os.environ if environ is None else environ
    if environ.get(name):
        return "environment"
    if (dotenv if dotenv is not None else _dotenv(Path(ENV_FILE))).get(name):
        return ".env"
    return "default"


def shown(name: str, value) -> str:
    """A value as `dailies config` prints it: secrets masked (api_keys.mask), passwords of URLs hidden."""
    if isinstance(value, SecretStr):
        value = value.get_secret_value()
        if not value:
            return ""
        if name in _KEY_LISTS:
            return ",".join(_masked_entry(entry.strip()) for entry in value.split(",") if entry.strip())
        if name in _URLS:
            return _masked_url(value)
        return mask(value)
    if isinstance(value, bool):
        return str(value).lower()
    return "" if value is None else str(value)


def _masked_entry(entry: str) -> str:
    label, sep, key = entry.rpartition(":")
    return f"{label}{sep}{mask(key)}"


def _masked_url(url: str) -> str:
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        host = parts.hostname or ""
        netloc = f"{parts.username or ''}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:
        return mask(url)


@dataclass(frozen=True)
class Row:
    name: str
    value: str
    source: Source
    secret: bool
    description: str


def describe() -> list[Row]:
    """Each variable's effective value (masked when secret), where it came from, and its meaning."""
    settings = current()
    dotenv = _dotenv(Path(ENV_FILE))
    rows = []
    for attribute, info in Environment.model_fields.items():
        name = info.alias or attribute.upper()
        rows.append(Row(name, shown(name, getattr(settings, attribute)), source_of(name, dotenv=dotenv),
                        info.annotation is SecretStr, info.description or ""))
    return rows
