"""How fast the agent layer is: built-in agents in process, and over HTTP on 127.0.0.1.

Run: .venv/bin/python scripts/bench_agents.py [--n 300]
Prints per-envelope latencies (median and 95th percentile) for each path.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time

from gateway.agents import AddressPolicy, HttpAgent, HttpClient
from gateway.agents.builtin import builtin_agents
from gateway.agents.server import AGENTS_KEY, serve_agents
from gateway.ofp import Conversation, Envelope, Event, EventType, Parameters, Sender, text_event

USER = "tag:bench.user,2025:1"


def _utterance(i: int, text: str) -> Envelope:
    return Envelope(
        conversation=Conversation(id=f"bench-{i % 50}"),
        sender=Sender(speaker_uri=USER),
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                parameters=Parameters(dialog_event=text_event(USER, text)),
            )
        ],
    )


def _report(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    print(f"{label:<34} median {statistics.median(ms):7.3f} ms   p95 {p95:7.3f} ms   n={len(ms)}")


async def _timed(agent, text: str, n: int) -> list[float]:
    out = []
    for i in range(n):
        envelope = _utterance(i, text)
        start = time.perf_counter()
        await agent.handle(envelope)
        out.append(time.perf_counter() - start)
    return out


async def main(n: int) -> None:
    local = builtin_agents()
    _report("in process: parrot", await _timed(local["parrot"], "hello there", n))
    _report(
        "in process: concierge delegation", await _timed(local["concierge"], "get me the clock", n)
    )
    runner = await serve_agents("127.0.0.1", 0)
    try:
        urls = {k: a.manifest.identification.service_url for k, a in runner.app[AGENTS_KEY].items()}
        async with HttpClient(AddressPolicy(["127.0.0.0/8"])) as client:
            parrot = HttpAgent(urls["parrot"], client)
            await parrot.handle(_utterance(0, "warm up"))
            _report("HTTP 127.0.0.1: parrot", await _timed(parrot, "hello there", n))
            clock = HttpAgent(urls["clock"], client)
            _report("HTTP 127.0.0.1: clock", await _timed(clock, "what time is it", n))
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300, help="envelopes per measurement")
    asyncio.run(main(parser.parse_args().n))
