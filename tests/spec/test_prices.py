"""Prices as data (dailies.spec.prices): the table, look-ups, `cost` of records and requests, overrides.

Amounts are checked against figures published or billed by others (each test names its source),
not against the table read back, so a wrong figure in the table fails a test.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dailies.spec.catalog import MODELS, Region
from dailies.spec.models import CreateTaskRequest, TaskRecord
from dailies.spec.prices import (
    PRICES,
    PRICES_FILE_ENV,
    Cost,
    NoPrice,
    PriceFileError,
    billed_model,
    cost,
    find_price,
    has_video_input,
    load_prices,
    prices_from_env,
)

from .builders import IMAGE_URL, V10, V15, V20, V20_FAST, body, draft_task, image, text, video

V10_FAST = "doubao-seedance-1-0-pro-fast-251015"
BP_V20 = "dreamina-seedance-2-0-260128"
BP_V15 = "seedance-1-5-pro-251215"
BP_V10 = "seedance-1-0-pro-250528"
BP_V10_FAST = "seedance-1-0-pro-fast-251015"


def request(model: str = V20, content: list[dict[str, Any]] | None = None, **fields: Any) -> CreateTaskRequest:
    return CreateTaskRequest.model_validate(body(model, content, **fields))


def record(model: str = V20, tokens: int | None = 108_900, status: str = "succeeded", **fields: Any) -> TaskRecord:
    usage = None if tokens is None else {"completion_tokens": tokens, "total_tokens": tokens}
    return TaskRecord.model_validate({"id": "cgt-20260101120000-abcde", "model": model, "status": status,
                                      "usage": usage, **fields})


def priced(result: Cost | NoPrice) -> Cost:
    assert isinstance(result, Cost), result
    return result


# ---------- published examples ----------


def test_the_1080p_bill_of_design_times_the_1080p_price() -> None:
    # DESIGN.md section 3: 1920x1080, 5 s is billed 245,025 tokens; 2.0 at 1080p is ¥51 (new-api's table).
    result = priced(cost(record(V20, 245_025, resolution="1080p", ratio="16:9", duration=5), video_input=False))
    assert (result.amount, result.currency) == (Decimal("12.496275"), "CNY")
    # The estimate of the same request gives the same tokens, so the same amount.
    estimate = priced(cost(request(V20, resolution="1080p", ratio="16:9", duration=5)))
    assert (estimate.tokens, estimate.amount, estimate.estimated) == (245_025, result.amount, True)


def test_official_1_0_pro_example_amount() -> None:
    # Volcengine's price page (official, 2025-12-18): 1920x1088, 244,800 tokens, ¥3.67 at ¥15 online.
    result = priced(cost(record(V10, 244_800, resolution="1080p")))
    assert result.amount.quantize(Decimal("0.01")) == Decimal("3.67")
    assert result.price.official


def test_a_5_s_720p_clip_on_2_0_online_costs_about_5_yuan() -> None:
    result = priced(cost(request(V20)))  # the defaults: 720p, 16:9 without an image, 5 s
    assert result.tokens == 108_900
    assert result.amount.quantize(Decimal("0.01")) == Decimal("5.01")


@pytest.mark.parametrize(("resolution", "audio", "published"), [
    ("480p", False, "0.06"), ("480p", True, "0.12"), ("720p", False, "0.13"), ("720p", True, "0.26")])
def test_byteplus_1_5_pro_matches_published_clip_prices(resolution: str, audio: bool, published: str) -> None:
    # Runware's Seedance 1.5 Pro page: 5 s clips at BytePlus prices, by resolution and sound.
    result = priced(cost(request(BP_V15, resolution=resolution, ratio="16:9", generate_audio=audio)))
    assert (result.amount.quantize(Decimal("0.01")), result.currency) == (Decimal(published), "USD")


def test_byteplus_published_clip_prices_of_2_0_and_1_0() -> None:
    # LiteLLM PR #34532: 2.0 5 s 720p $0.756 and 1.0 Pro fast 10 s $0.216 (both at 24 frames a second, 108,000
    # and 216,000 tokens); 1.0 Pro 5 s 720p $0.27.
    assert priced(cost(record(BP_V20, 108_000), video_input=False)).amount == Decimal("0.756")
    assert priced(cost(record(BP_V10_FAST, 216_000))).amount == Decimal("0.216")
    assert priced(cost(record(BP_V10, 108_000))).amount == Decimal("0.27")


def test_measured_bills_with_and_without_a_video_input() -> None:
    # Crazyrouter's two measured 2.0 tasks, 720p, 4 s: 87,300 tokens (text) and 173,700 with a 4 s reference
    # video; the estimate counts the input video's frames at the output size.
    plain = priced(cost(request(V20, duration=4)))
    with_video = priced(cost(request(V20, [text(), video()], duration=4), input_video_seconds=4))
    assert (plain.tokens, with_video.tokens) == (87_300, 173_700)
    assert plain.amount == Decimal("87300") * 46 / 1_000_000
    assert with_video.amount == Decimal("173700") * 28 / 1_000_000


# ---------- the table ----------


@pytest.mark.parametrize("model_id", [m.id_in(r) for m in MODELS for r in Region])
def test_every_catalog_model_has_a_price_or_an_explicit_no_price(model_id: str) -> None:
    rows = [row for row in PRICES if row.model == model_id]
    assert rows, f"{model_id} has no row"
    assert all(row.source and row.date for row in rows)
    expected = "CNY" if model_id.startswith("doubao-") else "USD"
    assert {row.currency for row in rows} == {expected}
    model = next(m for m in MODELS if model_id in m.ids)
    for resolution in model.capabilities.resolutions:
        result = find_price(model_id, resolution=resolution)
        # A price, or a "no price" row written for that case: never a silent gap.
        assert not isinstance(result, NoPrice) or not result.reason.startswith("no price for model")


@pytest.mark.parametrize(("model_id", "online", "flex"), [
    (V10, "15", "7.5"),          # official: ¥15 online; 7.50 is among the price page's offline cells
    (V10_FAST, "4.2", "2.1"),    # official: ¥4.2 online; 2.10 likewise
    (BP_V10, "2.5", "1.25"),
    (BP_V15, "2.4", "1.2"),      # 302.ai lists 1.5 Pro with audio at 2.4 online, 1.2 offline
])
def test_flex_is_half_where_offered(model_id: str, online: str, flex: str) -> None:
    on = find_price(model_id)
    off = find_price(model_id, tier="flex")
    assert not isinstance(on, NoPrice) and not isinstance(off, NoPrice)
    assert (on.per_million, off.per_million, off.tier) == (Decimal(online), Decimal(flex), "flex")


@pytest.mark.parametrize("model_id", [V20, V20_FAST, BP_V20])
def test_no_flex_price_for_2_0(model_id: str) -> None:
    assert isinstance(find_price(model_id, tier="flex"), NoPrice)


def test_a_flex_request_costs_half() -> None:
    online = priced(cost(request(V15, generate_audio=False)))
    flex = priced(cost(request(V15, generate_audio=False, service_tier="flex")))
    assert flex.tokens == online.tokens and flex.amount * 2 == online.amount


@pytest.mark.parametrize(("model_id", "resolution"), [
    (V20, "720p"), (V20, "1080p"), (V20_FAST, "480p"), (BP_V20, "720p"), (BP_V20, "1080p")])
def test_a_video_input_is_cheaper_on_2_0(model_id: str, resolution: str) -> None:
    without = find_price(model_id, resolution=resolution, video_input=False)
    with_video = find_price(model_id, resolution=resolution, video_input=True)
    assert not isinstance(without, NoPrice) and not isinstance(with_video, NoPrice)
    assert with_video.per_million < without.per_million


def test_2_0_prices_by_resolution_and_input() -> None:
    # new-api's table: 46 / 28 at 480p and 720p, 51 / 31 at 1080p; fast 37 / 22.
    table = {(m, r, v): find_price(m, resolution=r, video_input=v)
             for m in (V20, V20_FAST) for r in ("480p", "720p", "1080p") for v in (False, True)}
    figures = {key: (p.per_million if not isinstance(p, NoPrice) else None) for key, p in table.items()}
    assert figures[(V20, "480p", False)] == figures[(V20, "720p", False)] == Decimal("46")
    assert figures[(V20, "720p", True)] == Decimal("28")
    assert (figures[(V20, "1080p", False)], figures[(V20, "1080p", True)]) == (Decimal("51"), Decimal("31"))
    assert (figures[(V20_FAST, "720p", False)], figures[(V20_FAST, "720p", True)]) == (Decimal("37"), Decimal("22"))


def test_4k_has_an_explicit_no_price() -> None:
    result = cost(request(V20, [text(), video()], resolution="4k"))
    assert isinstance(result, NoPrice) and "4K" in result.reason


def test_audio_doubles_1_5_pro() -> None:
    silent = priced(cost(request(BP_V15, generate_audio=False)))
    sound = priced(cost(request(BP_V15)))  # generate_audio defaults to true
    assert sound.amount == 2 * silent.amount
    assert (silent.price.per_million, sound.price.per_million) == (Decimal("1.2"), Decimal("2.4"))


def test_audio_is_ignored_where_the_model_makes_none() -> None:
    assert priced(cost(request(V10, generate_audio=True))).amount == priced(cost(request(V10))).amount


# ---------- drafts ----------


def test_a_draft_request_is_estimated_at_480p_and_the_draft_factor() -> None:
    full = priced(cost(request(V15, resolution="480p", ratio="16:9")))
    draft = priced(cost(request(V15, ratio="16:9", draft=True)))
    assert full.tokens == 864 * 496 * 121 // 1024
    assert draft.tokens == int(full.tokens * 0.6)
    assert draft.price == full.price  # the same price per token: the draft is cheaper in tokens


def test_a_draft_record_is_billed_its_own_usage() -> None:
    result = priced(cost(record(V15, 30_382, draft=True, resolution="480p", generate_audio=False)))
    assert result.tokens == 30_382 and result.amount == Decimal("30382") * 8 / 1_000_000


def test_a_final_from_a_draft_needs_the_draft_to_be_estimated() -> None:
    final = request(V15, [draft_task()], resolution="1080p")
    assert isinstance(cost(final), NoPrice)
    draft = record(V15, 30_382, draft=True, ratio="9:16", duration=4, generate_audio=False)
    result = priced(cost(final, draft=draft))
    assert result.tokens == 1080 * 1920 * 97 // 1024
    assert result.price.per_million == Decimal("8")


# ---------- records and requests ----------


def test_record_with_usage_is_not_an_estimate() -> None:
    result = priced(cost(record(V20, 100_000), video_input=True))
    assert (result.tokens, result.estimated, result.amount) == (100_000, False, Decimal("2.8"))


def test_record_without_video_input_known_assumes_the_dearer_price() -> None:
    result = priced(cost(record(V20, 100_000)))
    assert result.amount == Decimal("4.6") and result.assumptions


def test_failed_tasks_are_not_billed_and_running_ones_have_no_usage() -> None:
    failed = priced(cost(record(V20, None, status="failed")))
    assert failed.amount == 0 and failed.assumptions
    assert isinstance(cost(record(V20, None, status="running")), NoPrice)


def test_duration_picked_by_the_model_is_estimated_at_its_longest() -> None:
    result = priced(cost(request(V20, duration=-1)))
    assert result.tokens == 1280 * 720 * (24 * 15 + 1) // 1024 and result.assumptions


def test_adaptive_follows_the_image_size_when_given() -> None:
    portrait = priced(cost(request(V20, [text(), image("first_frame", IMAGE_URL)]), image_size=(900, 1600)))
    assert portrait.tokens == 720 * 1280 * 121 // 1024 and not portrait.assumptions


@pytest.mark.parametrize("resolution", ["480p", "720p", "1080p"])
def test_adaptive_without_the_images_size_is_estimated_at_the_dearest_ratio(resolution) -> None:
    """An estimate reserves enough whatever the image: 16:9 was assumed, and 1.0 Pro's 21:9 at 720p
    has 9.6% more pixels (a budget was passed by that much)."""
    from dailies.spec.pixels import FIXED_RATIOS, dimensions

    model = "doubao-seedance-1-0-pro-250528"
    asked = request(model, [text(), image("first_frame", IMAGE_URL)], resolution=resolution, duration=5)
    estimate = priced(cost(asked))
    most = max(w * h for w, h in (dimensions(model, resolution, r) for r in FIXED_RATIOS))
    assert estimate.tokens == most * 121 // 1024
    assert any("dearest ratio" in a for a in estimate.assumptions)
    assert estimate.tokens >= max(priced(cost(asked, image_size=size)).tokens
                                  for size in ((2100, 900), (900, 2100), (1000, 1000), (1600, 900)))


# ---------- unknown models and endpoints ----------


@pytest.mark.parametrize("model_id", ["doubao-seedance-9-9-999999", "ep-20260320184133-9ncm4"])
def test_unknown_models_and_endpoints_have_no_price(model_id: str) -> None:
    assert isinstance(cost(request(model_id)), NoPrice)
    result = cost(record(model_id, 108_900))
    assert isinstance(result, NoPrice) and result.tokens == 108_900


def test_an_endpoint_is_priced_as_the_model_the_caller_names() -> None:
    result = priced(cost(request("ep-20260320184133-9ncm4"), model=V20))
    assert result.amount == priced(cost(request(V20))).amount


# ---------- override files ----------


def test_override_file_replaces_the_rows_it_covers(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(
        '[[price]]\nmodel = "doubao-seedance-2-0-260128"\nresolution = "1080p"\nper_million = "40"\n'
        'currency = "CNY"\nsource = "our contract"\ndate = "2026-09-01"\n\n'
        '[[price]]\nmodel = "doubao-seedance-1-0-pro-250528"\nper_million = 12\n'
        'currency = "CNY"\nsource = "our contract"\ndate = "2026-09-01"\n', encoding="utf-8")
    prices = load_prices(path)
    negotiated = find_price(V20, resolution="1080p", video_input=True, prices=prices)
    assert not isinstance(negotiated, NoPrice) and negotiated.per_million == Decimal("40")
    still_published = find_price(V20, resolution="720p", prices=prices)
    assert not isinstance(still_published, NoPrice) and still_published.per_million == Decimal("46")
    flex = find_price(V10, tier="flex", prices=prices)  # flex follows the negotiated online price
    assert not isinstance(flex, NoPrice) and flex.per_million == Decimal("6")
    assert find_price(V10, prices=PRICES) != find_price(V10, prices=prices)  # the built-in table is unchanged


def test_override_file_in_json_with_an_explicit_no_price(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"price": [
        {"model": "doubao-seedance-2-0-mini-260615", "per_million": "23", "currency": "CNY",
         "source": "new-api PR #6873", "date": "2026-08-15"},
        {"model": V10_FAST, "no_price": True, "currency": "CNY", "source": "not in our contract",
         "date": "2026-09-01"}]}), encoding="utf-8")
    prices = load_prices(path)
    mini = priced(cost(request("doubao-seedance-2-0-mini-260615"), prices=prices))
    assert mini.amount == Decimal("108900") * 23 / 1_000_000
    assert isinstance(cost(request(V10_FAST), prices=prices), NoPrice)


@pytest.mark.parametrize("row", [
    'model = "x"\nper_million = "1"\ncurrency = "EUR"\nsource = "s"\ndate = "d"',
    'model = "x"\nper_million = "-1"\ncurrency = "CNY"\nsource = "s"\ndate = "d"',
    'model = "x"\ncurrency = "CNY"\nsource = "s"\ndate = "d"',
    'model = "x"\nper_million = "1"\ncurrency = "CNY"\nsource = "s"\ndate = "d"\nresolution = "8k"',
    'model = "x"\nper_million = "1"\ncurrency = "CNY"\nsource = "s"\ndate = "d"\nprice = 3',
])
def test_bad_override_rows_are_refused(tmp_path: Path, row: str) -> None:
    path = tmp_path / "prices.toml"
    path.write_text(f"[[price]]\n{row}\n", encoding="utf-8")
    with pytest.raises(PriceFileError):
        load_prices(path)


def test_the_environment_is_read_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "prices.toml"
    path.write_text('[[price]]\nmodel = "seedance-1-0-pro-250528"\nper_million = "2"\ncurrency = "USD"\n'
                    'source = "ours"\ndate = "2026-09-01"\n', encoding="utf-8")
    assert prices_from_env({}) == PRICES
    from_env = prices_from_env({PRICES_FILE_ENV: str(path)})
    result = find_price(BP_V10, prices=from_env)
    assert not isinstance(result, NoPrice) and result.per_million == Decimal("2")


def test_a_model_is_billed_as_its_id_in_the_services_region() -> None:
    assert billed_model(V10, Region.BYTEPLUS) == "seedance-1-0-pro-250528"
    assert billed_model("seedance-1-0-pro-250528", Region.VOLCENGINE) == V10
    assert billed_model(V10, None) == V10 and billed_model("ep-x", Region.BYTEPLUS) == "ep-x"
    assert priced(cost(record(V10, tokens=19747), model=billed_model(V10, Region.BYTEPLUS))).currency == "USD"


def test_a_records_audio_and_video_input_come_from_its_request_when_the_record_does_not_say() -> None:
    assert has_video_input([video("reference_video")]) and has_video_input(
        request(content=[text("a [视频1]"), video("reference_video")]).content)
    assert not has_video_input([text("a")]) and not has_video_input(None)
    silent = priced(cost(record(V15, tokens=1_000_000), audio=False))
    assert (silent.amount, silent.price.audio) == (Decimal(8), False)
    # The record's own word wins over the request's.
    assert priced(cost(record(V15, tokens=1_000_000, generate_audio=True), audio=False)).amount == Decimal(16)
