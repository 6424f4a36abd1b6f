"""What the dashboard shows as money: costs of requests and records, totals over currencies, and the
frames of the spend charts. Pure functions, no Streamlit run."""

from __future__ import annotations

from decimal import Decimal

from components.common import costs, records
from components.tasks import rows as task_rows
from components.tasks import spend_charts
from dailies.journal import Submission
from dailies.spec.catalog import Region
from dailies.spec.models import SpendReport, TaskRecord
from dailies.spec.prices import Charge

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


# ---------- a Dailies service's task costs its ledger line; the real Ark's, its usage priced here ----------

V10 = "doubao-seedance-1-0-pro-250528"
VIDEO_BODY = {**BODY, "content": [{"type": "text", "text": "continue [视频1]"},
                                  {"type": "video_url", "video_url": {"url": "https://example.com/ref.mp4"},
                                   "role": "reference_video"}]}


def charge(task_id: str = "cgt-20261125000000-abcde", state: str = "settled", currency: str | None = "USD",
           amount: str = "0.049368", model: str = V10) -> Charge:
    return Charge(task_id=task_id, model=model, state=state, currency=currency, amount=Decimal(amount), tokens=19747)


def submission(request: dict) -> Submission:
    return Submission(task_id="cgt-20261125000000-abcde", batch_id=None, submitted_at=1.0, base_url="",
                      model=request["model"], mode="text", prompt="", request=request)


def test_the_cost_cell_of_a_task_with_a_ledger_line_is_that_line_in_its_state():
    v10 = record(model=V10, tokens=19747, resolution="480p", duration=2, generate_audio=False)
    # A Volcengine id through a BytePlus gateway: the ledger bills USD at BytePlus' price; the record
    # alone would say ¥0.30.
    assert records.cost_of(v10, None) == "¥0.30"
    assert records.cost_of(v10, None, charge()) == "$0.0494"
    # Held while it runs or while the upstream may still bill it; nothing once released.
    assert records.cost_of(record(status="running", tokens=None), None,
                             charge(state="reserved", currency="CNY", amount="0.297675")) == "≈ ¥0.30 held"
    assert records.cost_of(record(status="failed", tokens=None), None,
                             charge(state="released", currency="CNY", amount="0.297675")) == "¥0.00"
    # Failed after the upstream made it: charged its estimate, not 0.
    failed = record(status="failed", tokens=None)
    assert records.cost_of(failed, None) == "¥0.00"
    assert records.cost_of(failed, None, charge(currency="CNY", amount="0.297675")) == "¥0.30"
    assert records.cost_of(v10, None, charge(currency=None, amount="0")) == "no price"


def test_the_table_takes_each_rows_ledger_line():
    from datetime import UTC

    v10 = record(model=V10, tokens=19747, resolution="480p", duration=2, generate_audio=False)
    frame = task_rows.table_rows([v10], {}, set(), 0.0, UTC, charges={v10.id: charge()})
    assert list(frame["cost"]) == ["$0.0494"]


def test_without_a_ledger_a_record_is_priced_with_its_journal_request_and_the_regions_model():
    # 2.0 with a reference video (the journal's request says so): ¥28/M, not ¥46/M.
    video = record(tokens=200_000)
    assert costs.cost_text(costs.record_cost(video)) == "¥9.20"
    assert costs.cost_text(costs.record_cost(video, VIDEO_BODY)) == "¥5.60"
    assert records.cost_of(video, submission(VIDEO_BODY)) == "¥5.60"
    # A Volcengine id on a BytePlus service is billed as the BytePlus model, in USD.
    v10 = record(model=V10, tokens=19747, resolution="480p", duration=2, generate_audio=False)
    assert costs.cost_text(costs.record_cost(v10, region=Region.BYTEPLUS)) == "$0.0494"
    assert records.cost_of(v10, None, region=Region.BYTEPLUS) == "$0.0494"
    # 1.5 Pro without audio, which its record does not say but its request does: ¥8/M, not ¥16/M.
    v15 = record(model="doubao-seedance-1-5-pro-251215", tokens=100_000)
    assert costs.cost_text(costs.record_cost(v15)) == "¥1.60"
    assert costs.cost_text(costs.record_cost(v15, {**BODY, "model": v15.model, "generate_audio": False})) == "¥0.80"


def test_spend_by_model_sums_the_ledgers_lines_where_there_are_some():
    v10 = record(model=V10, tokens=19747, resolution="480p", duration=2, generate_audio=False)
    failed = record(model=V10, status="failed", tokens=None, id="cgt-20261125000000-fffff")
    running = record(model=V10, status="running", tokens=None, id="cgt-20261125000000-rrrrr")
    lines = {v10.id: charge(), failed.id: charge(failed.id, amount="0.0496"),
             running.id: charge(running.id, state="reserved")}
    frame, unpriced = spend_charts.spend_by_model([v10, failed, running], lines)
    rows = {(r.key, r.currency): (round(r.amount, 6), r.tasks) for r in frame.itertuples()}
    # In dollars as billed (no yuan bar), the failed task charged its estimate counted, the held one not yet.
    assert rows == {(V10, "USD"): (round(0.049368 + 0.0496, 6), 2)} and unpriced == 0
    # Without a ledger: priced here, with the journal's request and the service's region.
    video = record(tokens=200_000, id="cgt-20261125000000-vvvvv")
    frame, _ = spend_charts.spend_by_model([video, v10], bodies={video.id: VIDEO_BODY}, region=Region.VOLCENGINE)
    assert {(r.key, r.currency): round(r.amount, 6) for r in frame.itertuples()} == {
        (V2, "CNY"): 5.6, (V10, "CNY"): round(19747 * 15 / 1e6, 6)}
