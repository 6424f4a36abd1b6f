"""Text-to-video previews, decoded with PyAV: format, size, length, sound, watermark, last frame,
determinism. Mostly 480p and short clips, to stay quick."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from dailies.spec.pixels import estimate_tokens

from .conftest import RenderFn
from .media_fixtures import (
    MODEL_1_0,
    MODEL_1_5,
    MODEL_2_0,
    dominant_frequency,
    lower_right,
    mean_difference,
    upper_left,
)

PROMPT = [{"type": "text", "text": "A paper boat sails across a rain puddle at dusk"}]
CHROMIUM_PROFILES = {"High", "Main", "Constrained Baseline", "Baseline"}


def test_text_to_video_is_a_browser_playable_mp4_with_mono_aac(render: RenderFn) -> None:
    rendered = render(MODEL_2_0, PROMPT, resolution="480p", duration=4, seed=11)
    video, result = rendered.video, rendered.result

    assert video.codec == "h264" and video.profile in CHROMIUM_PROFILES and video.pix_fmt == "yuv420p"
    assert video.moov_before_mdat, "faststart: the index must precede the media data"
    assert (video.width, video.height) == (864, 496)
    assert video.frame_count == 97 and video.fps == 24
    assert video.seconds == pytest.approx(97 / 24, abs=0.05)
    assert video.metadata.get("title") == "Dailies preview"
    assert "preview renderer" in video.metadata.get("comment", "")

    audio = video.audio
    assert audio is not None and audio.codec == "aac" and audio.channels == 1 and audio.sample_rate == 48000
    assert audio.seconds == pytest.approx(97 / 24, abs=0.05)
    assert float(np.sqrt(np.mean(audio.samples**2))) > 0.01, "the synthesized track is audible"

    assert result.video_path.name == "cgt-20260101000000-test0.mp4" and result.last_frame_path is None
    assert (result.width, result.height, result.resolution, result.ratio) == (864, 496, "480p", "16:9")
    assert (result.duration, result.frames, result.frame_count, result.fps) == (4, None, 97, 24)
    assert result.seed == 11 and result.generate_audio is True
    assert result.tools_used == [] and result.web_search_calls == 0
    assert result.completion_tokens == estimate_tokens(864, 496, 4)
    # Only the finished file is left: no partial files, no scratch folders.
    assert sorted(p.name for p in rendered.output_dir.iterdir()) == [result.video_path.name]


def test_same_seed_same_frames_and_sound_other_seed_differs(render: RenderFn) -> None:
    first = render(MODEL_1_5, PROMPT, resolution="480p", duration=4, seed=5)
    again = render(MODEL_1_5, PROMPT, resolution="480p", duration=4, seed=5)
    other = render(MODEL_1_5, PROMPT, resolution="480p", duration=4, seed=6)
    assert first.video.frame_hashes == again.video.frame_hashes
    assert np.array_equal(first.video.audio.samples, again.video.audio.samples)
    assert mean_difference(first.video.first, other.video.first) > 5
    assert not np.array_equal(first.video.audio.samples, other.video.audio.samples)


def test_the_picture_moves_and_depends_on_the_prompt(render: RenderFn) -> None:
    rendered = render(MODEL_1_0, PROMPT, resolution="480p", frames=29, seed=5)
    assert len(set(rendered.video.frame_hashes)) == 29, "every frame differs from the others"
    other_prompt = render(MODEL_1_0, [{"type": "text", "text": "Snow on a lighthouse"}], resolution="480p",
                          frames=29, seed=5)
    assert mean_difference(rendered.video.first, other_prompt.video.first) > 5


def test_frames_give_exactly_that_many_frames(render: RenderFn) -> None:
    rendered = render(MODEL_1_0, PROMPT, resolution="480p", frames=33, ratio="1:1")
    assert rendered.video.frame_count == 33
    assert (rendered.video.width, rendered.video.height) == (640, 640)
    assert (rendered.result.frames, rendered.result.duration, rendered.result.frame_count) == (33, None, 33)
    # Generation 1.0 Pro makes no sound: no audio stream at all.
    assert rendered.video.audio is None and rendered.result.generate_audio is False


def test_generate_audio_false_leaves_out_the_audio_stream(render: RenderFn) -> None:
    rendered = render(MODEL_2_0, PROMPT, resolution="480p", duration=4, generate_audio=False)
    assert rendered.video.audio is None and rendered.result.generate_audio is False


def test_draft_renders_480p_at_draft_price(render: RenderFn) -> None:
    rendered = render(MODEL_1_5, PROMPT, draft=True, resolution="480p", duration=4, generate_audio=False)
    assert (rendered.video.width, rendered.video.height, rendered.result.resolution) == (864, 496, "480p")
    assert rendered.result.completion_tokens == estimate_tokens(864, 496, 4, draft=True)


def test_model_picks_duration_gives_five_seconds(render: RenderFn) -> None:
    rendered = render(MODEL_2_0, PROMPT, resolution="480p", duration=-1, generate_audio=False)
    assert rendered.video.frame_count == 121 and rendered.result.duration == 5


def test_odd_sized_ratio_renders_at_its_exact_size(render: RenderFn) -> None:
    rendered = render(MODEL_1_5, PROMPT, resolution="720p", ratio="21:9", duration=4, generate_audio=False)
    assert (rendered.video.width, rendered.video.height) == (1470, 630)
    assert rendered.video.frame_count == 97


def test_watermark_at_lower_right_and_last_frame_png_without_it(render: RenderFn) -> None:
    plain = render(MODEL_1_0, PROMPT, resolution="480p", frames=29, seed=9, return_last_frame=True)
    marked = render(MODEL_1_0, PROMPT, resolution="480p", frames=29, seed=9, return_last_frame=True, watermark=True)

    for index_frame in ("first", "last"):
        a, b = getattr(plain.video, index_frame), getattr(marked.video, index_frame)
        assert mean_difference(lower_right(a), lower_right(b)) > 8, "the watermark is visible"
        assert mean_difference(upper_left(a), upper_left(b)) < 1.5, "and nowhere else"

    png_plain = np.asarray(Image.open(plain.result.last_frame_path))
    png_marked = np.asarray(Image.open(marked.result.last_frame_path))
    assert marked.result.last_frame_path.name == "cgt-20260101000000-test0_last_frame.png"
    assert png_marked.shape == (480, 864, 3)
    # The PNG is the last frame before the watermark: identical with or without it ...
    assert np.array_equal(png_plain, png_marked)
    # ... and it is the video's last frame (up to codec loss), not another one.
    assert mean_difference(png_plain, plain.video.last) < 3
    assert mean_difference(png_plain, plain.video.first) > mean_difference(png_plain, plain.video.last)


def test_synthesized_sound_is_a_tune_not_noise(render: RenderFn) -> None:
    rendered = render(MODEL_2_0, PROMPT, resolution="480p", duration=4, seed=2)
    samples = rendered.video.audio.samples
    window = samples[48000 : 48000 + 8192]
    frequency = dominant_frequency(window, 48000)
    assert 50 < frequency < 2000
