"""The dialogue benchmark: right answers per category, typed and spoken, and end of speech → first
reply audio for the spoken turns (issue 39; the set: gateway/testing/dialogues.py).

Run: nice .venv/bin/python scripts/bench_dialogue.py [--spoken N] [--via-url] [--llm-url URL]
     [--only CATEGORY] [--follow-ups [--rewrite]] [--json]

Every conversation is held with the four default agents (parrot, clock, concierge, assistant),
typed through ``talk``'s own classes; the first ``--spoken`` conversations (default 12) are also
spoken (Piper's voice, paced in real time) through the voice session ``talk --wav`` uses. The
assistant runs on the embedded SmolLM2-135M; ``--via-url`` reaches that same embedded server
through ``--llm-url`` (the OpenAI-compatible client path a bigger model would take), and
``--llm-url URL`` any other endpoint. ``--follow-ups`` runs a set of ten elliptical follow-ups
instead, and ``--rewrite`` has the assistant rewrite each into a full question first (one more
model call) to measure whether that beats keeping the last exchange verbatim. Latency figures depend on the machine's load: the script
prints ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.agents.directory import AgentDirectory  # noqa: E402
from gateway.agents.policy import AddressPolicy  # noqa: E402
from gateway.llm.embedded import LlamaSettings  # noqa: E402
from gateway.llm.model import acquire_embedded, release_embedded  # noqa: E402
from gateway.llm.settings import LlmSettings  # noqa: E402
from gateway.proxy.models import VoiceModels  # noqa: E402
from gateway.testing import dialogues  # noqa: E402
from gateway.testing.speech import piper_16k, silence  # noqa: E402


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def table(results: list[dialogues.TurnResult]) -> dict[str, tuple[int, int]]:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for r in results:
        total[r.category] += 1
        right[r.category] += r.right
    return {c: (right[c], total[c]) for c in dialogues.CATEGORIES if total[c]}


def median(values: list[float]) -> float | None:
    return round(statistics.median(values)) if values else None


async def run(args: argparse.Namespace) -> dict[str, Any]:
    llm: LlmSettings | None = None
    embedded = None
    if args.via_url:
        embedded = LlamaSettings()
        server = await asyncio.to_thread(acquire_embedded, embedded)
        llm = LlmSettings(url=server.base_url)
    elif args.llm_url:
        llm = LlmSettings(url=args.llm_url, model=args.llm_model)
    directory = AgentDirectory(AddressPolicy([]), llm=llm)
    if args.rewrite:
        await directory.builtins["assistant"].aclose()
        directory.builtins["assistant"] = dialogues.RewritingAssistant(settings=llm)
    assistant = directory.assistant
    assert assistant is not None  # builtin_agents() builds it
    await assistant.model.warm_up()
    pool = dialogues.FOLLOW_UPS if args.follow_ups else dialogues.CONVERSATIONS
    conversations = [c for c in pool if not args.only or any(t.category == args.only for t in c)]
    typed: list[dialogues.TurnResult] = []
    spoken: list[dialogues.TurnResult] = []
    try:
        for i, conv in enumerate(conversations):
            got = await dialogues.typed(conv, directory)
            typed += got
            for r in got:
                mark = "ok " if r.right else "BAD"
                print(
                    f"[{i:2}] {mark} {r.category:10} {r.text!r} -> {r.reply.lines}", file=sys.stderr
                )
        if args.spoken:
            models = VoiceModels()
            for i, conv in enumerate(conversations[: args.spoken]):
                pcms = [np.concatenate([silence(300), piper_16k(t.text)]) for t in conv]
                got = await dialogues.spoken(conv, pcms, directory, models, tail=silence(2500))
                spoken += got
                for r in got:
                    mark = "ok " if r.right else "BAD"
                    print(
                        f"[s{i:2}] {mark} {r.category:10} heard {r.heard!r} -> {r.reply.lines} "
                        f"total {r.timings.get('total')} ms",
                        file=sys.stderr,
                    )
    finally:
        await directory.aclose()
        if embedded is not None:
            await asyncio.to_thread(release_embedded, embedded)
    latency: dict[str, Any] = {}
    for category in dialogues.CATEGORIES:
        totals = [
            float(r.timings["total"])
            for r in spoken
            if r.category == category and r.timings.get("total") is not None
        ]
        if totals:
            latency[category] = {
                "n": len(totals),
                "medianMs": median(totals),
                "maxMs": round(max(totals)),
            }
    all_totals = [float(r.timings["total"]) for r in spoken if r.timings.get("total") is not None]
    rewrites = assistant.rewrites if isinstance(assistant, dialogues.RewritingAssistant) else None
    return {
        "model": "via --llm-url" if args.via_url else (args.llm_url or "embedded SmolLM2-135M"),
        "rewrite": bool(args.rewrite),
        "rewrites": rewrites,
        "conversations": len(conversations),
        "typed": {c: f"{a}/{b}" for c, (a, b) in table(typed).items()},
        "spoken": {c: f"{a}/{b}" for c, (a, b) in table(spoken).items()},
        "spokenConversations": min(args.spoken, len(conversations)),
        "endOfSpeechToFirstAudio": {
            "all": {"n": len(all_totals), "medianMs": median(all_totals)},
            **latency,
        },
        # Turns whose first part's answer was withdrawn (a continuation): judged on what the
        # person was left with; "rightDelivered" is the old check, on every line delivered.
        "withdrawn": [
            {
                "text": r.text,
                "heard": r.heard,
                "withdrawn": r.withdrawn,
                "right": r.right,
                "rightDelivered": r.right_delivered,
            }
            for r in spoken
            if r.withdrawn
        ],
        "wrong": [
            {"text": r.text, "category": r.category, "heard": r.heard, "reply": r.reply.lines}
            for r in typed + spoken
            if not r.right
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spoken", type=int, default=12, help="conversations also spoken (12)")
    parser.add_argument("--via-url", action="store_true", help="the embedded model via --llm-url")
    parser.add_argument("--llm-url", help="an OpenAI-compatible endpoint for the assistant")
    parser.add_argument("--llm-model", help="the model's name at --llm-url")
    parser.add_argument("--only", choices=dialogues.CATEGORIES, help="conversations with this")
    parser.add_argument(
        "--follow-ups", action="store_true", help="the follow-up set (rewriting experiment)"
    )
    parser.add_argument(
        "--rewrite",
        action="store_true",
        help="rewrite elliptical follow-ups into full questions first (one more model call)",
    )
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    args = parser.parse_args()
    before = uptime()
    figures = asyncio.run(run(args))
    figures["load"] = {"before": before, "after": uptime()}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"model: {figures['model']}; {figures['conversations']} conversations")
    print("right answers per category (typed | spoken):")
    for c in dialogues.CATEGORIES:
        t, s = figures["typed"].get(c), figures["spoken"].get(c)
        if t or s:
            print(f"  {c:11} {t or '-':>7} | {s or '-'}")
    for w in figures["withdrawn"]:
        print(
            f"  a continuation withdrew {w['withdrawn']} before {w['heard']!r}: judged "
            f"{'right' if w['right'] else 'wrong'} ({'right' if w['rightDelivered'] else 'wrong'}"
            " on every line delivered)"
        )
    print("end of speech -> first reply audio (spoken), median ms:")
    for c, v in figures["endOfSpeechToFirstAudio"].items():
        print(f"  {c:11} {v}")
    print(f"load before: {figures['load']['before']}\nload after:  {figures['load']['after']}")


if __name__ == "__main__":
    main()
