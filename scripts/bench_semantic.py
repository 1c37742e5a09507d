"""The semantic end-of-turn signal on text alone: does it tell a finished sentence from one the
person paused in, which prompt, which thresholds, and what does a call cost?

No audio: each set's *paused* sentences give an unfinished text (the part before the pause) and
a finished one (the whole sentence); its *complete* sentences are finished. Every prompt variant
scores the tuning set; the chosen prompt's thresholds are fitted there and then reported on the
held-out set (``gateway/testing/turn_sets.py``):

* **separation**: the fraction of (finished, unfinished) pairs the score orders right (AUC);
* **low threshold** (the rule's ``semantic_low``: "clearly unfinished", wait longer): the
  largest value under which no finished tuning text falls;
* **high threshold** (``semantic_high``: "clearly finished", end sooner): the smallest value
  over which no unfinished tuning text rises;
* how many held-out texts each threshold sorts right and wrong;
* the cost of a call: as a turn sees it (the person's words new after the cached prefix), and
  cold (a new agent context first).

    nice .venv/bin/python scripts/bench_semantic.py [--prompts all|chosen] [--json OUT]
    .venv/bin/python scripts/bench_semantic.py --people 12   # the cost of a call at 12 people

The machine's load is printed: on a shared 2-core machine a call's cost moves with it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gateway.testing.figures import summarise
from gateway.testing.turn_sets import HELD_OUT, TUNING, TurnSet
from gateway.voice.semantic import SemanticSettings, SemanticSignal

#: Prompt variants tried on the tuning set: (name, system line, opening agent line).
PROMPTS = {
    "assistant+context": ("You are a helpful assistant.", "How can I help you?"),
    "no-system+context": ("", "How can I help you?"),
    "smollm-system+context": (
        "You are a helpful AI assistant named SmolLM, trained by Hugging Face",
        "How can I help you?",
    ),
    "voice-assistant+context": (
        "You are a voice assistant. The user speaks; their words are transcribed.",
        "How can I help you?",
    ),
    "assistant+short-context": ("You are a helpful assistant.", "Yes?"),
}


def texts(turns: TurnSet) -> list[tuple[str, bool]]:
    """(text, finished) for a set: each paused sentence's first part (unfinished) and whole
    (finished), each complete sentence (finished)."""
    out = []
    for first, rest in turns.paused:
        out += [(first, False), (f"{first} {rest}", True)]
    out += [(c, True) for c in turns.complete]
    return out


def auc(scored: list[tuple[float, bool]]) -> float:
    """P(a finished text scores above an unfinished one); ties count half."""
    yes = [s for s, f in scored if f]
    no = [s for s, f in scored if not f]
    wins = sum((a > b) + 0.5 * (a == b) for a in yes for b in no)
    return wins / (len(yes) * len(no))


def thresholds(scored: list[tuple[float, bool]]) -> tuple[float, float]:
    """(low, high): below ``low`` only unfinished texts; above ``high`` only finished ones. Each
    sits halfway between the last right text and the first wrong one (in log space: the scores
    span decades)."""
    yes = sorted(s for s, f in scored if f)
    no = sorted(s for s, f in scored if not f)
    low = (max(yes[0], 1e-6) * max(max((s for s in no if s < yes[0]), default=1e-6), 1e-6)) ** 0.5
    above = [s for s in yes if s > no[-1]]
    high = (no[-1] * above[0]) ** 0.5 if above else 1.0
    return low, high


def judge(scored: list[tuple[float, bool]], low: float, high: float) -> dict:
    """How a set's texts fall under the thresholds."""
    return {
        "unfinishedBelowLow": sum(s <= low for s, f in scored if not f),
        "finishedBelowLow": sum(s <= low for s, f in scored if f),
        "finishedAboveHigh": sum(s >= high for s, f in scored if f),
        "unfinishedAboveHigh": sum(s >= high for s, f in scored if not f),
        "unfinished": sum(not f for _, f in scored),
        "finished": sum(f for _, f in scored),
    }


def run(signal: SemanticSignal, items: list[tuple[str, bool]]) -> tuple[list, list, list]:
    scored, warm_ms, tokens = [], [], []
    for text, finished in items:
        # Prime the cache with the prefix alone, as the warm session has it (a turn's first
        # call after the agent spoke pays for the agent's words once, at the first pause).
        signal.score("uh")
        p = signal.score(text)
        assert p is not None, f"no score for {text!r}"
        scored.append((p, finished))
        warm_ms.append(signal.last_ms)
        tokens.append(signal.last_new_tokens)
    return scored, warm_ms, tokens


#: How twelve people's calls meet the server (``--people``): one slot shared as before issue 28's
#: third pass; a slot each; a slot each with the agent's new line put in it as the person starts
#: to speak (the default).
MODES = {
    "shared": (1, False, False),
    "own-slot": (12, True, False),
    "own-slot+prime": (12, True, True),
}


