"""Speech-to-text latency and word error rate: window, beam, threads and padding.

Each sentence of ``gateway.testing.speech.SENTENCES`` is spoken by espeak-ng (two voices, alternating) and by
piper, framed with silence, and run through the real VAD and endpointer, so every clip and its
``voiced_end`` are what a session would hand the transcriber. Prints one row per setting:

    mode, beam, threads, padding, median / p95 latency, WER (espeak, piper, all), fallbacks

The full window at each beam, then every fitted combination of ``--threads`` and ``--padding``
(``SttSettings.cpu_threads`` and ``fitted_padding_s``) at each beam.

Usage: ``.venv/bin/python scripts/bench_stt.py [--model tiny.en] [--threads 1,2] [--padding 1,4]``
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
from gateway.testing.speech import (
    SENTENCES,
    espeak_wav,
    piper_16k,
    silence,
    word_error_rate,
)
from gateway.voice.endpoint import Endpointer, Utterance
from gateway.voice.stt import SttSettings, Transcriber
from gateway.voice.vad import VadStream


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
    return pcm16_to_float(framed[first.start : last.end]), (
        last.voiced_end - first.start
    ) / SAMPLE_RATE


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
    parser.add_argument(
        "--threads", default="1,2", help="comma-separated SttSettings.cpu_threads to try (1,2)"
    )
    parser.add_argument(
        "--padding", default="1,4", help="comma-separated fitted_padding_s to try (1,4)"
    )
    parser.add_argument("--beams", default="1,5", help="comma-separated beam sizes (1,5)")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    paddings = [float(p) for p in args.padding.split(",")]
    beams = [int(b) for b in args.beams.split(",")]
    clips = corpus()
    lengths = [len(clip) / SAMPLE_RATE for _, _, clip, _ in clips]
    print(f"{len(clips)} clips, {min(lengths):.1f}–{max(lengths):.1f} s, model {args.model}")
    print(
        f"{'mode':7} {'beam':>4} {'threads':>7} {'padding':>7} {'median s':>9} {'p95 s':>7} "
        f"{'WER espeak':>11} {'WER piper':>10} {'WER all':>8} {'fallbacks':>10}"
    )
    rows = [("full", beam, max(threads), 0.0) for beam in beams]
    rows += [("fitted", b, t, p) for b in beams for t in threads for p in paddings]
    for window, beam, n, padding in rows:
        settings = SttSettings(
            model=args.model,
            cpu_threads=n,
            window=window,  # type: ignore[arg-type]
            beam_size=beam,
            **({"fitted_padding_s": padding} if padding else {}),
        )
        r = await run(settings, clips)
        print(
            f"{window:7} {beam:>4} {n:>7} {padding or '–':>7} {r['median']:>9.3f} "
            f"{r['p95']:>7.3f} {r['wer_espeak']:>11.1%} {r['wer_piper']:>10.1%} "
            f"{r['wer']:>8.1%} {r['fallbacks']:>6}/{len(clips)}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main())
