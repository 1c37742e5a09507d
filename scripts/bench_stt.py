"""Speech-to-text latency and word error rate: full vs fitted window, greedy vs beam.

Each sentence of ``tests.support.speech.SENTENCES`` is spoken by espeak-ng (two voices, alternating) and by
piper, framed with silence, and run through the real VAD and endpointer, so every clip and its
``voiced_end`` are what a session would hand the transcriber. Prints one row per setting:

    mode, beam, clips, median / p95 latency, WER (espeak, piper, all), fallbacks to the full window

Usage: ``.venv/bin/python scripts/bench_stt.py [--model tiny.en] [--threads 2]``
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.audio import SAMPLE_RATE, pcm16_to_float
from gateway.voice.endpoint import Endpointer, Utterance
from gateway.voice.stt import SttSettings, Transcriber
from gateway.voice.vad import VadStream
from tests.support.speech import (
    SENTENCES,
    espeak_wav,
    piper_16k,
    silence,
    word_error_rate,
)


def endpointed(speech: np.ndarray) -> tuple[np.ndarray, float]:
    """Speech framed by silence, cut by the real VAD + endpointer: (clip, voiced end in s).

    Should a comma pause split a sentence, the clip spans all its parts, so the table measures
    STT and not the endpointer.
    """
    framed = np.concatenate([silence(400), speech, silence(800)])
    stream, endpointer = VadStream(), Endpointer()
    chunks, probs = stream.process(framed)
    found = [e for c, p in zip(chunks, probs, strict=True) for e in endpointer.process(c, float(p))]
    utterances = [e for e in [*found, *endpointer.flush()] if isinstance(e, Utterance)]
    first, last = utterances[0], utterances[-1]
    return pcm16_to_float(framed[first.start : last.end]), (last.voiced_end - first.start) / SAMPLE_RATE


def corpus() -> list[tuple[str, str, np.ndarray, float]]:
    clips = []
    for i, text in enumerate(SENTENCES):
        voice = "en-us" if i % 2 == 0 else "en-gb"
        clips.append(("espeak", text, *endpointed(espeak_wav(text, voice=voice))))
        clips.append(("piper", text, *endpointed(piper_16k(text))))
    return clips


async def run(settings: SttSettings, clips: list[tuple[str, str, np.ndarray, float]]) -> dict:
    transcriber = Transcriber(settings)
    await transcriber.warm_up()
    latencies, errors, fallbacks = [], {"espeak": [], "piper": []}, 0
    for voice, text, clip, voiced_end_s in clips:
        began = time.perf_counter()
        result = await transcriber.transcribe(clip, speech_end_s=voiced_end_s)
        latencies.append(time.perf_counter() - began)
        errors[voice].append(word_error_rate(text, result.text))
        fallbacks += result.fell_back
    return {
        "median": float(np.median(latencies)),
        "p95": float(np.percentile(latencies, 95)),
        "wer_espeak": float(np.mean(errors["espeak"])),
        "wer_piper": float(np.mean(errors["piper"])),
        "wer": float(np.mean(errors["espeak"] + errors["piper"])),
        "fallbacks": fallbacks,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny.en")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    clips = corpus()
    lengths = [len(clip) / SAMPLE_RATE for _, _, clip, _ in clips]
    print(
        f"{len(clips)} clips, {min(lengths):.1f}–{max(lengths):.1f} s, model {args.model}, "
        f"{args.threads} threads"
    )
    print(
        f"{'mode':7} {'beam':>4} {'median s':>9} {'p95 s':>7} {'WER espeak':>11} "
        f"{'WER piper':>10} {'WER all':>8} {'fallbacks':>10}"
    )
    for window in ("full", "fitted"):
        for beam in (1, 5):
            settings = SttSettings(
                model=args.model, cpu_threads=args.threads, window=window, beam_size=beam
            )
            r = await run(settings, clips)
            print(
                f"{window:7} {beam:>4} {r['median']:>9.3f} {r['p95']:>7.3f} "
                f"{r['wer_espeak']:>11.1%} {r['wer_piper']:>10.1%} {r['wer']:>8.1%} "
                f"{r['fallbacks']:>6}/{len(clips)}"
            )


if __name__ == "__main__":
    asyncio.run(main())
