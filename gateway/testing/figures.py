"""How the benchmark scripts summarise what they measured."""

from __future__ import annotations

import math
import statistics
import time


def summarise(values: list[float]) -> tuple[float, float]:
    """Median and 95th percentile (the nearest rank: a value that was measured)."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


#: A fixed sentence for :func:`piper_rtf` (about 4 s of speech).
CALIBRATION_TEXT = "The quick brown fox jumps over the lazy dog, then rests beside the river."


def piper_rtf(runs: int = 3) -> float:
    """How fast this machine is now: Piper's real-time factor for :data:`CALIBRATION_TEXT` on
    one ONNX thread, as the gateway's synthesis workers run it (best of ``runs`` after a
    warm-up, so a moment's contention does not count).

    The project's 2-core VM is not equally fast every day: ``scripts/bench_tts.py`` measured
    Piper at RTF 0.08 in one session and 0.13 in a later one, and a commit that had met the
    12-person load targets missed them by 3× on the slow day. Benchmarks print this beside
    their figures so that runs from different days can be compared (lower is faster)."""
    from gateway.render.tts import VoiceSettings, load_voice  # loads onnxruntime: only here

    voice = load_voice(VoiceSettings(), threads=1)
    rate = voice.config.sample_rate
    best = math.inf
    for run in range(runs + 1):
        began = time.perf_counter()
        samples = sum(len(c.audio_int16_bytes) // 2 for c in voice.synthesize(CALIBRATION_TEXT))
        if run:  # the first one warms up
            best = min(best, (time.perf_counter() - began) / (samples / rate))
    return round(best, 3)
