"""Latency of the voice pipeline: end of speech → first reply audio, and each stage.

Utterances (half Piper, half espeak-ng speech) go through ``talk_wav`` — the same code as
``python -m gateway talk --wav`` — with the built-in parrot, input paced in real time. End of
speech is when the last voiced frame arrived. Prints median and p95 per stage.

    .venv/bin/python scripts/bench_latency.py [--n 24] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.audio import SAMPLE_RATE
from gateway.proxy.models import VoiceModels
from gateway.talk.voice import talk_wav
from gateway.testing.figures import summarise
from gateway.testing.speech import REQUESTS, espeak_16k, gateway_piper

SENTENCES = REQUESTS
STAGES = ("endpoint", "stt", "agent", "ttsFirstAudio", "total", "decode")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=24, help="utterances (default 24)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    models = VoiceModels()
    await models.warm_up()
    clips = []
    for i in range(args.n):
        text = SENTENCES[i % len(SENTENCES)]
        pcm = await gateway_piper(models.synthesizer, text) if i % 2 == 0 else espeak_16k(text)
        clips.append((("piper" if i % 2 == 0 else "espeak"), text, pcm))
    rows = []
    directory = AgentDirectory(AddressPolicy([]))
    try:
        for voice, text, pcm in clips:
            lead = np.zeros(SAMPLE_RATE // 2, dtype=np.int16)
            result, _ = await talk_wav(
                np.concatenate([lead, pcm]),
                ["builtin:parrot"],
                directory=directory,
                models=models,
                paced=True,
            )
            for t in result.utterances:
                rows.append({"voice": voice, "text": text, "heard": result.transcript, **t})
            if not args.json:
                t = result.timings_ms or {}
                print(
                    f"{voice:6} total {t.get('total')!s:>6} ms  early={t.get('earlyEnd')}  "
                    f"heard: {result.transcript}",
                    flush=True,
                )
    finally:
        await directory.aclose()
    summary = {}
    for stage in STAGES:
        values = [r[stage] for r in rows if r.get(stage) is not None]
        if values:
            med, p95 = summarise(values)
            summary[stage] = {"median": med, "p95": p95, "n": len(values)}
    summary["earlyEnds"] = sum(1 for r in rows if r.get("earlyEnd"))
    summary["utterances"] = len(rows)
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}, indent=2))
        return
    print(f"\n{'stage':<14} {'median ms':>10} {'p95 ms':>8}")
    for stage in STAGES:
        if stage in summary:
            print(f"{stage:<14} {summary[stage]['median']:>10.0f} {summary[stage]['p95']:>8.0f}")
    print(
        f"{len(rows)} utterances ({len(clips)} clips), {summary['earlyEnds']} ended early at a pause"
    )


if __name__ == "__main__":
    asyncio.run(main())
