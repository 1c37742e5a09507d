"""Speech synthesis speed: time to first audio and real-time factor, plain text and SSML.

Run: .venv/bin/python scripts/bench_tts.py [--runs 5] [--rate 16000] [--threads 1]
Time to first audio is from the call to the first PCM chunk (what a listener waits for);
RTF is synthesis wall time divided by the duration of the audio made (below 1 is faster than
real time). Medians over warm runs, with the packaged voice.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from gateway.render import Synthesizer, VoiceSettings, parse_ssml, render_segments
from gateway.render.tts import load_voice

SHORT = "Sure, I can help with that."
LONG = (
    "Good morning. The forecast for today calls for scattered showers in the early hours, "
    "clearing by noon with temperatures climbing into the low twenties across the region. "
    "Tomorrow looks drier, although a cold front arriving from the north in the evening may "
    "bring strong gusts and a sharp drop in temperature overnight. Remember your umbrella."
)
SHORT_SSML = '<speak>Sure, <emphasis level="strong">I can</emphasis> help with that.</speak>'
LONG_SSML = (
    "<speak><p><s>Good morning.</s><s>The forecast for <say-as interpret-as='date' "
    "format='mdy'>03/14/2025</say-as> calls for scattered showers,</s></p>"
    '<break time="300ms"/><prosody rate="slow" pitch="-2st">clearing by noon</prosody> with '
    "temperatures near <say-as interpret-as='cardinal'>22</say-as> degrees. "
    '<p>Tomorrow looks <prosody volume="loud">drier</prosody>, although a cold front may '
    "bring strong gusts overnight. Call <say-as interpret-as='telephone'>555-0199</say-as> "
    "for updates.</p></speak>"
)


async def no_fetch(url: str) -> tuple[bytes, str]:
    raise ConnectionError(url)


async def measure(chunks, rate: int) -> tuple[float, float, float]:
    start = time.perf_counter()
    first, samples = None, 0
    async for chunk in chunks:
        if first is None:
            first = time.perf_counter() - start
        samples += len(chunk)
    wall = time.perf_counter() - start
    seconds = samples / rate
    return first or wall, wall / seconds, seconds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rate", type=int, default=16_000)
    parser.add_argument("--threads", type=int, default=1, help="ONNX threads per sentence (1)")
    args = parser.parse_args()

    start = time.perf_counter()
    load_voice(VoiceSettings(), threads=args.threads)
    print(f"voice load: {time.perf_counter() - start:.2f} s ({args.threads} thread(s) a sentence)")
    synth = Synthesizer(threads=args.threads)
    await synth.warm_up()

    plain, shifted = VoiceSettings(), VoiceSettings(pitch_semitones=3.0, length_scale=1.08)
    cases = [
        ("short text", lambda: synth.stream(SHORT, plain, rate=args.rate)),
        ("long text", lambda: synth.stream(LONG, plain, rate=args.rate)),
        ("long text, agent voice (+3 st)", lambda: synth.stream(LONG, shifted, rate=args.rate)),
        ("short SSML", lambda: render_segments(
            parse_ssml(SHORT_SSML), synth, plain, no_fetch, rate=args.rate)),
        ("long SSML", lambda: render_segments(
            parse_ssml(LONG_SSML), synth, plain, no_fetch, rate=args.rate)),
    ]  # fmt: skip
    print(f"{'case':34} {'audio s':>8} {'first audio ms':>15} {'RTF':>6}   ({args.runs} runs)")
    for name, make in cases:
        results = [await measure(make(), args.rate) for _ in range(args.runs)]
        ttfa = statistics.median(r[0] for r in results) * 1000
        rtf = statistics.median(r[1] for r in results)
        audio = statistics.median(r[2] for r in results)
        print(f"{name:34} {audio:8.2f} {ttfa:15.0f} {rtf:6.3f}")
    synth.close()


if __name__ == "__main__":
    asyncio.run(main())
