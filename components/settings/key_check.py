"""Asking the service whether a key works, for Save (a refused key is not saved) and Test connection:
one request, a page of one task, said in words. No Streamlit here."""

from __future__ import annotations

from dataclasses import dataclass

from components.common import outbound
from dailies.client import APIConnectionError, APIStatusError, AuthenticationError, Client, DailiesError

TIMEOUT_S = 10


@dataclass(frozen=True)
class KeyCheck:
    """`refused`: the service said 401 to the key; `reached`: it answered at all."""

    ok: bool
    message: str
    refused: bool = False
    reached: bool = True


def check_key(base_url: str, api_key: str, shared: bool) -> KeyCheck:
    try:
        with Client(base_url=base_url, api_key=api_key, timeout=TIMEOUT_S, max_retries=0,
                    transport=outbound.transport_for(base_url, shared)) as probe:
            page = probe.tasks.list(page_size=1)
        return KeyCheck(True, f"Connected: {page.total} task(s) in the last 7 days on the default tier.")
    except AuthenticationError:
        return KeyCheck(False, "The service refused the API key (401). Check the key.", refused=True)
    except APIStatusError as exc:
        return KeyCheck(False, f"The service answered {exc.status_code}: {exc.message}")
    except APIConnectionError as exc:
        return KeyCheck(False, f"Could not reach {base_url}: {exc}", reached=False)
    except DailiesError as exc:
        return KeyCheck(False, str(exc), reached=False)
