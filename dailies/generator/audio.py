"""The preview's sound: a tune synthesized from the prompt, or the request's reference audio.

A track hands out mono float32 samples in [-1, 1] for any range, so the encoder can ask for
exactly the audio that goes with each video frame and nothing accumulates.
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Protocol

import numpy as np

from .seeding import stable_rng

AUDIO_RATE = 48000

_MAJOR_PENTATONIC = (0, 2, 4, 7, 9)
_MINOR_PENTATONIC = (0, 3, 5, 7, 10)
_WORD = re.compile(r"\w+")


class AudioTrack(Protocol):
    def samples(self, start: int, count: int) -> np.ndarray:
        """`count` mono float32 samples starting at sample `start`."""
        ...


class ToneTrack:
    """A deterministic little tune: one plucked note per word of the prompt (pitch from a hash of
    the word, on a pentatonic scale so any sequence sounds consonant) over a soft drone. Key, mode
    and tempo follow from the prompt and the seed."""

    def __init__(self, prompt: str, seed: int, total_samples: int, rate: int = AUDIO_RATE) -> None:
        rng = stable_rng("audio", seed, prompt)
        self.rate = rate
        self.total = total_samples
        self.root = 110.0 * 2 ** (int(rng.integers(0, 12)) / 12)
        scale = _MAJOR_PENTATONIC if rng.random() < 0.5 else _MINOR_PENTATONIC
        self.beat = int(rate * float(rng.choice([0.25, 0.3, 0.375])))
        self.note_length = 3 * self.beat
        words = _WORD.findall(prompt.lower()) or [str(int(value)) for value in rng.integers(0, 1000, 8)]
        beats = math.ceil(total_samples / self.beat)
        frequencies = []
        for beat in range(beats):
            word_hash = hashlib.sha256(words[beat % len(words)].encode()).digest()
            degree = scale[word_hash[0] % len(scale)]
            octave = 1 + (word_hash[1] & 1)
            frequencies.append(self.root * octave * 2 ** (degree / 12))
        # One float per beat: a 15 s clip holds at most a few dozen, whatever the prompt length.
        self.frequencies = np.array(frequencies, dtype=np.float64)

    def samples(self, start: int, count: int) -> np.ndarray:
        index = np.arange(start, start + count, dtype=np.int64)
        seconds = index / self.rate
        out = 0.05 * np.sin(2 * math.pi * self.root / 2 * seconds) * (0.8 + 0.2 * np.sin(2 * math.pi * 0.25 * seconds))
        first_note = max(0, (start - self.note_length) // self.beat)
        last_note = min(len(self.frequencies) - 1, (start + count) // self.beat)
        for note in range(first_note, last_note + 1):
            onset = note * self.beat
            since = index - onset
            active = (since >= 0) & (since < self.note_length)
            if not active.any():
                continue
            t = since[active] / self.rate
            envelope = np.minimum(1.0, t / 0.01) * np.exp(-t / 0.18)
            frequency = self.frequencies[note]
            tone = np.sin(2 * math.pi * frequency * t) + 0.3 * np.sin(4 * math.pi * frequency * t)
            out[active] += 0.22 * envelope * tone
        # Fade in and out over 20 ms so the track starts and ends without a click.
        fade = int(0.02 * self.rate)
        out *= np.clip(np.minimum(index, self.total - 1 - index) / fade, 0.0, 1.0)
        return out.astype(np.float32)


class LoopedClip:
    """Reference audio laid under the video: trimmed when longer, looped when shorter."""

    def __init__(self, clip: np.ndarray) -> None:
        if clip.size == 0:
            raise ValueError("an audio clip needs at least one sample")
        self.clip = np.asarray(clip, dtype=np.float32)

    def samples(self, start: int, count: int) -> np.ndarray:
        return self.clip[np.arange(start, start + count) % self.clip.size]
