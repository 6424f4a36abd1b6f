"""Text commands at the end of a prompt: parsed, applied to the request, refused when bad."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dailies.spec.models import CreateTaskRequest
from dailies.spec.text_commands import COMMAND_NAMES, apply_text_commands, parse_text, prompt_of

# (written name, value as written, field, parsed value): every name, long and short.
EVERY_COMMAND = [
    ("resolution", "720p", "resolution", "720p"),
    ("rs", "480p", "resolution", "480p"),
    ("ratio", "16:9", "ratio", "16:9"),
    ("rt", "9:16", "ratio", "9:16"),
    ("duration", "5", "duration", 5),
    ("dur", "4", "duration", 4),
    ("seed", "11", "seed", 11),
    ("camerafixed", "true", "camera_fixed", True),
    ("cf", "false", "camera_fixed", False),
    ("watermark", "true", "watermark", True),
    ("wm", "false", "watermark", False),
    ("frames", "121", "frames", 121),
]


def request(text: str, **fields) -> CreateTaskRequest:
    return CreateTaskRequest.model_validate({"model": "doubao-seedance-1-0-pro-250528",
                                             "content": [{"type": "text", "text": text}], **fields})


def test_every_name_is_covered():
    written = {name for name, *_ in EVERY_COMMAND} | {"fps", "framepersecond", "framespersecond"}
    assert written == set(COMMAND_NAMES)


@pytest.mark.parametrize(("name", "raw", "field", "value"), EVERY_COMMAND)
def test_each_command_sets_its_field_and_leaves_the_prompt(name, raw, field, value):
    applied = apply_text_commands(request(f"a fox in snow --{name} {raw}"))
    assert applied.problems == []
    assert getattr(applied.request, field) == value
    assert applied.fields_from_text == {field: "content[0].text"}
    assert prompt_of(applied.request.content[0].text) == "a fox in snow"


def test_the_comfyui_prompt_is_read_whole():
    text = ("A red fox trots through snow --resolution 720p --ratio 16:9 --duration 5 --seed 0 "
            "--camerafixed false --watermark false")
    applied = apply_text_commands(request(text))
    r = applied.request
    assert applied.problems == []
    assert (r.resolution, r.ratio, r.duration, r.seed, r.camera_fixed, r.watermark) == ("720p", "16:9", 5, 0, False,
                                                                                        False)
    assert prompt_of(text) == "A red fox trots through snow"


def test_short_forms_with_double_spaces_and_fps():
    parsed = parse_text("harbour at dawn --rs 480p  --rt 9:16 --dur 4 --fps 24 --framepersecond 24")
    assert parsed.prompt == "harbour at dawn"
    assert [c.field for c in parsed.commands] == ["resolution", "ratio", "duration", "framespersecond",
                                                  "framespersecond"]
    assert apply_text_commands(request(parsed.prompt + " --fps 24")).problems == []


def test_dashes_inside_a_prompt_are_words():
    parsed = parse_text("a sign reading --stop here-- and -- a cat --no-music please --dur 5")
    # `--dur 5` is a command; `please` after an unknown `--no-music` ends the commands.
    assert parsed.prompt == "a sign reading --stop here-- and -- a cat --no-music please"
    assert [c.field for c in parsed.commands] == ["duration"]
    assert parse_text("no commands at all").commands == ()
    assert parse_text("ends with a dangling --rs").commands == ()


def test_only_commands_leave_an_empty_prompt():
    parsed = parse_text("--rs 720p --dur 5")
    assert parsed.prompt == "" and len(parsed.commands) == 2


@pytest.mark.parametrize("text", [
    "x --rs 2k", "x --resolution 720P", "x --rt 2:1", "x --dur five", "x --dur 5.5", "x --seed abc",
    "x --cf yes", "x --wm 1", "x --fps 30", "x --frames many", "x --seed 99999999999999999999",
])
def test_bad_values_are_problems_of_the_text(text):
    applied = apply_text_commands(request(text))
    assert [p.path for p in applied.problems] == ["content[0].text"]
    assert text.split()[1] in applied.problems[0].message


def test_a_parameter_given_both_ways_must_agree():
    agreeing = apply_text_commands(request("x --dur 5", duration=5))
    assert agreeing.problems == [] and agreeing.request.duration == 5
    clash = apply_text_commands(request("x --dur 5", duration=10))
    [problem] = clash.problems
    assert problem.path == "content[0].text"
    assert "--dur 5" in problem.message and "duration: 10" in problem.message
    assert clash.request.duration == 10  # the body's value is left alone


def test_a_parameter_repeated_in_the_text_must_agree():
    assert apply_text_commands(request("x --dur 5 --duration 5")).problems == []
    [problem] = apply_text_commands(request("x --dur 5 --duration 6")).problems
    assert problem.path == "content[0].text" and "repeats duration" in problem.message


def test_booleans_clash_with_the_body_in_lowercase_words():
    [problem] = apply_text_commands(request("x --wm true", watermark=False)).problems
    assert "watermark: false" in problem.message


# ---------- through the whole contract: the same rules as body fields ----------


def check(text: str, model: str = "doubao-seedance-1-0-pro-250528", **fields):
    from dailies.spec.validation import check_create_body

    return check_create_body({"model": model, "content": [{"type": "text", "text": text}], **fields})


def test_commands_are_judged_by_the_rules_of_the_model():
    # 4k is for 2.0 only; seed is not for 2.0; frames are 1.0 only: each named by the text.
    [problem] = check("x --rs 4k").problems
    assert problem.path == "content[0].text" and "resolution" in problem.message and "4k" in problem.message
    [problem] = check("x --seed 5", model="doubao-seedance-2-0-260128").problems
    assert problem.path == "content[0].text" and "seed" in problem.message
    [problem] = check("x --frames 30").problems
    assert problem.path == "content[0].text" and "25 + 4n" in problem.message
    [problem] = check("x --dur 20").problems
    assert problem.path == "content[0].text" and "duration" in problem.message


def test_valid_commands_make_a_valid_request_with_the_fields_set():
    checked = check("A red fox --rs 480p --rt 1:1 --dur 3 --seed 7 --cf true --wm true --fps 24")
    assert checked.ok, checked.problems
    r = checked.request
    assert (r.resolution, r.ratio, r.duration, r.seed, r.camera_fixed, r.watermark) == ("480p", "1:1", 3, 7, True, True)


def test_a_body_field_out_of_range_is_still_named_by_its_field():
    [problem] = check("x --rs 720p", duration=99).problems
    assert problem.path == "duration"


def test_byteplus_ids_take_text_commands_too():
    assert check("x --rs 720p --dur 5", model="seedance-1-0-pro-fast-251015").ok
    assert check("x --rs 720p", model="dreamina-seedance-2-0-260128").ok


@pytest.mark.parametrize("seed", ["-5", "4294967296", "99999999999"])
def test_a_seed_command_is_held_to_the_seed_fields_range(seed):
    """The body's seed is -1..4294967295; the same in the text was taken as it came, stored, and every
    read of the project's tasks then answered 500."""
    applied = apply_text_commands(request(f"a fox --seed {seed}"))
    assert [(p.path, p.message.split(":")[0]) for p in applied.problems] == [("content[0].text", f"--seed {seed}")]
    assert "greater than or equal to -1" in applied.problems[0].message or "less than or equal to" in \
        applied.problems[0].message
    assert applied.request.seed is None
    assert apply_text_commands(request("a fox --seed 4294967295")).request.seed == 4294967295


