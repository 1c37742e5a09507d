"""Prosody at a pause: does the voice sound finished?

A sentence's end is marked in the voice as well as in the words: the pitch falls to the
speaker's low range on the last stressed syllable, the last syllable is drawn out, and the
energy fades. Mid-sentence — at the pause in "Turn on the lights … in the kitchen please" — the
pitch stays level or rises (continuation rise) and the last word is cut short. A transcript of
"Turn on the lights" reads as finished; its prosody does not.

The pitch tracker is a normalised autocorrelation (YIN-like) over 40 ms frames every 10 ms,
60–400 Hz, numpy only. Features, over the voiced audio before the pause:

* ``end_st``: pitch of the last voiced frames in semitones relative to the utterance's median
  (negative: ended low);
* ``slope``: pitch slope over the last 250 ms of voiced frames, semitones per second;
* ``decay``: energy of the last 100 ms of voice against the utterance's loud level, dB;
* ``last_run``: length of the final voiced run (ms): a drawn-out last syllable.

They are combined by a logistic function whose weights were fitted on the benchmark's
synthetic set (``scripts/bench_turns.py --fit``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gateway.audio import SAMPLE_RATE

FRAME = 640  # 40 ms: two periods of a 60 Hz voice
HOP = 160  # 10 ms
MIN_LAG = SAMPLE_RATE // 400
MAX_LAG = SAMPLE_RATE // 60
#: How much audio before the pause is read (the last few syllables, and a reference level).
WINDOW_S = 2.5


def pitch_track(audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 10 ms frame: f0 in Hz (0 where unvoiced) and energy in dB (full scale)."""
    x = audio.astype(np.float32)
    if x.dtype != np.float32 or audio.dtype == np.int16:
        x = x / 32768.0 if audio.dtype == np.int16 else x
    n = 1 + (len(x) - FRAME) // HOP if len(x) >= FRAME else 0
    if n <= 0:
        return np.zeros(0), np.zeros(0)
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    frames = x[idx]
    frames = frames - frames.mean(axis=1, keepdims=True)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
    spec = np.fft.rfft(frames * np.hanning(FRAME), 2 * FRAME)
    r = np.fft.irfft(np.abs(spec) ** 2)[:, : MAX_LAG + 1]
    # Unbias for the shrinking overlap of a windowed frame with its shifted self.
    w = np.hanning(FRAME)
    wr = np.correlate(w * w, w * w, mode="full")[FRAME - 1 : FRAME + MAX_LAG]
    nacf = (r / np.maximum(r[:, :1], 1e-12)) / (wr / wr[0])[None, :]
    # Unbiasing lifts long lags past 1; capped, a multiple of the period cannot beat the period.
    lags = np.minimum(nacf[:, MIN_LAG:], 1.0)
    best = lags.max(axis=1)
    # The first lag near the best one: avoids locking onto a multiple of the period.
    first = np.argmax(lags >= 0.9 * best[:, None], axis=1) + MIN_LAG
    loud = energy > energy.max() - 35
    voiced = (best > 0.6) & loud
    f0 = np.where(voiced, SAMPLE_RATE / first, 0.0)
    return f0, energy


@dataclass(frozen=True)
class ProsodyFeatures:
    """What the voice did before the pause (see the module's docstring)."""

    end_st: float
    slope: float
    decay: float
    last_run: float


def features(audio: np.ndarray, voiced_end: int) -> ProsodyFeatures | None:
    """Features of the speech before ``voiced_end``; None with under 150 ms of voice."""
    start = max(0, voiced_end - int(WINDOW_S * SAMPLE_RATE))
    f0, energy = pitch_track(audio[start:voiced_end])
    voiced = np.flatnonzero(f0 > 0)
    if len(voiced) < 15:
        return None
    st = 12 * np.log2(f0[voiced] / np.median(f0[voiced]))
    # A single voiced frame's octave error is common: smooth with a running median of 5.
    if len(st) >= 5:
        pad = np.pad(st, 2, mode="edge")
        st = np.median(np.lib.stride_tricks.sliding_window_view(pad, 5), axis=1)
    end_st = float(np.median(st[-5:]))
    tail = voiced >= voiced[-1] - 25
    t = voiced[tail] * HOP / SAMPLE_RATE
    slope = float(np.polyfit(t, st[tail], 1)[0]) if len(t) >= 4 else 0.0
    loud = float(np.percentile(energy[voiced], 90))
    decay = float(np.mean(energy[max(0, len(energy) - 10) :]) - loud)
    # The final voiced run: consecutive voiced frames (gaps of one frame bridged).
    run = 1
    for a, b in zip(voiced[::-1][1:], voiced[::-1][:-1], strict=False):
        if b - a > 2:
            break
        run += 1
    return ProsodyFeatures(end_st, slope, decay, run * HOP * 1000 / SAMPLE_RATE)


@dataclass(frozen=True)
class ProsodySignal:
    """P(finished) from prosody: a logistic function of :class:`ProsodyFeatures`.

    Positive weights push towards "finished". Fitted on the benchmark set (see the module).
    """

    # Fitted by ``scripts/bench_turns.py --fit`` on 122 pauses (80 real ends, 42 inserted
    # mid-sentence pauses; piper and espeak-ng): 83 % right. Fitted on one voice and tested on
    # the other: 93 % (piper → espeak), 72 % (espeak → piper) — piper's mid-sentence pitch
    # falls too. Ending low (end_st) and a fading voice (decay) say "finished"; so does a
    # drawn-out last voiced run (last_run, per 100 ms).
    bias: float = -3.40
    w_end_st: float = -0.548
    w_slope: float = 0.040
    w_decay: float = -0.149
    w_last_run: float = 0.250

    def score(self, audio: np.ndarray, voiced_end: int) -> float | None:
        """P(finished), or None when there is too little voice to read."""
        f = features(audio, voiced_end)
        return None if f is None else self.from_features(f)

    def from_features(self, f: ProsodyFeatures) -> float:
        """P(finished) for these features."""
        z = (
            self.bias
            + self.w_end_st * f.end_st
            + self.w_slope * f.slope
            + self.w_decay * f.decay
            + self.w_last_run * f.last_run / 100
        )
        return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