def people_cost(people: int, mode: str, rounds: int) -> dict:
    """The cost of a pause's call when ``people`` sessions share the signal's server, their
    pauses interleaved, each round after a new agent line of their own (the parrot's "You said:
    …" of their last words, as a conversation goes). Wall-clock ms of the call a pause waits
    for, the prompt tokens it processed, and the process's CPU-ms for it (llama.cpp runs in
    this process); a prime's own cost apart (it is paid while the person speaks)."""
    slots, keyed, primed = MODES[mode]
    llm = dataclasses.replace(SemanticSettings().llm, slots=max(slots, 1))
    signal = SemanticSignal(dataclasses.replace(SemanticSettings(), llm=llm, timeout_ms=5000))
    signal.warm_up()
    said = [t for t, _ in texts(HELD_OUT)]
    ms: list[float] = []
    cpu: list[float] = []
    new: list[float] = []
    prime_cpu: list[float] = []
    for r in range(rounds):
        for i in range(people):
            agent = f"You said: {said[((r - 1) * people + i) % len(said)]}" if r else None
            key = i if keyed else None
            if primed:
                c = time.process_time()
                if signal.prime(agent, key=i) == "primed":
                    prime_cpu.append((time.process_time() - c) * 1000)
            c = time.process_time()
            signal.score(said[(r * people + i) % len(said)], agent, key=key)
            if r:  # the first round fills the caches
                cpu.append((time.process_time() - c) * 1000)
                ms.append(signal.last_ms)
                new.append(float(signal.last_new_tokens))
    signal.close()
    return {
        "people": people,
        "mode": mode,
        "calls": len(ms),
        "medianMs": summarise(ms)[0],
        "p95Ms": summarise(ms)[1],
        "cpuMedianMs": summarise(cpu)[0],
        "cpuP95Ms": summarise(cpu)[1],
        "newTokensMedian": summarise(new)[0],
        "primes": len(prime_cpu),
        "primeCpuMedianMs": summarise(prime_cpu)[0] if prime_cpu else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", default="all", help="all, or one name of PROMPTS")
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument(
        "--people",
        type=int,
        default=0,
        help="only the cost of a call with this many sessions' pauses interleaved (0: the "
        "prompt and threshold figures)",
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help=f"with --people: how calls meet the server, comma-separated ({', '.join(MODES)})",
    )
    parser.add_argument("--rounds", type=int, default=6, help="with --people: pauses each")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()} (the machine is shared)", flush=True)
    if args.people:
        rows = []
        for mode in args.modes.split(","):
            if mode not in MODES:
                parser.error(f"--modes: no mode {mode!r} (one of {', '.join(MODES)})")
            rows.append(people_cost(args.people, mode, args.rounds))
            print(json.dumps(rows[-1]), flush=True)
        print(f"load average at end: {os.getloadavg()}")
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=1))
        return
    names = list(PROMPTS) if args.prompts == "all" else [args.prompts]
    tuning = texts(TUNING)
    results: dict = {"loadStart": os.getloadavg(), "prompts": {}}
    best, best_auc = names[0], -1.0
    for name in names:
        system, opening = PROMPTS[name]
        signal = SemanticSignal(
            dataclasses.replace(SemanticSettings(), system=system, opening=opening, timeout_ms=5000)
        )
        signal.warm_up()
        scored, _ms, _ = run(signal, tuning)
        signal.close()
        a = auc(scored)
        low, high = thresholds(scored)
        results["prompts"][name] = {"auc": a, "low": low, "high": high, **judge(scored, low, high)}
        print(
            f"{name:<26} tuning AUC {a:.3f}  low {low:.4f} high {high:.3f}  "
            f"{judge(scored, low, high)}",
            flush=True,
        )
        if a > best_auc:
            best, best_auc = name, a
    system, opening = PROMPTS[best]
    signal = SemanticSignal(
        dataclasses.replace(SemanticSettings(), system=system, opening=opening, timeout_ms=5000)
    )
    signal.warm_up()
    scored, _, _ = run(signal, tuning)
    low, high = thresholds(scored)
    held = texts(HELD_OUT)
    held_scored, warm_ms, tokens = run(signal, held)
    cold_ms = []
    for text, _ in held[:12]:
        signal.score("uh", context=f"A new agent line, number {len(cold_ms)}, to miss the cache.")
        signal.score(text, context=f"Something else the agent said, {len(cold_ms)}.")
        cold_ms.append(signal.last_ms)
    signal.close()
    report = {
        "prompt": best,
        "low": low,
        "high": high,
        "heldOutAuc": auc(held_scored),
        **judge(held_scored, low, high),
        "warmMedianMs": summarise(warm_ms)[0],
        "warmP95Ms": summarise(warm_ms)[1],
        "newTokensMedian": summarise([float(t) for t in tokens])[0],
        "coldMedianMs": summarise(cold_ms)[0],
        "texts": [
            {"text": t, "finished": f, "p": round(p, 4)}
            for (t, f), (p, _) in zip(held, held_scored, strict=True)
        ],
    }
    results["heldOut"] = report
    print(f"\nchosen on tuning: {best} (AUC {best_auc:.3f}); low {low:.4f}, high {high:.3f}")
    print(f"held-out ({len(held)} texts): AUC {report['heldOutAuc']:.3f}")
    print(
        f"  clearly unfinished (p <= low): {report['unfinishedBelowLow']}/{report['unfinished']} "
        f"unfinished, {report['finishedBelowLow']}/{report['finished']} finished (wrongly)"
    )
    print(
        f"  clearly finished (p >= high): {report['finishedAboveHigh']}/{report['finished']} "
        f"finished, {report['unfinishedAboveHigh']}/{report['unfinished']} unfinished (wrongly)"
    )
    print(
        f"  cost per call: warm prefix median {report['warmMedianMs']:.0f} ms "
        f"(p95 {report['warmP95Ms']:.0f}; {report['newTokensMedian']:.0f} new tokens), "
        f"cold prefix median {report['coldMedianMs']:.0f} ms"
    )
    for row in sorted(report["texts"], key=lambda r: r["p"]):
        mark = "F" if row["finished"] else "-"
        print(f"    {row['p']:.4f} {mark} {row['text']}")
    results["loadEnd"] = os.getloadavg()
    print(f"load average at end: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
