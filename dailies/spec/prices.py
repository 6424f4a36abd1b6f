"""Prices as data: what a Seedance task costs, per model, tier, resolution and input kind.

The real services bill `usage.completion_tokens` of succeeded tasks at a price per million tokens.
Volcengine Ark prices its `doubao-*` ids in CNY, BytePlus ModelArk its `dreamina-*` / `seedance-*`
ids in USD; nothing here converts between the two.

`PRICES` is the built-in table: each row is one published figure with its source and the date it
was published or seen. `official` marks figures read on the providers' own pages; the others come
from secondary sources (gateways' code, aggregators' docs) and say so in `source`. A row whose
`per_million` is None is an explicit "no price": a case we know exists but found no figure for.
docs/prices.md has the whole table, what is and is not confirmed, and the override file format.

`cost(record_or_request)` is one pure function: a task record is priced from its usage, a
creation request from the token estimate in `pixels` (never a second copy of the formula). It
returns `Cost`, or `NoPrice` with the reason (an unknown model, an endpoint id, a case without a
figure): never an amount of 0 that merely means "unknown".

An operator whose negotiated prices differ passes `load_prices(path)` (TOML or JSON rows merged
over the built-in table) as `prices=`. The environment variable `DAILIES_PRICES_FILE` names such a
file; it is read by `prices_from_env()` when a caller asks, never at import time.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict

from .catalog import Region, find_model
from .limits import DURATION_MODEL_PICKS, FRAMES_PER_SECOND
from .models import CreateTaskRequest, Resolution, TaskRecord, effective
from .pixels import DRAFT_RESOLUTION, RESOLUTION_DEFAULT, dearest_ratio, dimensions, estimate_tokens
from .statuses import TERMINAL

Currency = Literal["CNY", "USD"]
Tier = Literal["default", "flex"]
PRICES_FILE_ENV = "DAILIES_PRICES_FILE"
_MILLION = Decimal(1_000_000)
# Volcengine's video-generation guide: flex ("离线推理") is "价格仅为在线推理的 50%".
FLEX_FACTOR = Decimal("0.5")
_ENDPOINT_PREFIX = "ep-"


@dataclass(frozen=True)
class Price:
    """One price per million tokens, and the conditions it applies under.

    A condition left as None applies whatever the task's value; when several rows match a task, the
    one with the most conditions set wins (a 1080p row beats the model's general row; see `specificity`).
    `per_million` None is an explicit "no price": the reason is in `source`.
    """

    model: str
    per_million: Decimal | None
    currency: Currency
    source: str
    date: str  # ISO date the figure was published or, failing that, seen in its source
    tier: Tier = "default"
    resolution: str | None = None
    video_input: bool | None = None
    audio: bool | None = None
    official: bool = False

    @property
    def conditions(self) -> tuple[str | None, bool | None, bool | None]:
        return self.resolution, self.video_input, self.audio

    def matches(self, model: str, tier: str, resolution: str, video_input: bool, audio: bool) -> bool:
        wanted = (resolution, video_input, audio)
        return (self.model == model and self.tier == tier
                and all(mine is None or mine == theirs for mine, theirs in zip(self.conditions, wanted, strict=True)))

    def covers(self, other: Price) -> bool:
        """Whether this row applies to every case `other` applies to (an override replaces it)."""
        return (self.model == other.model and self.tier == other.tier
                and all(mine is None or mine == theirs
                        for mine, theirs in zip(self.conditions, other.conditions, strict=True)))

    @property
    def specificity(self) -> tuple[int, bool, bool, bool]:
        """Rank among matching rows: more conditions first; on a tie a resolution condition beats a
        video-input one, which beats an audio one (a 4K "no price" row outranks "with video input")."""
        resolution, video_input, audio = (condition is not None for condition in self.conditions)
        return resolution + video_input + audio, resolution, video_input, audio


@dataclass(frozen=True)
class Cost:
    """What a task costs (or, `estimated`, will cost) at `price`. `amount` is exact, not rounded:
    `tokens * price.per_million / 1,000,000`. `assumptions` lists what was not known and was
    assumed (each one the dearer choice, so an estimate reserves enough)."""

    amount: Decimal
    currency: Currency
    tokens: int
    estimated: bool
    price: Price
    assumptions: tuple[str, ...] = ()
    priced: bool = True


@dataclass(frozen=True)
class NoPrice:
    """No amount can be given, and why. `tokens` is filled when they were known."""

    model: str
    reason: str
    tokens: int | None = None
    estimated: bool = False
    priced: bool = False


# ---------- sources (facts and figures copied, with where they were read) ----------

_ARK_PRICE_PAGE = ("official: Volcengine Ark docs 模型服务价格 (docs/82379/1544106) and the model cards, "
                   "as mirrored from volcengine.com in github.com/Hajimi-Commune/VolcanoArkDocs "
                   "(synced 2025-12-18)")
_NEWAPI = ("secondary: new-api relay/channel/task/doubao/constants.go, comment '豆包 2026-01-28 价格表' "
           "(2.0: 46, 28 with video input, 51 / 31 at 1080p; fast: 37, 22, no 1080p)")
_CRAZYROUTER = ("secondary: Crazyrouter blog 'Seedance 2.0 actual billing' 2026-06-18 (46 / 28, fast 37 / 22 "
                "CNY per M tokens, two measured bills)")
_AICOST = "secondary: aicost.org Seedance 2.0 pricing, announced 2026-03-04 (46 / 28 with video input)"
_SHUOSHAN = ("secondary: video-shuoshan billing commit 2026-04-17 ('Seedance 2.0 于 2026-04-16 上线 1080P', "
             "51 / 31 with video input)")
_DESIGN_15 = ("secondary, unconfirmed: ../shared/DESIGN.md section 9 ('1.5 Pro ¥8 silent'; its source was not "
              "recorded); no Volcengine page for 1.5 Pro was found")
_DESIGN_15_AUDIO = ("inferred, unconfirmed: twice the silent price, as BytePlus prices 1.5 Pro ($1.2 silent, "
                    "$2.4 with audio); no Volcengine figure for 1.5 Pro with audio was found")
_COMFY = ("secondary: Comfy docs tutorials/partner-nodes/pricing.mdx at 211 credits = $1 (1.5 Pro 253.2 silent, "
          "506.4 with audio; 1.0 Pro 527.5; 1.0 Pro fast 211 credits per M tokens)")
_COMFY_20 = ("secondary: Comfy docs pricing.mdx before PR #966 (2026-05-05) at 211 credits = $1: 2.0 1.477, "
             "0.907 with video input, fast 1.182 credits per K tokens; LiteLLM PR #34532 (2026-07-24): "
             "2.0 5 s 720p = $0.756 = 108,000 tokens at $7.0")
_COMFY_20_CORRECTED = ("secondary, derived: Comfy docs pricing.mdx after PR #966 applied its own 1.43 factor "
                       "(2026-05-05) and PR #1200 (2026-06-30); divided by 1.43 and 211 credits per $: 1080p 7.7, "
                       "1080p with video input 4.7, fast with video input 3.3 ($/M; DESIGN.md section 9 has 7.7)")
_RUNWARE = ("secondary: Runware Seedance 1.5 Pro page (480p 5 s $0.06, + audio $0.12; 720p 5 s $0.13, "
            "+ audio $0.26) and LobeHub model-bank (1.2 / 2.4)")
_LITELLM_10 = ("secondary: LiteLLM PR #34532 (2026-07-24): 1.0 Pro 5 s 720p $0.27, 1.0 Pro fast 10 s $0.216 "
               "(= 216,000 tokens at $1.0)")
_NO_4K = ("no price: no published 4K figure found for 2.0 (Comfy's 4K credits, with its own factor, suggest "
          "about $4.0 / $2.4 with video input per M tokens; not adopted)")

_V2 = "doubao-seedance-2-0-260128"
_V2_FAST = "doubao-seedance-2-0-fast-260128"
_V15 = "doubao-seedance-1-5-pro-251215"
_V10 = "doubao-seedance-1-0-pro-250528"
_V10_FAST = "doubao-seedance-1-0-pro-fast-251015"
_BP_V2 = "dreamina-seedance-2-0-260128"
_BP_V2_FAST = "dreamina-seedance-2-0-fast-260128"
_BP_V15 = "seedance-1-5-pro-251215"
_BP_V10 = "seedance-1-0-pro-250528"
_BP_V10_FAST = "seedance-1-0-pro-fast-251015"


def _cny(model: str, per_million: str | None, source: str, date: str, **conditions: Any) -> Price:
    return Price(model, None if per_million is None else Decimal(per_million), "CNY", source, date, **conditions)


def _usd(model: str, per_million: str | None, source: str, date: str, **conditions: Any) -> Price:
    return Price(model, None if per_million is None else Decimal(per_million), "USD", source, date, **conditions)


# Online (service_tier default) prices. Flex rows are derived at look-up (half, where the catalog
# offers flex) unless a row for tier "flex" is given, as an override file may.
PRICES: tuple[Price, ...] = (
    # Volcengine Ark, CNY per million tokens.
    _cny(_V2, "46", f"{_NEWAPI}; {_AICOST}; {_CRAZYROUTER}", "2026-01-28", video_input=False),
    _cny(_V2, "28", f"{_NEWAPI}; {_AICOST}; {_CRAZYROUTER}", "2026-01-28", video_input=True),
    _cny(_V2, "51", f"{_NEWAPI}; {_SHUOSHAN}", "2026-04-16", resolution="1080p", video_input=False),
    _cny(_V2, "31", f"{_NEWAPI}; {_SHUOSHAN}", "2026-04-16", resolution="1080p", video_input=True),
    _cny(_V2, None, _NO_4K, "2026-06-30", resolution="4k"),
    _cny(_V2_FAST, "37", f"{_NEWAPI}; {_CRAZYROUTER}", "2026-01-28", video_input=False),
    _cny(_V2_FAST, "22", f"{_NEWAPI}; {_CRAZYROUTER}", "2026-01-28", video_input=True),
    _cny(_V15, "8", _DESIGN_15, "2025-12-15", audio=False),
    _cny(_V15, "16", _DESIGN_15_AUDIO, "2025-12-15", audio=True),
    Price(_V10, Decimal("15"), "CNY", _ARK_PRICE_PAGE, "2025-12-18", official=True),
    Price(_V10_FAST, Decimal("4.2"), "CNY", _ARK_PRICE_PAGE, "2025-12-18", official=True),
    # BytePlus ModelArk, USD per million tokens.
    _usd(_BP_V2, "7.0", _COMFY_20, "2026-05-05", video_input=False),
    _usd(_BP_V2, "4.3", _COMFY_20, "2026-05-05", video_input=True),
    _usd(_BP_V2, "7.7", _COMFY_20_CORRECTED, "2026-06-30", resolution="1080p", video_input=False),
    _usd(_BP_V2, "4.7", _COMFY_20_CORRECTED, "2026-06-30", resolution="1080p", video_input=True),
    _usd(_BP_V2, None, _NO_4K, "2026-06-30", resolution="4k"),
    _usd(_BP_V2_FAST, "5.6", _COMFY_20, "2026-05-05", video_input=False),
    _usd(_BP_V2_FAST, "3.3", _COMFY_20_CORRECTED, "2026-05-05", video_input=True),
    _usd(_BP_V15, "1.2", f"{_COMFY}; {_RUNWARE}", "2025-12-23", audio=False),
    _usd(_BP_V15, "2.4", f"{_COMFY}; {_RUNWARE}", "2025-12-23", audio=True),
    _usd(_BP_V10, "2.5", f"{_COMFY}; {_LITELLM_10}", "2026-07-24"),
    _usd(_BP_V10_FAST, "1.0", f"{_COMFY}; {_LITELLM_10}", "2026-07-24"),
)


# ---------- look-up ----------


def find_price(
    model: str,
    *,
    tier: str = "default",
    resolution: str = RESOLUTION_DEFAULT,
    video_input: bool = False,
    audio: bool = True,
    prices: Iterable[Price] = PRICES,
) -> Price | NoPrice:
    """The row pricing a task of `model` with these properties, or why there is none.

    Flex without a row of its own costs half the online price, for catalog models that offer flex
    (Volcengine's guide: flex is 50% of online); a model without flex has no flex price.
    """
    rows = tuple(prices)
    if model.startswith(_ENDPOINT_PREFIX):
        return NoPrice(model, "an endpoint id names no model: pass the model id behind the endpoint")
    matching = [row for row in rows if row.matches(model, tier, resolution, video_input, audio)]
    if matching:
        best = max(matching, key=lambda row: row.specificity)
        if best.per_million is None:
            return NoPrice(model, best.source)
        return best
    if not any(row.model == model for row in rows):
        return NoPrice(model, f"no price is known for model {model!r}")
    if tier == "flex":
        entry = find_model(model)
        if entry is None or not entry.capabilities.flex:
            return NoPrice(model, f"model {model!r} is not offered at the flex tier")
        online = find_price(model, tier="default", resolution=resolution, video_input=video_input,
                            audio=audio, prices=rows)
        if isinstance(online, NoPrice):
            return online
        assert online.per_million is not None
        return Price(model, online.per_million * FLEX_FACTOR, online.currency,
                     f"half the online price (flex is 50% of online: Volcengine Ark 视频生成 guide, 离线推理); "
                     f"online: {online.source}",
                     online.date, tier="flex", resolution=online.resolution, video_input=online.video_input,
                     audio=online.audio, official=online.official)
    return NoPrice(model, f"no price for model {model!r} at tier {tier}, {resolution}, "
                          f"video input {video_input}, audio {audio}")


def _varies(model: str, prices: Iterable[Price], attribute: str) -> bool:
    return any(getattr(row, attribute) is not None for row in prices if row.model == model)


# ---------- showing an amount ----------

SYMBOLS: dict[str, str] = {"CNY": "¥", "USD": "$"}


def format_amount(amount: Decimal, currency: str) -> str:
    """¥4.90, $0.76; an amount under 0.1 keeps its significant digits ($0.0042), so a cheap draft
    never reads as nothing. The one way the dashboard and the CLI write money."""
    symbol = SYMBOLS.get(currency, f"{currency} ")
    if amount and abs(amount) < Decimal("0.1"):
        return f"{symbol}{amount:.4f}"
    return f"{symbol}{amount:,.2f}"


def amounts_apart(first: Decimal, second: Decimal, currency: str) -> tuple[str, str]:
    """Two different amounts written with as few decimals as tell them apart (at least format_amount's,
    at most six): "¥0.297674 is left and the task is estimated at ¥0.297675", never "¥0.30 ... ¥0.30"
    in a refusal that turns on the difference."""
    texts = format_amount(first, currency), format_amount(second, currency)
    symbol = SYMBOLS.get(currency, f"{currency} ")
    places = 2
    while texts[0] == texts[1] and first != second and places < 6:
        places += 1
        texts = f"{symbol}{first:,.{places}f}", f"{symbol}{second:,.{places}f}"
    return texts


# ---------- cost ----------


def cost(
    subject: TaskRecord | CreateTaskRequest,
    *,
    prices: Iterable[Price] = PRICES,
    model: str | None = None,
    video_input: bool | None = None,
    audio: bool | None = None,
    image_size: tuple[int, int] | None = None,
    input_video_seconds: float | None = None,
    draft: TaskRecord | None = None,
) -> Cost | NoPrice:
    """What a task costs: a record from its `usage.completion_tokens`, a request from the estimate.

    - `model`: the model id when the subject names an endpoint (`ep-...`), which has no price.
    - `video_input`: whether a record's task had a video input (2.0 prices it lower); a record does
      not say, so without it the dearer price is assumed. A request's content says it.
    - `audio`: whether a record's task had audio, when the record does not say (its request does);
      without either, with audio (the dearer price).
    - `image_size`: the first frame's or first reference image's size, which `adaptive` follows.
    - `input_video_seconds`: total length of a request's input videos, which 2.0 bills as extra
      frames at the output size (tokens = (input + output seconds) x W x H x 24 / 1024).
    - `draft`: for a final made from a draft (content `draft_task`), the draft's record, whose
      ratio, length and audio the final reuses.

    A draft is billed as the service reports it: its record's usage already holds the draft's
    tokens, at the model's price; a draft request is estimated at 480p with `pixels`' draft factor.
    Only succeeded tasks are billed: a failed, expired or cancelled record costs 0.
    """
    rows = tuple(prices)
    if isinstance(subject, TaskRecord):
        return _cost_of_record(subject, rows, model, video_input, audio)
    return _estimate(subject, rows, model, image_size, input_video_seconds, draft)


def _amount(tokens: int, price: Price) -> Decimal:
    assert price.per_million is not None
    return Decimal(tokens) * price.per_million / _MILLION


def _cost_of_record(record: TaskRecord, rows: tuple[Price, ...], model: str | None,
                    video_input: bool | None, audio_asked: bool | None) -> Cost | NoPrice:
    model_id = model or record.model
    if not model_id:
        return NoPrice("", "the record names no model: pass model=")
    assumptions: list[str] = []
    if video_input is None:
        video_input = False
        if _varies(model_id, rows, "video_input"):
            assumptions.append("no video input (a record does not say; the dearer price)")
    audio = record.generate_audio if record.generate_audio is not None else (
        True if audio_asked is None else audio_asked)
    price = find_price(model_id, tier=record.service_tier or "default",
                       resolution=DRAFT_RESOLUTION if record.draft else (record.resolution or RESOLUTION_DEFAULT),
                       video_input=video_input, audio=audio, prices=rows)
    usage = record.usage
    tokens = None if usage is None else (usage.completion_tokens if usage.completion_tokens is not None
                                         else usage.total_tokens)
    if isinstance(price, NoPrice):
        return NoPrice(price.model, price.reason, tokens)
    if record.status in TERMINAL and record.status != "succeeded":
        return Cost(Decimal(0), price.currency, 0, False, price,
                    (f"not billed: the task {record.status} (only succeeded tasks are billed)",))
    if tokens is None:
        return NoPrice(model_id, f"the task has no usage yet (status {record.status})")
    return Cost(_amount(tokens, price), price.currency, tokens, False, price, tuple(assumptions))


def _estimate(request: CreateTaskRequest, rows: tuple[Price, ...], model: str | None,
              image_size: tuple[int, int] | None, input_video_seconds: float | None,
              draft: TaskRecord | None) -> Cost | NoPrice:
    model_id = model or request.model
    assumptions: list[str] = []
    content = request.content
    is_final = any(item.type == "draft_task" for item in content)
    video_in = has_video_input(content)
    entry = find_model(model_id)
    if is_final:
        if draft is None:
            return NoPrice(model_id, "a final made from a draft reuses the draft's ratio and length: "
                                     "pass the draft's record as draft=", estimated=True)
        ratio, duration, frames = draft.ratio, draft.duration, draft.frames
        audio_asked = True if draft.generate_audio is None else draft.generate_audio
        is_draft = False
    else:
        ratio, duration, frames = request.ratio, effective(request, "duration"), request.frames
        audio_asked = bool(effective(request, "generate_audio"))
        is_draft = bool(effective(request, "draft"))
    audio = audio_asked and (entry is None or entry.capabilities.generate_audio)
    resolution = DRAFT_RESOLUTION if is_draft else (request.resolution or RESOLUTION_DEFAULT)
    price = find_price(model_id, tier=effective(request, "service_tier"), resolution=resolution,
                       video_input=video_in, audio=audio, prices=rows)
    if isinstance(price, NoPrice):
        return NoPrice(price.model, price.reason, estimated=True)
    if frames is None and (duration is None or duration == DURATION_MODEL_PICKS):
        if entry is None:
            return NoPrice(model_id, "the model picks the length, and its longest is not known", estimated=True)
        duration = entry.capabilities.duration_max
        assumptions.append(f"the model picks the length: its longest, {duration} s, is estimated")
    try:
        if (ratio or "adaptive") == "adaptive" and image_size is None and any(
                item.type == "image_url" for item in content):
            ratio = dearest_ratio(model_id, resolution)
            assumptions.append(f"adaptive follows an image whose size is not given: the dearest ratio, {ratio}, "
                               "is estimated")
        width, height = dimensions(model_id, resolution, ratio, image_size)
    except ValueError as exc:
        return NoPrice(model_id, str(exc), estimated=True)
    tokens = estimate_tokens(width, height, duration=duration, frames=frames, draft=is_draft)
    if video_in:
        if input_video_seconds is None:
            assumptions.append("input videos' length not given: their frames are not counted "
                               "(the service bills them, with a minimum)")
        else:
            tokens += estimate_tokens(width, height, frames=int(input_video_seconds * FRAMES_PER_SECOND))
    return Cost(_amount(tokens, price), price.currency, tokens, True, price, tuple(assumptions))


# ---------- what a task is billed as ----------


def billed_model(model_id: str, region: Region | None) -> str:
    """The id a task of `model_id` is billed as by a service of `region`: a catalog model runs there
    as that region's id (a Volcengine id through a BytePlus gateway is the BytePlus model, priced in
    USD at BytePlus' price). `region` None (a service that speaks both catalogs) and ids outside the
    catalog are billed as written."""
    model = find_model(model_id) if region is not None else None
    return model.id_in(region) if model is not None and region is not None else model_id


def has_video_input(content: Iterable[Any] | None) -> bool:
    """Whether a request's content holds a video input, which 2.0 prices lower: items as sent (dicts,
    a journal's or a stored request) or parsed (`CreateTaskRequest.content`)."""
    return any((item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)) == "video_url"
               for item in content or ())


ChargeState = Literal["reserved", "settled", "released"]
FINAL_CHARGE_STATES = ("settled", "released")


class Charge(BaseModel):
    """One task's line in a Dailies service's ledger, as `POST /dailies/v1/charges` gives it (beyond
    the specification): reserved at create (the estimate, held against budgets), then settled (what
    the task cost: its usage on success; its estimate when the upstream made it but its result could
    not be taken) or released (nothing). The ledger is the bill: a task's cost, wherever it is shown,
    is this line, not a second computation.

    `currency` None: the model has no known price. `amount` is what the line holds, exact; a released
    line still holds what was reserved, and `charged` is 0."""

    model_config = ConfigDict(extra="allow", frozen=True)

    task_id: str
    model: str = ""
    state: str  # ChargeState; any other a newer service may add is shown as it is
    currency: str | None = None
    amount: Decimal
    tokens: int = 0

    @property
    def final(self) -> bool:
        """Settled or released: the ledger never changes such a line again."""
        return self.state in FINAL_CHARGE_STATES

    @property
    def charged(self) -> Decimal:
        """What the task is charged (or, reserved, held): a released line counts for nothing."""
        return Decimal(0) if self.state == "released" else self.amount


class Charges(BaseModel):
    """The ledger's lines of the tasks asked for that the caller's project has (others left out)."""

    model_config = ConfigDict(extra="allow")

    items: list[Charge]


# ---------- override files ----------

_RESOLUTIONS = get_args(Resolution)
_FIELD_NAMES = {f.name for f in fields(Price)}


class PriceFileError(ValueError):
    """A price file that cannot be read as rows of prices; the message names the row and field."""


def _row(raw: Mapping[str, Any], where: str) -> Price:
    unknown = set(raw) - _FIELD_NAMES - {"no_price"}
    if unknown:
        raise PriceFileError(f"{where}: unknown field(s) {sorted(unknown)}")
    for required in ("model", "currency", "source", "date"):
        if not isinstance(raw.get(required), str) or not raw[required]:
            raise PriceFileError(f"{where}: {required} is required (a string)")
    if raw["currency"] not in get_args(Currency):
        raise PriceFileError(f"{where}: currency must be one of {get_args(Currency)}")
    tier = raw.get("tier", "default")
    if tier not in get_args(Tier):
        raise PriceFileError(f"{where}: tier must be one of {get_args(Tier)}")
    resolution = raw.get("resolution")
    if resolution is not None and resolution not in _RESOLUTIONS:
        raise PriceFileError(f"{where}: resolution must be one of {_RESOLUTIONS}")
    for flag in ("video_input", "audio", "official", "no_price"):
        if flag in raw and not isinstance(raw[flag], bool):
            raise PriceFileError(f"{where}: {flag} must be true or false")
    no_price = raw.get("no_price", False)
    if no_price == ("per_million" in raw):
        raise PriceFileError(f"{where}: give per_million, or no_price = true, not both")
    per_million: Decimal | None = None
    if not no_price:
        value = raw["per_million"]
        # A string keeps the figure exact; a float goes through its shortest repr ("7.7", not 7.7000000000000002).
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise PriceFileError(f"{where}: per_million must be a number or a string")
        try:
            per_million = Decimal(str(value))
        except InvalidOperation:
            raise PriceFileError(f"{where}: per_million {value!r} is not a number") from None
        if not per_million.is_finite() or per_million < 0:
            raise PriceFileError(f"{where}: per_million must be a finite number >= 0")
    return Price(model=raw["model"], per_million=per_million, currency=raw["currency"], source=raw["source"],
                 date=raw["date"], tier=tier, resolution=resolution, video_input=raw.get("video_input"),
                 audio=raw.get("audio"), official=raw.get("official", False))


def read_price_file(path: str | os.PathLike[str]) -> tuple[Price, ...]:
    """The rows of a price file: TOML (`[[price]]` tables) or JSON (`{"price": [...]}`), by suffix."""
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if file.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PriceFileError(f"{file}: {exc}") from None
    raw_rows = data.get("price") if isinstance(data, dict) else None
    if not isinstance(raw_rows, list):
        raise PriceFileError(f"{file}: expected a list of rows under 'price'")
    rows = []
    for index, raw in enumerate(raw_rows):
        if not isinstance(raw, dict):
            raise PriceFileError(f"{file}: price[{index}] is not a table")
        rows.append(_row(raw, f"{file}: price[{index}]"))
    return tuple(rows)


def merge_prices(base: Iterable[Price], overrides: Iterable[Price]) -> tuple[Price, ...]:
    """`overrides` over `base`: an override row replaces every base row it covers (same model and
    tier, and each of its conditions unset or equal), so one row with no conditions replaces all of
    a model's rows at that tier, and a 1080p row replaces only the 1080p ones."""
    extra = tuple(overrides)
    kept = tuple(row for row in base if not any(o.covers(row) for o in extra))
    return kept + extra


def load_prices(path: str | os.PathLike[str], base: Iterable[Price] = PRICES) -> tuple[Price, ...]:
    """The built-in table (or `base`) with the rows of the price file at `path` merged over it."""
    return merge_prices(base, read_price_file(path))


def prices_from_env(environ: Mapping[str, str] | None = None) -> tuple[Price, ...]:
    """The table a caller should use: the built-in one, with `$DAILIES_PRICES_FILE` merged over it
    when that is set. Read when called, so importing this module never touches the environment."""
    env = os.environ if environ is None else environ
    path = env.get(PRICES_FILE_ENV)
    return load_prices(path) if path else PRICES
