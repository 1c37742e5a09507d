"""The voice's hum signal on recorded clips (tests/audio/hum_clips/: the tuning set's and its
probes' clips as piper and espeak-ng said them, 16 kHz; see its README) and on made sounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, read_wav
from gateway.audio.hum import hum_features

CLIPS = Path(__file__).parent / "hum_clips"
HUMS = ("mm-hmm.piper", "mm-hmm.en-gb", "mm-hmm.en-us", "mmm.piper")
WORDS = (
    "hold-on.en-gb",
    "hold-on.piper",
    "nope.en-gb",
    "no-no.piper",
    "stop.piper",
    "yeah.piper",
    "what-time-is-it.piper",
)


def clip(name: str) -> np.ndarray:
    pcm, rate = read_wav(CLIPS / f"{name}.wav")
    assert rate == SAMPLE_RATE
    return pcm


@pytest.mark.parametrize("name", HUMS)
def test_a_synthetic_hum_is_hum_like(name):
    f = hum_features(clip(name))
    assert f is not None and f.hum_like(), f


@pytest.mark.parametrize("name", WORDS)
def test_words_are_not_hum_like_even_the_nasal_ones(name):
    f = hum_features(clip(name))
    assert f is not None and not f.hum_like(), f


def test_the_hums_are_more_nasal_than_any_word():
    """The margin the rule stands on: every hum's nasal share over every word's."""
    hums = [hum_features(clip(n)) for n in HUMS]
    words = [hum_features(clip(n)) for n in WORDS]
    assert min(h.nasal for h in hums if h) > max(w.nasal for w in words if w)


def test_a_hummed_tone_is_a_hum_and_a_long_one_is_not():
    t = np.arange(SAMPLE_RATE * 2) / SAMPLE_RATE
    f0 = 120 + 10 * np.sin(2 * np.pi * 1.5 * t)  # a gliding pitch
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    hum = sum(np.sin(k * phase) / k**2 for k in (1, 2, 3))  # harmonics falling fast: nasal
    pcm = (8000 * hum).astype(np.int16)
    short = hum_features(pcm[: SAMPLE_RATE // 2])
    assert short is not None and short.hum_like() and short.nasal > 0.9
    long = hum_features(pcm)
    assert long is not None and not long.hum_like(), "two seconds is no backchannel"


def test_a_noise_burst_is_not_a_hum():
    rng = np.random.default_rng(0)
    pcm = (3000 * rng.standard_normal(SAMPLE_RATE // 3)).astype(np.int16)
    f = hum_features(pcm)
    assert f is not None and not f.hum_like() and f.high_share > 0.3


def test_silence_and_scraps_have_no_features():
    assert hum_features(np.zeros(SAMPLE_RATE // 2, np.int16)) is None
    assert hum_features(np.zeros(100, np.int16)) is None
