"""What the dashboard shows as money: costs of requests and records, totals over currencies, and the
frames of the spend charts. Pure functions, no Streamlit run."""

from __future__ import annotations

from decimal import Decimal

from components import costs, spend_charts
from dailies.spec.models import SpendReport, TaskRecord

V2 = "doubao-seedance-2-0-260128"
BODY = {"model": V2, "content": [{"type": "text", "text": "a lighthouse"}], "resolution": "720p", "duration": 5}


def record(status: str = "succeeded", model: str = V2, tokens: int | None = 108_900, **fields) -> TaskRecord:
    data = {"id": "cgt-20261125000000-abcde", "model": model, "status": status, "created_at": 1, "updated_at": 2,
            "resolution": "720p", "ratio": "16:9", "duration": 5, **fields}
    if tokens is not None:
        data["usage"] = {"completion_tokens": tokens, "total_tokens": tokens}
    return TaskRecord.model_validate(data)


def test_a_5_s_720p_clip_on_2_0_is_about_five_yuan():
    estimate = costs.request_cost(BODY)
    assert costs.cost_text(estimate) == "≈ ¥5.01"  # 108,900 tokens at ¥46 per million
    assert "108,900 tokens at ¥46.00 per million tokens" in costs.why(estimate)


def test_a_record_costs_its_usage_and_a_running_one_its_estimate():
    assert costs.cost_text(costs.record_cost(record(tokens=100_000))) == "¥4.60"
    running = record(status="running", tokens=None)
    assert costs.cost_text(costs.record_cost(running, BODY)) == "≈ ¥5.01"
    # Not sent from here: nothing to estimate from, and it says so rather than 0.
    assert costs.cost_text(costs.record_cost(running)) == "no price"
    assert costs.cost_text(costs.record_cost(record(status="failed", tokens=None))) == "¥0.00"


def test_unknown_models_and_endpoints_have_no_price_never_zero():
    assert costs.cost_text(costs.request_cost({**BODY, "model": "ep-20260101-abcde"})) == "no price"
    assert costs.cost_text(costs.request_cost({**BODY, "model": "ep-20260101-abcde"}, model=V2)) == "≈ ¥5.01"
    unknown = costs.record_cost(record(model="some-other-model"))
    assert costs.cost_text(unknown) == "no price" and costs.why(unknown).startswith("No price:")


def test_totals_keep_currencies_apart_and_count_what_has_no_price():
    cny = costs.request_cost(BODY)
    usd = costs.request_cost({**BODY, "model": "dreamina-seedance-2-0-260128"})
    none = costs.request_cost({**BODY, "model": "ep-x"})
    assert costs.sum_text([cny, cny, usd, none]) == "¥10.02 + $0.76 + 1 with no price"
    assert costs.times(cny, 3).amount == cny.amount * 3
    assert costs.amount_text(Decimal("0.0042"), "USD") == "$0.0042"


def test_spend_by_model_counts_succeeded_records_only():
    frame, unpriced = spend_charts.spend_by_model([
        record(tokens=100_000), record(tokens=100_000), record(status="failed", tokens=None),
        record(model="dreamina-seedance-2-0-260128", tokens=100_000), record(model="mystery", tokens=5)])
    rows = {(r.key, r.currency): (round(r.amount, 6), r.tasks) for r in frame.itertuples()}
    assert rows == {(V2, "CNY"): (9.2, 2), ("dreamina-seedance-2-0-260128", "USD"): (0.7, 1)}
    assert unpriced == 1


def test_spend_per_person_and_day_from_the_services_report():
    report = SpendReport.model_validate({"items": [
        {"day": "2026-11-24", "member": "alice", "model": V2, "currency": "CNY", "state": "settled", "tasks": 2,
         "tokens": 200_000, "amount": "9.2"},
        {"day": "2026-11-25", "member": "bob", "model": V2, "currency": "CNY", "state": "settled", "tasks": 1,
         "tokens": 100_000, "amount": "4.6"},
        {"day": "2026-11-25", "member": "alice", "model": V2, "currency": "CNY", "state": "reserved", "tasks": 1,
         "tokens": 108_900, "amount": "5.01"},
        {"day": "2026-11-25", "member": "", "model": "ep-x", "currency": None, "state": "settled", "tasks": 3,
         "tokens": 0, "amount": "0"}]})
    people, unpriced = spend_charts.spend_by(report, "member")
    assert {r.key: r.amount for r in people.itertuples()} == {"alice": 9.2, "bob": 4.6}  # reserved not spent yet
    assert unpriced == 3
    days, _ = spend_charts.spend_by(report, "day")
    assert {r.key: r.amount for r in days.itertuples()} == {"2026-11-24": 9.2, "2026-11-25": 4.6}
