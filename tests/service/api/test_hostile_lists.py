"""Hostile input, category 6: the list query (spec 4.2) with injection strings, out-of-range pages
and thousands of ids. Enumerated and numeric parameters are refused naming the parameter;
free-text filters (`filter.model`, `filter.task_ids`) are matched exactly, as bound SQL
parameters, so a hostile value finds nothing and reveals nothing."""

from __future__ import annotations

import sqlite3
from urllib.parse import urlencode

import pytest

from dailies.spec import limits as L
from tests.service.conftest import KEY_B, TASKS
from tests.service.hostile import AUTH, assert_refused, hostile_service, module_anyio_backend, raw_get  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

INJECTIONS = [
    "' OR 1=1 --", "\" OR \"\"=\"", "1; DROP TABLE tasks", "%00", "\x00", "' UNION SELECT * FROM tasks --",
    "%' OR '%'='", "*", "%", "_", "cgt-%", "\u202e\u0000\ufeff", "🙂" * 100, "\\", "a" * 60_000,
]


@pytest.mark.parametrize("value", INJECTIONS, ids=lambda v: repr(v[:20]))
@pytest.mark.parametrize("name", ["filter.status", "filter.service_tier"])
async def test_injections_in_enumerated_filters_are_refused(hostile, name, value):
    assert_refused(await hostile.list([(name, value)]), name, code="InvalidParameter")


@pytest.mark.parametrize("value", INJECTIONS, ids=lambda v: repr(v[:20]))
@pytest.mark.parametrize("name", ["filter.model"])
async def test_injections_in_free_text_filters_find_nothing(hostile, name, value):
    response = await hostile.list([(name, value)])
    assert response.status_code == 200, response.text
    assert response.json() == {"total": 0, "items": []}


@pytest.mark.parametrize("value", [v for v in INJECTIONS if len(v) <= L.TASK_ID_MAX_CHARS], ids=lambda v: repr(v[:20]))
async def test_injections_in_task_ids_find_nothing(hostile, value):
    response = await hostile.list([("filter.task_ids", value)])
    assert response.status_code == 200, response.text
    assert response.json() == {"total": 0, "items": []}


@pytest.mark.parametrize("value", ["0", "-1", "501", "1e3", "1.5", "", " ", "1 OR 1=1", "0x10", "１",
                                   "9" * 400, "NaN", "true"])
@pytest.mark.parametrize("name", ["page_num", "page_size"])
async def test_out_of_range_and_malformed_pages(hostile, name, value):
    assert_refused(await hostile.list([(name, value)]), name, code="InvalidParameter")


@pytest.mark.parametrize(("name", "values"), [
    ("filter.status", ["bogus", "queued"]), ("filter.status", ["queued", "queued"]), ("page_size", ["0", "5"]),
    ("page_num", ["1", "2"]), ("filter.model", ["a", "b"]), ("filter.service_tier", ["flex", "default"])])
async def test_a_parameter_given_twice_is_refused_naming_it(hostile, name, values):
    """Only filter.task_ids repeats (spec 4.2); the last value was taken and a bad first one ignored."""
    assert_refused(await hostile.list([(name, v) for v in values]), name, code="InvalidParameter")


async def test_the_collection_with_a_trailing_slash_is_not_found_in_the_error_shape(hostile):
    """It was an empty 307 to the collection (a DELETE redirected there met a 405)."""
    for method in ("GET", "DELETE", "POST"):
        response = await hostile.client.request(method, TASKS + "/", headers=AUTH)
        assert_refused(response, "", status=404, code="NotFound")


async def test_pages_at_their_limits_are_answered(hostile):
    for params in ([("page_num", "500"), ("page_size", "500")], [("page_num", "1"), ("page_size", "1")]):
        assert (await hostile.list(params)).status_code == 200


async def test_more_task_ids_than_the_limit_are_refused(hostile):
    ids = [f"cgt-20250101000000-{i:05d}" for i in range(L.TASK_IDS_FILTER_MAX + 1)]
    error = assert_refused(await hostile.list([("filter.task_ids", i) for i in ids]), "filter.task_ids")
    assert f"at most {L.TASK_IDS_FILTER_MAX}" in error["message"]


@pytest.mark.parametrize("count", [5_000, 40_000])
async def test_thousands_of_task_ids_are_refused_before_any_sql(hostile, count):
    # 40,000 ids would also pass SQLite's limit of 32,766 bound parameters: refused long before.
    # Sent raw: the query string is over a megabyte, more than httpx (or uvicorn) lets through.
    query = urlencode([("filter.task_ids", f"cgt-20250101000000-{i:05d}") for i in range(count)])
    response = await raw_get(hostile.app, TASKS, query, headers=AUTH)
    assert_refused(response, "filter.task_ids", code="InvalidParameter")


async def test_the_most_ids_allowed_stay_within_sqlite_bound_parameters(hostile):
    assert L.TASK_IDS_FILTER_MAX + 10 < sqlite3.connect(":memory:").getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER)
    seeded = list(hostile.seeded)
    filler = [f"cgt-20250101000000-{i:05d}" for i in range(L.TASK_IDS_FILTER_MAX - len(seeded))]
    listed = (await hostile.list([("filter.task_ids", i) for i in seeded + filler])).json()
    default_tier = [t for t in seeded if hostile.seeded[t]["service_tier"] == "default"]
    assert sorted(item["id"] for item in listed["items"]) == sorted(default_tier)
    assert listed["total"] == len(default_tier)


@pytest.mark.parametrize(("ids", "param"), [
    (["x" * (L.TASK_ID_MAX_CHARS + 1)], "filter.task_ids[0]"),
    (["cgt-1", "y" * 60_000], "filter.task_ids[1]"),
])
async def test_overlong_task_ids_are_refused(hostile, ids, param):
    assert_refused(await hostile.list([("filter.task_ids", i) for i in ids]), param, code="InvalidParameter")


async def test_another_projects_ids_find_nothing(hostile):
    listed = (await hostile.list([("filter.task_ids", t) for t in hostile.seeded], key=KEY_B)).json()
    assert listed == {"total": 0, "items": []}