def _parse_as_before(text: str):
    """The first parser, a search from the end per command (quadratic on long tails): the oracle."""
    import re

    last = re.compile(r"(?:^|\s)--([A-Za-z_]+)\s+(\S+)\s*$")
    commands, rest = [], text
    while (match := last.search(rest)) is not None:
        if COMMAND_NAMES.get(match.group(1).lower()) is None:
            break
        commands.append((match.group(1), match.group(2)))
        rest = rest[:match.start()]
    return rest.rstrip(), list(reversed(commands))


WORDS = ["a", "fox", "--rs", "480p", "--seed", "7", "--zoom", "2", "--", "-x", "--ratio", "16:9", "\u3000",
         "--DUR", "5", "--fps", "24", "\u72d0\u72f8"]


@given(st.lists(st.sampled_from(WORDS), max_size=14), st.lists(st.sampled_from([" ", "  ", "\n", "\t"]),
                                                                min_size=14, max_size=14))
def test_the_linear_parser_reads_every_text_as_the_first_did(words, gaps):
    text = "".join(w + g for w, g in zip(words, gaps, strict=False)).rstrip(" ") if words else ""
    parsed = parse_text(text)
    assert (parsed.prompt, [(c.name, c.raw) for c in parsed.commands]) == _parse_as_before(text)


def test_a_long_tail_of_commands_is_read_whole():
    parsed = parse_text("a fox" + " --rs 480p" * 20_000)
    assert parsed.prompt == "a fox" and len(parsed.commands) == 20_000
