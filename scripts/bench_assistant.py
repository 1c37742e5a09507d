"""The assistant's figures: spoken turns to it, stage by stage, and the model's speed.

Run: nice .venv/bin/python scripts/bench_assistant.py [--turns 6] [--tokens 160] [--json]

1. Spoken turns: each question (Piper's voice) is said, paced in real time, to
   ``builtin:assistant`` on the default model (the embedded llama.cpp, SmolLM2-135M, one thread)
   through the real voice session. From the end of speech to the first reply audio, split into
   turn (end of speech → end of turn), STT (→ transcript), LLM first sentence (utterance sent →
   the assistant's first complete sentence) and TTS (→ its first audio).
2. Tokens per second of the embedded model, alone and with other people talking (``--busy``
   speech-to-text decodes running in a loop beside it, as other people's turns would).

What the model's load costs 12 people: run scripts/load.py against a gateway that has the
assistant on the floor besides the parrot (see docs/performance.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.agents.directory import AgentDirectory  # noqa: E402
from gateway.agents.policy import AddressPolicy  # noqa: E402
from gateway.llm.client import Capped, ChatClient, ChatMessage  # noqa: E402
from gateway.llm.embedded import LlamaSettings  # noqa: E402
from gateway.llm.model import acquire_embedded, release_embedded  # noqa: E402
from gateway.llm.settings import LlmSettings  # noqa: E402
from gateway.proxy.models import VoiceModels  # noqa: E402
from gateway.talk.voice import talk_wav  # noqa: E402
from gateway.testing.speech import piper_16k, silence  # noqa: E402

QUESTIONS = (
    "What should I pack for a weekend in Lisbon?",
    "How do I keep basil alive on a windowsill?",
    "Why is the sky blue?",
    "Can you suggest a quick dinner with eggs?",
    "What is a good way to learn a new language?",
    "How far is the moon from the earth?",
)
STAGES = (("turn", "endpoint"), ("stt", "stt"), ("llm first sentence", "agent"))
LONG_ANSWER = [
    ChatMessage("system", "You are a helpful assistant."),
    ChatMessage("user", "Tell me a long story about a lighthouse keeper and the sea."),
]


def median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


async def spoken_turns(models: VoiceModels, n: int) -> list[dict[str, Any]]:
    directory = AgentDirectory(AddressPolicy([]))
    await directory.builtins["assistant"].model.warm_up()  # type: ignore[attr-defined]
    rows = []
    try:
        for i in range(n):
            question = QUESTIONS[i % len(QUESTIONS)]
            pcm = np.concatenate([silence(300), piper_16k(question), silence(1500)])
            result, audio = await talk_wav(
                pcm, ["builtin:assistant"], directory=directory, models=models, timeout=60
            )
            t = result.timings_ms or {}
            answer = [text for who, text in result.lines if who == "Assistant"][-1:]
            rows.append(
                {
                    "question": question,
                    "heard": result.transcript,
                    "answer": answer[0] if answer else None,
                    "replyAudioS": round(len(audio) / 22_050, 1),
                    **{k: t.get(k) for k in ("endpoint", "stt", "agent", "ttsFirstAudio", "total")},
                }
            )
            stages = {k: t.get(k) for k in ("endpoint", "stt", "agent", "ttsFirstAudio", "total")}
            print(f"  {question!r}: {stages}", file=sys.stderr, flush=True)
    finally:
        await directory.aclose()
    return rows


async def _busy_stt(models: VoiceModels, stop: asyncio.Event) -> int:
    clip = np.concatenate([piper_16k(QUESTIONS[0]), silence(200)])
    decodes = 0
    while not stop.is_set():
        await models.transcriber.transcribe(clip)
        decodes += 1
    return decodes


async def tokens_per_second(models: VoiceModels, tokens: int, busy: int, runs: int) -> dict:
    llama = LlamaSettings()
    server = await asyncio.to_thread(acquire_embedded, llama)
    settings = LlmSettings(max_tokens=tokens, max_reply_chars=100_000, temperature=0.0)
    client = ChatClient(server.base_url, settings)
    out: dict[str, Any] = {}
    try:
        for label, others in (("alone", 0), (f"with {busy} decodes beside it", busy)):
            rates = []
            for _ in range(runs):
                stop = asyncio.Event()
                loops = [asyncio.ensure_future(_busy_stt(models, stop)) for _ in range(others)]
                await asyncio.sleep(0.5 if others else 0)
                count, first, last = 0, None, None
                with contextlib.suppress(Capped):  # max_tokens reached: the run's end
                    async for _ in client.stream(LONG_ANSWER):
                        count += 1  # llama.cpp streams one token per event
                        last = time.monotonic()
                        first = first or last
                stop.set()
                await asyncio.gather(*loops)
                if first is not None and last is not None and last > first:
                    rates.append((count - 1) / (last - first))
            out[label] = {"tokensPerS": median(rates), "runs": [round(r, 1) for r in rates]}
    finally:
        await client.aclose()
        await asyncio.to_thread(release_embedded, llama)
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6, help="spoken turns (6)")
    parser.add_argument("--tokens", type=int, default=160, help="tokens per speed run (160)")
    parser.add_argument("--runs", type=int, default=3, help="speed runs per condition (3)")
    parser.add_argument("--busy", type=int, default=2, help="decodes beside the model (2)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    models = VoiceModels()
    await models.warm_up()
    rows = await spoken_turns(models, args.turns)
    speed = await tokens_per_second(models, args.tokens, args.busy, args.runs)
    summary = {
        name: median([r[key] for r in rows if r.get(key) is not None])
        for name, key in (*STAGES, ("tts", "ttsFirstAudio"), ("total", "total"))
    }
    if args.json:
        print(json.dumps({"turns": rows, "medianMs": summary, "speed": speed}, indent=2))
        return
    print(f"spoken turns to the assistant ({len(rows)}), medians in ms:")
    for name, value in summary.items():
        print(f"  {name:<20} {value}")
    print("tokens per second of the embedded model (one thread):")
    for label, figures in speed.items():
        print(f"  {label:<28} {figures['tokensPerS']}  (runs {figures['runs']})")
    print("answers:")
    for r in rows:
        print(f"  {r['heard']!r} → {r['answer']!r}")


if __name__ == "__main__":
    asyncio.run(main())
