"""The Compose page's translation from form values to bodies, without Streamlit."""

from __future__ import annotations

from components.compose.body import (
    FormValues,
    MediaChoice,
    check,
    detect_mode,
    idempotency_key,
    modes_for,
    plan_tasks,
    prompt_length,
    shown_body,
)
from components.compose.fields import FRAMES_CHOICES
from dailies.spec.catalog import find_model
from dailies.spec.rules import check_request
from dailies.spec.validation import check_create_body

V20 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V10 = "doubao-seedance-1-0-pro-250528"


def test_modes_per_model():
    assert modes_for(find_model(V20)) == ["text", "first_frame", "first_last_frame", "references"]
    assert modes_for(find_model(V15))[-1] == "draft_final"
    assert "references" not in modes_for(find_model(V10))


def test_frames_choices_are_exactly_what_the_rule_accepts():
    assert FRAMES_CHOICES[0] == 29 and FRAMES_CHOICES[-1] == 289
    for n in range(1, 400):
        body = {"model": V10, "content": [{"type": "text", "text": "t"}], "frames": n}
        ok = not check_create_body(body).problems
        assert ok == (n in FRAMES_CHOICES), n


def test_prompt_length_counts_chinese_characters_and_english_words():
    length = prompt_length("一只红色的风筝 flies over the sea, it's windy")
    assert (length.cjk_chars, length.english_words) == (7, 6)
    assert prompt_length("雨" * 501).over and prompt_length("w " * 1001).over
    assert not prompt_length("雨" * 500 + " w" * 1000).over


def test_plan_tasks_by_seed_lines_and_repeat():
    values = FormValues(model=V15, prompt="a\nb", seed=7, variations=3, vary_by="seed")
    assert [(t.prompt, t.seed) for t in plan_tasks(values)] == [("a\nb", 7), ("a\nb", 8), ("a\nb", 9)]
    values.seed = -1
    assert [t.seed for t in plan_tasks(values)] == [-1, -1, -1]
    values.vary_by = "lines"
    assert [t.prompt for t in plan_tasks(values)] == ["a", "b"]
    assert len(plan_tasks(FormValues(model=V20, prompt="x", variations=2, vary_by="repeat"))) == 2


def test_every_body_of_a_plan_is_checked():
    values = FormValues(model=V15, prompt="x", seed=4294967295, variations=2, vary_by="seed", resolution="480p")
    plan = check(values)
    assert [b["seed"] for b in plan.bodies] == [4294967295, 4294967296]
    assert [p.path for p in plan.problems] == ["seed"]
    assert plan.problems[0].message.startswith("(task 2 of 2)")


def test_an_empty_slot_is_refused_by_the_request_model_at_its_path():
    values = FormValues(model=V15, mode="first_frame", prompt="x",
                        media=[MediaChoice("s", "image_url", "first_frame")])
    plan = check(values)
    assert plan.paths == {"prompt": "content[0]", "s": "content[1]"}
    assert [(p.path, p.message) for p in plan.problems] == [("content[1].image_url.url", "must not be empty")]


def test_built_bodies_pass_the_shared_rules_for_each_mode():
    image = MediaChoice("a", "image_url", "first_frame", url="https://example.com/a.png")
    last = MediaChoice("b", "image_url", "last_frame", url="asset://b")
    for values in (
        FormValues(model=V20, prompt="t", priority=3, web_search=True, generate_audio=False),
        FormValues(model=V15, mode="first_last_frame", media=[image, last], seed=5, camera_fixed=True, flex=True),
        FormValues(model=V10, prompt="t", frames=121, duration=None, seed=1),
        FormValues(model=V15, mode="draft_final", draft_task_id="cgt-1", resolution="1080p", ratio=None,
                   duration=None, watermark=True, return_last_frame=True, expires_hours=2),
    ):
        plan = check(values)
        assert plan.ok, plan.problems
        assert check_request(check_create_body(plan.bodies[0]).request) == []


def test_detect_mode():
    assert detect_mode({"content": [{"type": "text", "text": "t"}]}) == "text"
    assert detect_mode({"content": [{"type": "image_url", "image_url": {"url": "u"}}]}) == "first_frame"
    assert detect_mode({"content": [{"type": "image_url", "image_url": {"url": "u"}, "role": "first_frame"},
                                    {"type": "image_url", "image_url": {"url": "u"}, "role": "last_frame"}]}
                       ) == "first_last_frame"
    assert detect_mode({"content": [{"type": "video_url", "video_url": {"url": "u"}}]}) == "references"
    assert detect_mode({"content": [{"type": "draft_task", "draft_task": {"id": "x"}}]}) == "draft_final"


def test_idempotency_key_is_stable_per_body_and_token():
    body = {"model": V20, "content": [{"type": "text", "text": "t"}]}
    assert idempotency_key("tok", body) == idempotency_key("tok", dict(reversed(list(body.items()))))
    assert idempotency_key("tok", body) != idempotency_key("other", body)
    assert idempotency_key("tok", body) != idempotency_key("tok", {**body, "seed": 1})


def test_shown_body_shortens_data_urls_only():
    url = "data:image/png;base64," + "A" * 5000
    body = {"model": V20, "content": [{"type": "image_url", "image_url": {"url": url}}]}
    shown = shown_body(body)["content"][0]["image_url"]["url"]
    assert shown.endswith("(5,022 characters)") and len(shown) < 100
    assert body["content"][0]["image_url"]["url"] == url


def test_the_estimate_and_the_cost_follow_the_prompts_text_commands():
    """`--frames 289` at the end of a prompt is applied by the service before it renders and
    charges: the estimate and the cost Compose shows were the form's (2 s), 6x under it."""
    from dailies.generator.plan import output_spec
    from dailies.spec.prices import cost

    plan = check(FormValues(model=V10, prompt="a kite over the sea --frames 289",
                            resolution="1080p", duration=2))
    assert plan.ok
    request = check_create_body(plan.bodies[0]).request  # what the service stores, renders and charges
    assert request.frames == 289
    assert plan.estimate.tokens_each == output_spec(request, seed=1, draft=False).completion_tokens
    assert plan.cost_each.amount == cost(request).amount
