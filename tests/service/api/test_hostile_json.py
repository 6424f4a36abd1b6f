"""Hostile input, category 1: malformed JSON of every sort. Each body is refused with a 400 in the
error shape: `body` when it cannot be parsed at all, the field's path when the parse found the
offending value (a duplicate key, a number that overflows, a lone surrogate)."""

from __future__ import annotations

import json

import pytest

from dailies.spec import limits as L
from tests.service.conftest import MODEL_2_0
from tests.service.hostile import ACCEPTED, assert_refused, hostile_service, module_anyio_backend  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

GOOD = json.dumps({"model": MODEL_2_0, "content": [{"type": "text", "text": "a heron"}]})


def with_raw(field: str, raw: str) -> str:
    """A valid body with `"field": <raw JSON text>` added at the top level."""
    return GOOD[:-1] + f', "{field}": {raw}}}'


def nested(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


TRUNCATED_AND_INVALID = [
    pytest.param("{", id="open-brace"),
    pytest.param("[", id="open-bracket"),
    pytest.param('{"model":', id="no-value"),
    pytest.param('{"model": "x", "content": [', id="unclosed-array"),
    pytest.param(GOOD[:-1], id="missing-last-brace"),
    pytest.param(GOOD[: len(GOOD) // 2], id="cut-in-half"),
    pytest.param('{"model": "abc', id="unterminated-string"),
    pytest.param('"\\', id="lone-backslash"),
    pytest.param('{"model": "x",}', id="trailing-comma"),
    pytest.param("{'model': 'x'}", id="single-quotes"),
    pytest.param('{model: "x"}', id="unquoted-key"),
    pytest.param('// comment\n{"model": "x"}', id="comment"),
    pytest.param(GOOD + GOOD, id="two-documents"),
    pytest.param(GOOD + "]", id="stray-closer"),
    pytest.param("]", id="only-closer"),
    pytest.param('{"seed": 01}', id="leading-zero"),
    pytest.param('{"seed": .5}', id="no-integer-part"),
    pytest.param('{"seed": +1}', id="plus-sign"),
    pytest.param('{"seed": 0x10}', id="hex-number"),
    pytest.param('{"watermark": tru}', id="broken-literal"),
    pytest.param('{"watermark": undefined}', id="undefined"),
    pytest.param('{"model": "a\tb"}', id="raw-tab-in-string"),
    pytest.param('{"model": "\\x41"}', id="bad-escape"),
    pytest.param('{"model": "\\u12"}', id="short-unicode-escape"),
    pytest.param("\x00", id="nul"),
]


@pytest.mark.parametrize("raw", TRUNCATED_AND_INVALID)
async def test_truncated_and_invalid_json(hostile, raw):
    error = assert_refused(await hostile.post(raw), "body", code="InvalidParameter")
    assert "not valid JSON" in error["message"]


@pytest.mark.parametrize("raw", [b"", b"   \n\t ", b"\r\n"])
async def test_empty_bodies(hostile, raw):
    assert_refused(await hostile.post(raw), "body", code="MissingParameter")


DEEP = [
    pytest.param(nested(20_000), id="20000-arrays"),
    pytest.param('{"a":' * 20_000 + "1" + "}" * 20_000, id="20000-objects"),
    pytest.param("[" * 200_000, id="200000-unclosed"),
    pytest.param(with_raw("tools", nested(L.JSON_DEPTH_MAX + 1)), id="65-levels-inside-a-task"),
    pytest.param(with_raw("x", '{"a":' * 40 + nested(40) + "}" * 40), id="mixed-80-levels"),
]


@pytest.mark.parametrize("raw", DEEP)
async def test_deep_nesting_is_refused_before_parsing(hostile, raw):
    error = assert_refused(await hostile.post(raw), "body", code="InvalidParameter")
    assert f"more than {L.JSON_DEPTH_MAX} levels deep" in error["message"]


async def test_nesting_at_the_limit_parses_and_the_schema_names_the_field(hostile):
    # 64 levels in all: the task object, then 63 arrays.
    raw = with_raw("tools", nested(L.JSON_DEPTH_MAX - 1))
    error = assert_refused(await hostile.post(raw), "tools[0]")
    assert "must be an object" in error["message"]


async def test_brackets_inside_strings_do_not_count(hostile):
    prompt = "[" * 10_000 + '\\"' + "{" * 10_000
    response = await hostile.post(GOOD.replace("a heron", prompt), ACCEPTED)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize("raw", [
    pytest.param("[" + ",".join(["[]"] * 100_000) + "]", id="100000-empty-arrays"),
    pytest.param("[" + ",".join(["1"] * (L.JSON_TOKENS_MAX + 1)) + "]", id="10001-numbers"),
    pytest.param(with_raw("content", "[" + ",".join(['{"type":"text","text":"x"}'] * 2000) + "]"),
                 id="2000-content-items"),
])
async def test_too_many_values_are_refused_before_parsing(hostile, raw):
    error = assert_refused(await hostile.post(raw), "body")
    assert "JSON tokens" in error["message"]


@pytest.mark.parametrize(("field", "raw", "fragment"), [
    ("seed", "1e999", "too large for a number"),
    ("seed", "-1e999", "too large for a number"),
    ("duration", "1" + "0" * 5000, "5,001 digits"),
    ("priority", "-" + "9" * 400, "400 digits"),
    ("execution_expires_after", "1" + "0" * 100_000, "digits"),
    ("seed", "NaN", "NaN is not a JSON value"),
    ("duration", "Infinity", "Infinity is not a JSON value"),
    ("priority", "-Infinity", "-Infinity is not a JSON value"),
])
async def test_numbers_that_overflow_name_their_field(hostile, field, raw, fragment):
    error = assert_refused(await hostile.post(with_raw(field, raw)), field)
    assert fragment in error["message"]


@pytest.mark.parametrize(("field", "raw"), [
    ("seed", "1e308"), ("seed", "4294967296"), ("priority", "1.0"), ("duration", "5.000000001"),
    ("seed", "-0.0"), ("execution_expires_after", "3.6e3"),
])
async def test_finite_numbers_of_the_wrong_kind_name_their_field(hostile, field, raw):
    assert_refused(await hostile.post(with_raw(field, raw)), field)


@pytest.mark.parametrize("raw", ["1e999", "NaN", "9" * 5000])
async def test_a_hostile_number_as_the_whole_body(hostile, raw):
    assert_refused(await hostile.post(raw), "body")


@pytest.mark.parametrize("raw", [
    pytest.param(b"\xff\xfe{}", id="utf16-bom"),
    pytest.param('{"model": "x"}'.encode("utf-16"), id="utf16"),
    pytest.param('{"model": "x"}'.encode("utf-32"), id="utf32"),
    pytest.param(b'{"model": "\xc3\x28"}', id="bad-continuation"),
    pytest.param(b'{"model": "\xc0\xaf"}', id="overlong-slash"),
    pytest.param(b'{"model": "\xed\xa0\x80"}', id="encoded-surrogate"),
    pytest.param(b'{"model": "\xf4\x90\x80\x80"}', id="beyond-u10ffff"),
    pytest.param(b'{"model": "latin-1 \xe9"}', id="latin-1"),
    pytest.param(b"\xef\xbb\xbf" + GOOD.encode(), id="utf8-bom"),
])
async def test_bodies_that_are_not_utf8(hostile, raw):
    assert_refused(await hostile.post(raw), "body", code="InvalidParameter")


@pytest.mark.parametrize(("raw", "param"), [
    (GOOD.replace("a heron", "\\ud800"), "content[0].text"),
    (GOOD.replace("a heron", "tail \\udfff"), "content[0].text"),
    (GOOD.replace("a heron", "\\ude00\\ud83d"), "content[0].text"),  # a pair in the wrong order
    (GOOD.replace(MODEL_2_0, "\\ud800"), "model"),
    (with_raw("\\ud800", "1"), "body"),
    (with_raw("safety_identifier", '"\\udbff"'), "safety_identifier"),
])
async def test_lone_surrogates_are_refused_where_they_are(hostile, raw, param):
    error = assert_refused(await hostile.post(raw), param)
    assert "lone UTF-16 surrogate" in error["message"]


async def test_a_surrogate_pair_is_ordinary_text(hostile):
    response = await hostile.post(GOOD.replace("a heron", "a heron \\ud83d\\ude00"), ACCEPTED)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(("raw", "param"), [
    ('{"model": "a", "model": "b", "content": []}', "model"),
    (GOOD[:-1] + f', "model": "{MODEL_2_0}"}}', "model"),  # the same value twice is still ambiguous
    (GOOD.replace('"type": "text"', '"type": "text", "type": "image_url"'), "content[0].type"),
    (GOOD.replace('"text": "a heron"', '"text": "a heron", "text": "a crane"'), "content[0].text"),
    (with_raw("tools", '[{"type": "web_search", "type": "web_search"}]'), "tools[0].type"),
    (json.dumps({"model": MODEL_2_0, "content": [{"type": "text", "text": "x"},
                 {"type": "image_url", "image_url": {"url": "https://a.example/a.png"}}]})
     .replace('"url": "https://a.example/a.png"', '"url": "https://a.example/a.png", "url": "file:///etc/passwd"'),
     "content[1].image_url.url"),
])
async def test_duplicate_keys_are_refused_naming_the_key(hostile, raw, param):
    error = assert_refused(await hostile.post(raw), param)
    assert "appears twice" in error["message"]


@pytest.mark.parametrize(("raw", "shown"), [
    ("[]", "an array"), (f"[{GOOD}]", "an array"), ('"text"', "a string"), ("3", "a number"),
    ("-2.5", "a number"), ("null", "null"), ("true", "a boolean"),
])
async def test_a_body_that_is_not_an_object(hostile, raw, shown):
    error = assert_refused(await hostile.post(raw), "body")
    assert f"must be a JSON object, not {shown}" in error["message"]
