"""Prosody at a pause: does the voice sound finished?

A sentence's end is marked in the voice as well as in the words: the pitch falls to the
speaker's low range on the last stressed syllable, the last syllable is drawn out, and the
energy fades. Mid-sentence — at the pause in "Turn on the lights … in the kitchen please" — the
pitch stays level or rises (continuation rise) and the last word is cut short. A transcript of
"Turn on the lights" reads as finished; its prosody does not.

The pitch tracker is a normalised autocorrelation over 40 ms frames every 10 ms, 50–400 Hz,
numpy only, with Praat's (Boersma 1993) and RAPT's (Talkin 1995) answer to octave errors: each
frame keeps its strongest autocorrelation peaks as candidates, and the track is the path through
them that a dynamic programme (Viterbi) finds strongest, less a cost per octave jumped between
frames and per voicing switch; frames far under the loud ones, and fricatives (most power above
1 kHz), turn unvoiced. A lone frame, or the faint end of a syllable, no longer reads an octave
up (issue 28: the VAD's chunk alignment alone swung the last frames' pitch from -2.5 to +3.7
semitones on two of eight load-benchmark sentences).

Features, over the voiced audio before the pause:

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

FRAME = 640  # 40 ms: two periods of a 50 Hz voice
HOP = 160  # 10 ms
MIN_LAG = SAMPLE_RATE // 400
#: 50 Hz: a man's voice falls into creak (55–60 Hz) at a sentence's end; with a 60 Hz floor its
#: true period was out of reach and the tracker read half of it (an octave up) instead.
MAX_LAG = SAMPLE_RATE // 50
#: How much audio before the pause is read (the last few syllables, and a reference level).
WINDOW_S = 2.5
#: Pitch candidates per frame (peaks of the autocorrelation), besides "unvoiced".
CANDIDATES = 4
# The path through the candidates (Boersma's Praat method, RAPT's dynamic programming): the
# costs are Praat's defaults except the octave cost and the voicing threshold, chosen on the
# tuning set and the load sentences' chunk alignments (issue 28).
#: Strength bonus per octave up: a periodic voice correlates as well at twice its period.
OCTAVE_COST = 0.06
#: Cost of a jump between frames, per octave: a one-frame octave error costs 0.7.
OCTAVE_JUMP_COST = 0.35
#: Cost of switching between voiced and unvoiced.
VOICING_COST = 0.14
#: The strength of "unvoiced" in a frame at the loud frames' level (the old tracker's voicing
#: threshold; Praat's 0.45 let espeak's murmured consonants read as a 51 Hz voice).
VOICING_THRESHOLD = 0.6
#: Frames this far (dB) under the loud frames turn towards unvoiced, surely so 6 dB further
#: down: the faint end of the last syllable is where the tracker jumped an octave, by where
#: the VAD's chunks cut the fade (10 of 80 chunk alignments of the load benchmark's sentences).
SILENCE_DB = 25.0
#: A voice has most of its power under 1 kHz; a frame with less than half of it there is a
#: fricative, whatever its autocorrelation: with the floor at 50 Hz, the noise of espeak's final
#: "s" correlated at a long lag and read as a 52 Hz voice (an octave down, "…to Paris").
LOW_HZ = 1000
LOW_SHARE = 0.5
#: Unvoiced frames bridged inside the final voiced run (a short stop closure).
RUN_GAP = 2


def pitch_track(audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 10 ms frame: f0 in Hz (0 where unvoiced) and energy in dB (full scale).

    Each frame's candidates are the peaks of its normalised autocorrelation; the track is the
    path through them (or "unvoiced") that is strongest overall, less a cost for each octave it
    jumps between frames and for each voicing switch. One faint frame cannot jump an octave
    when its neighbours hold the pitch, and the faint end of a syllable turns unvoiced instead
    of deciding the last frames' pitch.
    """
    x = audio.astype(np.float32)
    if audio.dtype == np.int16:
        x = x / 32768.0
    n = 1 + (len(x) - FRAME) // HOP if len(x) >= FRAME else 0
    if n <= 0:
        return np.zeros(0), np.zeros(0)
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    frames = x[idx]
    frames = frames - frames.mean(axis=1, keepdims=True)
    energy = 10 * np.log10(np.mean(frames**2, axis=1) + 1e-10)
    w = np.hanning(FRAME)
    # 1024 points: lags up to 384 stay free of wrap-around (linear, not circular, correlation).
    spec = np.fft.rfft(frames * w, 1024)
    power = np.abs(spec) ** 2
    r = np.fft.irfft(power)[:, : MAX_LAG + 2]
    # Unbias for the shrinking overlap of a windowed frame with its shifted self.
    wr = np.correlate(w * w, w * w, mode="full")[FRAME - 1 : FRAME + MAX_LAG + 1]
    # Unbiasing lifts long lags past 1; capped, a multiple of the period cannot beat the period.
    nacf = np.minimum((r / np.maximum(r[:, :1], 1e-12)) / (wr / wr[0])[None, :], 1.0)
    around = nacf[:, MIN_LAG - 1 : MAX_LAG + 2]  # each lag with its neighbours
    mid = around[:, 1:-1]
    peak = (mid >= around[:, :-2]) & (mid > around[:, 2:]) & (mid > 0.3)
    # A capped peak is a plateau that the test above finds at its far end: read its middle.
    at = np.arange(mid.shape[1])
    flat_from = np.maximum.accumulate(np.where(mid < 1.0, at, -1), axis=1) + 1
    where = np.where(mid >= 1.0, (flat_from + at) // 2, at)
    lags = np.arange(MIN_LAG, MAX_LAG + 1)
    bonus = OCTAVE_COST * np.log2(MAX_LAG / lags)
    strength = np.where(peak, mid + bonus[None, :], -np.inf)
    top = np.argpartition(-strength, CANDIDATES - 1, axis=1)[:, :CANDIDATES]
    cand = np.take_along_axis(strength, top, axis=1)
    f_cand = SAMPLE_RATE / lags[np.take_along_axis(where, top, axis=1)]
    # "Unvoiced" gains strength in faint frames (Praat's silence threshold), relative to the
    # loud frames of this window; under the old floor (35 dB below the loudest) it always wins.
    rel = energy - np.percentile(energy, 95)
    unvoiced = VOICING_THRESHOLD + np.clip((-rel - SILENCE_DB) / 6.0, 0.0, None)
    unvoiced[energy < energy.max() - 35] = 10.0
    low = power[:, : 1024 * LOW_HZ // SAMPLE_RATE].sum(axis=1)
    unvoiced[low < LOW_SHARE * np.maximum(power.sum(axis=1), 1e-12)] = 10.0
    score = np.concatenate([cand, unvoiced[:, None]], axis=1)
    octave = np.concatenate([np.log2(f_cand), np.full((n, 1), np.nan)], axis=1)
    voiced_state = ~np.isnan(octave)
    jump = OCTAVE_JUMP_COST * np.abs(octave[:-1, :, None] - octave[1:, None, :])
    switch = voiced_state[:-1, :, None] != voiced_state[1:, None, :]
    cost = np.where(switch, VOICING_COST, np.nan_to_num(jump, nan=0.0))
    # Viterbi: the best total to each state, and where it came from.
    states = np.arange(CANDIDATES + 1)
    best = score[0].copy()
    back = np.zeros((n, CANDIDATES + 1), np.int64)
    for t in range(1, n):
        total = best[:, None] - cost[t - 1]
        back[t] = total.argmax(axis=0)
        best = score[t] + total[back[t], states]
    path = np.empty(n, np.int64)
    path[-1] = int(np.argmax(best))
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    f0 = np.where(path < CANDIDATES, f_cand[np.arange(n), np.minimum(path, CANDIDATES - 1)], 0.0)
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
        if b - a > RUN_GAP:
            break
        run += 1
    return ProsodyFeatures(end_st, slope, decay, run * HOP * 1000 / SAMPLE_RATE)


@dataclass(frozen=True)
class ProsodySignal:
    """P(finished) from prosody: a logistic function of :class:`ProsodyFeatures`.

    Positive weights push towards "finished". Fitted on the benchmark set (see the module).
    """

    # Fitted by ``scripts/bench_turns.py --fit`` on 122 pauses (80 real ends, 42 inserted
    # mid-sentence pauses; piper and espeak-ng) with the old tracker: 83 % right. Fitted on one
    # voice and tested on the other: 93 % (piper → espeak), 72 % (espeak → piper) — piper's
    # mid-sentence pitch falls too. Ending low (end_st) and a fading voice (decay) say
    # "finished"; so does a drawn-out last voiced run (last_run, per 100 ms). Kept with the
    # path tracker (issue 28): refitted on the tuning set (80 % right there, 65 % for the old
    # tracker refitted) they cut fewer paused requests in the replay but leaned on last_run and
    # doubted piper's plain "Please turn off the kitchen lights." (P 0.20: a 1.5 s wait).
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
