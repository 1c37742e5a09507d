"""Floor throughput: events routed per second through the sans-I/O floor manager, one core.

An "event routed" is one incoming event processed by the floor: its §2.2 route decided, its
recipients computed, and its outgoing envelopes (one per recipient, conversation section
rewritten) built. Serialising those envelopes to JSON is the transport's work and is measured
separately in the last column.

    .venv/bin/python scripts/bench_floor.py [--events 20000] [--json]
"""

from __future__ import annotations

import argparse
import json
import time

from gateway.floor import Floor
from gateway.ofp import Envelope, Event, EventType, Identification, Sender, text_event


def ident(i: int) -> Identification:
    return Identification(
        speaker_uri=f"tag:agent{i}",
        service_url=f"https://agent{i}.example/ofp",
        organization="bench",
        conversational_name=f"Agent {i}",
        synopsis="",
    )


def run(conversants: int, n_events: int) -> dict[str, float]:
    floor = Floor("bench", manager=ident(-1))
    for i in range(conversants):
        floor.join(ident(i))
    # Pre-built envelopes: parsing is measured by the parser's own tests, not here.
    envelopes = []
    for i in range(256):
        who = f"tag:agent{i % conversants}"
        ev = Event(
            event_type=EventType.UTTERANCE,
            parameters={"dialog_event": text_event(who, f"hello {i}")},
        )
        envelopes.append(
            Envelope(conversation={"id": "bench"}, sender=Sender(speaker_uri=who), events=[ev])
        )
    deliveries = 0
    start = time.perf_counter()
    for i in range(n_events):
        deliveries += len(floor.receive(envelopes[i % 256]))
    routed = time.perf_counter() - start
    # JSON for a sample of deliveries, to show what serialisation adds per recipient.
    sample = floor.receive(envelopes[0])
    t0 = time.perf_counter()
    for _ in range(200):
        for d in sample:
            d.envelope.to_json()
    ser = (time.perf_counter() - t0) / (200 * max(1, len(sample)))
    return {
        "conversants": conversants,
        "eventsPerSecond": n_events / routed,
        "deliveriesPerSecond": deliveries / routed,
        "serialiseUsPerDelivery": ser * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [run(n, args.events) for n in (2, 10, 100)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'conversants':>11} {'events/s':>10} {'deliveries/s':>13} {'JSON µs/delivery':>17}")
    for r in rows:
        print(
            f"{r['conversants']:>11} {r['eventsPerSecond']:>10,.0f} {r['deliveriesPerSecond']:>13,.0f} "
            f"{r['serialiseUsPerDelivery']:>17.1f}"
        )


if __name__ == "__main__":
    main()
