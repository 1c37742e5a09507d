"""Prosody on constructed voices (a pitch track we choose) and on real synthesised speech."""

from __future__ import annotations

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.testing.speech import espeak_wav, silence
from gateway.voice.prosody import ProsodySignal, features, pitch_track


def _voice(f0_start: float, f0_end: float, seconds: float, *, fade: bool = False) -> np.ndarray:
    """A buzzy vowel whose pitch glides from ``f0_start`` to ``f0_end`` Hz."""
    n = int(seconds * SAMPLE_RATE)
    f0 = np.linspace(f0_start, f0_end, n)
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    wave = sum(np.sin(k * phase) / k for k in range(1, 8))
    envelope = np.linspace(1.0, 0.05, n) if fade else np.ones(n)
    return (0.3 * wave * envelope / np.abs(wave).max() * 32767).astype(np.int16)


def test_pitch_tracker_follows_a_glide():
    f0, energy = pitch_track(_voice(200, 100, 1.0))
    voiced = f0[f0 > 0]
    assert len(voiced) > 80
    assert abs(np.median(voiced[:10]) - 195) < 15 and abs(np.median(voiced[-10:]) - 105) < 10
    assert energy.max() > -30


def test_a_final_fall_reads_finished_and_a_level_rise_does_not():
    level = _voice(150, 150, 1.2)
    fall = np.concatenate([level, _voice(150, 95, 0.45, fade=True)])
    rise = np.concatenate([level, _voice(150, 175, 0.2)])
    p = ProsodySignal()
    finished = p.score(np.concatenate([fall, silence(150)]), len(fall))
    going_on = p.score(np.concatenate([rise, silence(150)]), len(rise))
    assert finished is not None and going_on is not None
    assert finished > 0.6 > going_on
    f = features(fall, len(fall))
    assert f is not None and f.end_st < -3 and f.decay < -10


def test_too_little_voice_is_no_verdict():
    assert ProsodySignal().score(silence(800), 12_000) is None
    assert ProsodySignal().score(_voice(150, 150, 0.08), 1280) is None


def test_a_spoken_statement_ends_low():
    pcm = espeak_wav("Please turn off the kitchen lights.")
    loud = np.flatnonzero(np.abs(pcm) > 300)
    f = features(pcm, int(loud[-1]) + 1)
    assert f is not None and f.end_st < -1.5
    assert ProsodySignal().score(pcm, int(loud[-1]) + 1) > 0.6
