"""Wake-word recall, false wakes per hour, firing delay and CPU cost, on generated speech.

Wake clips: each model's phrase spoken by piper (five speeds with prosody noise off, four natural
renditions) and by espeak-ng (eight voices at 130, 165 and 200 words per minute): 33 voices, each
clean and with white and pink noise at 15 dB SNR, so 99 clips per model, each framed by silence.
The true end of the phrase is the clip's last sample above -40 dB of its loudest 10 ms.

Wake-free audio: the sentences of ``gateway.testing.speech.SENTENCES`` spoken by piper and five espeak-ng
voices, three of them again with pink noise at 15 dB, then white and pink noise alone, all one
stream (about 14 minutes). The other models' wake phrases (their clean clips) are counted apart:
they are the nearest thing to a confusable phrase this set has.

The phrase spotter ("hey floor") is measured the same way on "Hey floor, what time is it?" and on
"Hey floor." said alone, clean and with pink noise, and on the same wake-free stream; its CPU is
the process time (all threads) per minute of audio.

Usage: ``.venv/bin/python scripts/bench_wake.py [--json] [--skip-phrase]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.audio import SAMPLE_RATE
from gateway.testing.speech import (
    SENTENCES,
    WAKE_PHRASES,
    coloured_noise,
    espeak_wav,
    first_pause,
    piper_variant,
    silence,
    trim,
    with_noise,
)
from gateway.voice.stt import Transcriber
from gateway.voice.wake import MODEL_LATENCY_MS, PhraseSpotter, WakeWordDetector

PIPER = [(ls, None) for ls in (0.8, 0.9, 1.0, 1.15, 1.3)] + [
    (ls, draw) for ls in (0.9, 1.1) for draw in (0, 1)
]
ESPEAK = [
    (voice, wpm)
    for voice in (
        "en-us",
        "en-gb",
        "en-gb-x-rp",
        "en-us-nyc",
        "en-029",
        "en-gb-scotland",
        "en-us+f3",
        # Not "en-gb+f2": espeak-ng ignores a variant after "en-gb" (it was en-gb again until
        # 2026-12-04); after "en" it does not.
        "en+f2",
    )
    for wpm in (130, 165, 200)
]
LEAD_MS, TAIL_MS = 700, 1200
CHUNK = 8000  # samples fed per call (0.5 s); results do not depend on it
HOUR = 3600 * SAMPLE_RATE


def voices(text: str) -> list[tuple[str, np.ndarray]]:
    """(engine, trimmed clip) of ``text`` in every voice of the set."""
    clips = [("piper", trim(piper_variant(text, ls, draw))) for ls, draw in PIPER]
    clips += [("espeak", trim(espeak_wav(text, voice=v, wpm=w))) for v, w in ESPEAK]
    return clips


def wake_set(text: str) -> list[dict]:
    """Each voice clean, with white and with pink noise: dicts with the clip and its true end."""
    items = []
    for i, (engine, speech) in enumerate(voices(text)):
        clip = np.concatenate([silence(LEAD_MS), speech, silence(TAIL_MS)])
        end = LEAD_MS * SAMPLE_RATE // 1000 + len(speech)
        items.append({"engine": engine, "noise": "clean", "clip": clip, "end": end})
        for colour in ("white", "pink"):
            noisy = with_noise(clip, speech, colour, 15, seed=i)
            items.append({"engine": engine, "noise": colour, "clip": noisy, "end": end})
    return items


def wake_free_stream() -> np.ndarray:
    """About 14 minutes of speech and noise without any wake phrase, as one stream."""
    gap = silence(400)
    parts = []
    for voice in ("piper", "en-us", "en-gb", "en-gb-x-rp", "en-029", "en-us+f3"):
        for i, text in enumerate(SENTENCES):
            speech = piper_variant(text) if voice == "piper" else espeak_wav(text, voice=voice)
            parts += [speech, gap]
            if voice in ("piper", "en-us", "en-gb"):
                parts += [with_noise(np.concatenate([speech, gap]), speech, "pink", 15, i)]
    for colour, level in (("white", 0.03), ("pink", 0.03), ("white", 0.1), ("pink", 0.1)):
        noise = level * 32767 * coloured_noise(60 * SAMPLE_RATE, colour, seed=7)
        parts.append(noise.astype(np.int16))
    return np.concatenate(parts)


def feed(detector: WakeWordDetector, audio: np.ndarray) -> tuple[list, float]:
    """Detections and CPU seconds for ``audio`` fed in 0.5 s chunks."""
    began = time.process_time()
    found = [d for i in range(0, len(audio), CHUNK) for d in detector.process(audio[i : i + CHUNK])]
    return found, time.process_time() - began


def bench_model(name: str, negatives: np.ndarray) -> dict:
    detector = WakeWordDetector(name)
    hits: dict[str, list[int]] = {}
    delays, errors = [], []
    for item in wake_set(WAKE_PHRASES[name]):
        detector.reset()
        found, _ = feed(detector, item["clip"])
        for key in (item["engine"], item["noise"], "all"):
            hits.setdefault(key, []).append(len(found) >= 1)
        if found:
            delays.append((found[0].detected_at - item["end"]) * 1000 / SAMPLE_RATE)
            errors.append(abs(found[0].end - item["end"]) * 1000 / SAMPLE_RATE)
    detector.reset()
    false, cpu = feed(detector, negatives)
    others = 0
    for other, text in WAKE_PHRASES.items():
        if other != name:
            for _, speech in voices(text):
                detector.reset()
                others += bool(
                    detector.process(np.concatenate([silence(500), speech, silence(800)]))
                )
    return {
        "model": name,
        "phrase": detector.phrase,
        "clips": len(hits["all"]),
        "recall": {k: float(np.mean(v)) for k, v in hits.items()},
        "false_wakes": len(false),
        "wake_free_s": len(negatives) / SAMPLE_RATE,
        "false_wakes_per_hour": len(false) * HOUR / len(negatives),
        "other_phrases_accepted": others,
        "other_phrases": 3 * (len(PIPER) + len(ESPEAK)),
        "delay_ms": percentiles(delays),
        "end_error_ms": percentiles(errors),
        "latency_setting_ms": MODEL_LATENCY_MS[name],
        "rtf": cpu / (len(negatives) / SAMPLE_RATE),
    }


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"p10": None, "median": None, "p90": None}
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return {"p10": round(float(p10)), "median": round(float(median)), "p90": round(float(p90))}


async def bench_phrase(negatives: np.ndarray) -> dict:
    transcriber = Transcriber()
    await transcriber.warm_up()
    result: dict = {"model": "phrase:hey floor", "recall": {}}
    delays, errors = [], []
    for form, text in (("request", "Hey floor, what time is it?"), ("alone", "Hey floor.")):
        hits = []
        for i, (engine, speech) in enumerate(voices(text)):
            # "Hey floor" ends where the comma pause begins (fast espeak voices make none: their
            # clips count for recall only), or with the clip when said alone.
            end_in_speech = len(speech)
            if form == "request":
                try:
                    end_in_speech = first_pause(speech)
                except ValueError:
                    end_in_speech = None
            clip = np.concatenate([silence(LEAD_MS), speech, silence(TAIL_MS)])
            for noisy in (False, True):
                audio = with_noise(clip, speech, "pink", 15, seed=i) if noisy else clip
                found = await spot(transcriber, audio)
                hits.append(bool(found))
                key = f"{form} {engine}{' pink' if noisy else ''}"
                result["recall"].setdefault(key, []).append(bool(found))
                if found and end_in_speech is not None:
                    end = LEAD_MS * SAMPLE_RATE // 1000 + end_in_speech
                    delays.append((found[0].detected_at - end) * 1000 / SAMPLE_RATE)
                    errors.append(abs(found[0].end - end) * 1000 / SAMPLE_RATE)
        result["recall"][form] = hits
    result["recall"] = {k: float(np.mean(v)) for k, v in result["recall"].items()}
    spotter = PhraseSpotter("hey floor", transcriber)
    began_cpu, began = time.process_time(), time.perf_counter()
    false = [
        d
        for i in range(0, len(negatives), CHUNK)
        for d in await spotter.process(negatives[i : i + CHUNK])
    ]
    cpu, wall = time.process_time() - began_cpu, time.perf_counter() - began
    minutes = len(negatives) / SAMPLE_RATE / 60
    result.update(
        false_wakes=len(false),
        wake_free_s=len(negatives) / SAMPLE_RATE,
        false_wakes_per_hour=len(false) * HOUR / len(negatives),
        delay_ms=percentiles(delays),
        end_error_ms=percentiles(errors),
        cpu_s_per_minute=cpu / minutes,
        wall_s_per_minute=wall / minutes,
        rtf=cpu / (len(negatives) / SAMPLE_RATE),
    )
    return result


async def spot(transcriber: Transcriber, audio: np.ndarray) -> list:
    spotter = PhraseSpotter("hey floor", transcriber)
    return [
        d for i in range(0, len(audio), CHUNK) for d in await spotter.process(audio[i : i + CHUNK])
    ]


def show(rows: list[dict]) -> None:
    minutes = rows[0]["wake_free_s"] / 60
    print(f"wake-free stream: {minutes:.1f} min of speech and noise\n")
    print(
        f"{'model':18} {'clips':>5} {'recall':>6} {'piper':>6} {'espeak':>6} {'clean':>6} "
        f"{'white':>6} {'pink':>6} {'false/h':>8} {'others':>7} "
        f"{'delay ms p10/50/90':>19} {'|end err| 50/90':>15} {'RTF':>7}"
    )
    for r in rows:
        if r["model"].startswith("phrase:"):
            continue
        rc, d, e = r["recall"], r["delay_ms"], r["end_error_ms"]
        print(
            f"{r['model']:18} {r['clips']:>5} {rc['all']:>6.0%} {rc['piper']:>6.0%} "
            f"{rc['espeak']:>6.0%} {rc['clean']:>6.0%} {rc['white']:>6.0%} {rc['pink']:>6.0%} "
            f"{r['false_wakes_per_hour']:>8.1f} {r['other_phrases_accepted']:>3}/{r['other_phrases']:<3} "
            f"{d['p10']:>5}/{d['median']}/{d['p90']:<5} {e['median']:>7}/{e['p90']:<7} {r['rtf']:>7.4f}"
        )
    for r in rows:
        if r["model"].startswith("phrase:"):
            print(f"\n{r['model']}: recall by form, voice and noise")
            for key, value in r["recall"].items():
                print(f"  {key:28} {value:>5.0%}")
            d, e = r["delay_ms"], r["end_error_ms"]
            print(
                f"  false wakes {r['false_wakes']} in {minutes:.1f} min ({r['false_wakes_per_hour']:.1f}/h); "
                f"delay after the phrase (audio time) p10/50/90 {d['p10']}/{d['median']}/{d['p90']} ms; "
                f"|end err| median/p90 {e['median']}/{e['p90']} ms\n"
                f"  CPU {r['cpu_s_per_minute']:.1f} s per minute of audio (all threads; "
                f"wall {r['wall_s_per_minute']:.1f} s), RTF {r['rtf']:.3f}"
            )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--skip-phrase", action="store_true", help="skip the Whisper spotter")
    args = parser.parse_args()
    negatives = wake_free_stream()
    rows = [bench_model(name, negatives) for name in WAKE_PHRASES]
    if not args.skip_phrase:
        rows.append(await bench_phrase(negatives))
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        show(rows)


if __name__ == "__main__":
    asyncio.run(main())
