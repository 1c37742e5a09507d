"""Measurements on rendered audio (mono int16 numpy arrays), used by the render tests."""

from __future__ import annotations

import numpy as np

#: RMS below this (about -46 dBFS) counts as silence; synthesized speech peaks at -6 dBFS.
SILENCE_RMS = 0.005


def frame_rms(pcm: np.ndarray, rate: int, frame_ms: int = 10) -> np.ndarray:
    """RMS of consecutive frames, as a fraction of full scale."""
    n = rate * frame_ms // 1000
    x = pcm[: len(pcm) // n * n].astype(np.float64).reshape(-1, n) / 32768.0
    return np.sqrt((x**2).mean(axis=1))


def longest_silence_ms(pcm: np.ndarray, rate: int, frame_ms: int = 10) -> int:
    """The longest run of silent frames, in milliseconds."""
    best = run = 0
    for quiet in frame_rms(pcm, rate, frame_ms) < SILENCE_RMS:
        run = run + 1 if quiet else 0
        best = max(best, run)
    return best * frame_ms


def speech_ms(pcm: np.ndarray, rate: int, frame_ms: int = 10) -> int:
    """Milliseconds of non-silent frames."""
    return int((frame_rms(pcm, rate, frame_ms) >= SILENCE_RMS).sum()) * frame_ms


def active_rms(pcm: np.ndarray, rate: int) -> float:
    """RMS over the non-silent frames only (loudness of the speech itself)."""
    rms = frame_rms(pcm, rate)
    active = rms[rms >= SILENCE_RMS]
    return float(np.sqrt((active**2).mean())) if active.size else 0.0


def median_f0(pcm: np.ndarray, rate: int, fmin: float = 50.0, fmax: float = 400.0) -> float:
    """Median fundamental frequency over voiced frames (YIN's cumulative-mean difference)."""
    x = pcm.astype(np.float64) / 32768.0
    n, hop = int(0.04 * rate), int(0.01 * rate)
    lo, hi = int(rate / fmax), int(rate / fmin)
    f0s = []
    for start in range(0, len(x) - n - hi, hop):
        frame = x[start : start + n + hi]
        if np.sqrt(np.mean(frame[:n] ** 2)) < 4 * SILENCE_RMS:
            continue
        d = np.array([np.sum((frame[:n] - frame[tau : tau + n]) ** 2) for tau in range(hi + 1)])
        cmnd = d[1:] * np.arange(1, hi + 1) / np.maximum(np.cumsum(d[1:]), 1e-12)
        cand = np.nonzero(cmnd[lo - 1 :] < 0.15)[0]
        if cand.size:
            tau = cand[0] + lo
            while tau < hi and cmnd[tau] < cmnd[tau - 1]:  # walk down to the local minimum
                tau += 1
            f0s.append(rate / tau)
    return float(np.median(f0s)) if f0s else 0.0
