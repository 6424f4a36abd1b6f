"""The captions' fonts (dailies.generator.typography): a Chinese prompt is drawn in real glyphs where
a CJK font is installed (CI installs Noto CJK), and the machine without one says so by falling back."""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

from dailies.generator.typography import _CJK_FONTS, _LATIN_FONTS, load_font, needs_cjk, wrap


def drawn(text: str, font) -> bytes:
    image = Image.new("L", (120, 80))
    ImageDraw.Draw(image).text((10, 10), text, font=font, fill=255)
    return image.tobytes()


def test_chinese_is_drawn_in_glyphs_of_their_own_where_a_cjk_font_is_installed():
    font = load_font(48, cjk=True)
    installed = next((p for p in _CJK_FONTS if Path(p).is_file()), None)
    if installed is not None:
        assert Path(font.path) == Path(installed)
        # Real glyphs differ from each other; a font without them draws one box for every character.
        lantern, cage, small = drawn("灯", font), drawn("笼", font), drawn("小", font)
        assert len({lantern, cage, small}) == 3 and any(lantern)
    else:
        assert getattr(font, "path", None) in (*_LATIN_FONTS, None)  # the Latin (or Pillow's) font instead


def test_chinese_text_wraps_between_characters():
    assert needs_cjk("河上的灯笼") and not needs_cjk("a paper boat")
    font = load_font(24, cjk=True)
    lines = wrap("河上的灯笼慢慢升起，照亮了整条小河", font, max_width=5 * 24)
    assert len(lines) > 1 and "".join(lines) == "河上的灯笼慢慢升起，照亮了整条小河"


def test_a_prompt_far_longer_than_a_card_is_cut_before_it_is_wrapped(monkeypatch):
    """Wrapping measures the text again for every line it cuts: a million-character word held a
    render for hours (20,000 characters took 17 s). The card is laid out from what it could show."""
    from dailies.generator import typography

    wrapped: list[int] = []
    real = typography.wrap
    monkeypatch.setattr(typography, "wrap", lambda text, font, width: (wrapped.append(len(text)),
                                                                       real(text, font, width))[1])
    box, min_size = (800, 300), 14
    font, lines, _ = typography.fit("x" * 1_000_000, box, max_size=40, min_size=min_size)
    bound = (box[0] // (min_size // 3) + 1) * (box[1] // round(min_size * 1.3) + 1) + len(typography.ELLIPSIS)
    assert wrapped and max(wrapped) <= bound  # a few thousand characters, not a million
    assert lines[-1].endswith(typography.ELLIPSIS) and all(font.getlength(line) <= box[0] for line in lines)
    # A prompt that fits is drawn whole, as before.
    assert typography._at_most_what_fits("a red fox runs through snow", box, min_size) == "a red fox runs through snow"
