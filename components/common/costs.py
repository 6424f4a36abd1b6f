"""Money as the dashboard shows it: the cost of a request (Compose), of a record (Tasks, Review),
of many (Charts). Pure functions over `dailies.spec.prices` (no Streamlit), so pages and tests share
them. A cost that cannot be given says "no price", never 0.

A task of a Dailies service costs what its ledger charges (`Charge`, components/common/charges.py reads
them): that line is shown as it is (`charge_text`), never priced again here. Only where there is no
ledger (the real Ark) is a record priced (`record_cost`), with everything known about it: the
journal's request (a video input, audio) and the id the service's region bills the model as.

The price table is the built-in one, or an operator's file (`DAILIES_PRICES_FILE`) over it, read
once per process.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

from pydantic import ValidationError

from dailies.spec.catalog import Region
from dailies.spec.models import CreateTaskRequest, TaskRecord
from dailies.spec.prices import (
    Charge,
    Cost,
    NoPrice,
    Price,
    billed_model,
    cost,
    format_amount,
    has_video_input,
    prices_from_env,
)
from dailies.spec.statuses import ACTIVE
from dailies.spec.text_commands import apply_text_commands

NO_PRICE = "no price"


@functools.cache
def price_table() -> tuple[Price, ...]:
    return prices_from_env()


def request_cost(body: Mapping[str, Any], model: str | None = None, image_size: tuple[int, int] | None = None,
                 draft: Mapping[str, Any] | None = None, input_video_seconds: float | None = None) -> Cost | NoPrice:
    """The estimated cost of one create body; `model` is the catalog id behind an endpoint id,
    `image_size` the first image's (which `adaptive` follows), `draft` the draft's record when the
    body finalises one, `input_video_seconds` the input videos' length together when known."""
    try:
        request = CreateTaskRequest.model_validate(dict(body))
        draft_record = TaskRecord.model_validate(dict(draft)) if draft else None
    except ValidationError:
        return NoPrice(str(body.get("model") or ""), "the request is not complete yet")
    # As the service reads it: text commands in the prompt (`--frames 289`) set what is rendered and charged.
    request = apply_text_commands(request).request
    return cost(request, prices=price_table(), model=model, image_size=image_size, draft=draft_record,
                input_video_seconds=input_video_seconds)


def record_cost(record: TaskRecord, body: Mapping[str, Any] | None = None,
                region: Region | None = None) -> Cost | NoPrice:
    """What a task cost (its usage), or while it is queued or running, the estimate of the body that
    created it when the journal has it. Used where no ledger line is known (the real Ark keeps none; a
    Dailies service's task costs its `Charge`). `body` also says what the record does not (a video
    input, which 2.0 prices lower; audio); `region`, the service's: the id the model is billed as there."""
    model = billed_model(record.model, region) if record.model else None
    if record.status in ACTIVE:
        if body is None:
            return NoPrice(record.model or "", "estimated only for tasks sent from this dashboard")
        return request_cost(body, model=model)
    video_input = has_video_input(body.get("content")) if body is not None else None
    audio = _audio_asked(body) if body is not None else None
    return cost(record, prices=price_table(), model=model, video_input=video_input, audio=audio)


def _audio_asked(body: Mapping[str, Any]) -> bool | None:
    value = body.get("generate_audio")
    return value if isinstance(value, bool) else None


def amount_text(amount: Decimal, currency: str) -> str:
    return format_amount(amount, currency)


# A ledger line's state as the cost cell says it: a reservation is held, not spent.
HELD = "held"


def charge_text(charge: Charge) -> str:
    """One cell from the ledger's line: "$0.0494" settled, "≈ ¥0.30 held" reserved (the estimate,
    held against budgets until the task settles), "¥0.00" released, "no price" without a currency."""
    if charge.currency is None:
        return NO_PRICE
    text = amount_text(charge.charged, charge.currency)
    return f"≈ {text} {HELD}" if charge.state == "reserved" else text


def cost_text(result: Cost | NoPrice) -> str:
    """One cell: "¥4.90", "≈ ¥4.90" for an estimate, or "no price"."""
    if isinstance(result, NoPrice):
        return NO_PRICE
    text = amount_text(result.amount, result.currency)
    return f"≈ {text}" if result.estimated else text


def times(result: Cost | NoPrice, count: int) -> Cost | NoPrice:
    """The cost of `count` tasks like this one."""
    if isinstance(result, NoPrice) or count == 1:
        return result
    return Cost(result.amount * count, result.currency, result.tokens * count, result.estimated, result.price,
                result.assumptions)


def sum_text(results: Iterable[Cost | NoPrice]) -> str:
    """The total of several costs, per currency ("¥9.80 + $1.20"); says how many have no price."""
    totals: dict[str, Decimal] = {}
    unpriced = 0
    for result in results:
        if isinstance(result, NoPrice):
            unpriced += 1
        else:
            totals[result.currency] = totals.get(result.currency, Decimal(0)) + result.amount
    parts = [amount_text(amount, currency) for currency, amount in sorted(totals.items())]
    if unpriced:
        parts.append(f"{unpriced} with no price")
    return " + ".join(parts) if parts else NO_PRICE


def why(result: Cost | NoPrice) -> str:
    """The reason of a "no price", or the price a cost used (for a tooltip or a caption)."""
    if isinstance(result, NoPrice):
        return f"No price: {result.reason}."
    price = result.price
    per = amount_text(price.per_million, price.currency) if price.per_million is not None else "?"
    assumed = f" Assumed: {'; '.join(result.assumptions)}." if result.assumptions else ""
    source = price.source.split(":")[0]
    return f"{result.tokens:,} tokens at {per} per million tokens ({source}, {price.date}).{assumed}"
