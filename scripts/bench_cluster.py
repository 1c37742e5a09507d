"""Past one machine: a person's rejoin time after their node dies, and the records' write cost.

    python scripts/bench_cluster.py [--rounds 5] [--writes 2000]

1. Records write cost: the same writes (an utterance envelope of ~1.5 KB, a floor change, a
   1-second clip) through the SQLite store and the PostgreSQL store (a local server started
   here, fsync on as in production), one at a time as the event loop makes them. Also the two
   PostgreSQL drivers for the same statement (why psycopg 3), when asyncpg is installed.
2. Rejoin after a node failure: PostgreSQL, HAProxy and two ``serve`` nodes on loopback
   (gateway.cluster.local); a WebSocket client talks through HAProxy, its node is killed with
   SIGKILL, and the client reconnects at once and then every 100 ms (the page waits 0.25-0.75 s
   before its first retry; add that). Timed from the kill to the ``welcome`` with the history,
   and to the first answer from an agent after it.

3. With ``--people N``, only this: N people talking at once through HAProxy to the cluster's
   nodes (``--nodes``, 2), N / nodes on each, as ``scripts/load.py`` runs them (the parrot,
   every 4th person over WebRTC, Piper speech in real time; ``gateway.testing.load``), with
   the records in PostgreSQL. Each person's WebSocket goes through HAProxy with the sticky
   cookie of the node it is given, as a page coming back to its node does, so each node has
   exactly its share; each node's own count of sessions as the window opens is printed to
   show they arrived. Per node: first reply audio p50 / p95, event-loop lag p99, missed turns,
   CPU, RSS; and the machine's whole CPU. On one machine every node shares its cores (and
   with the clients, HAProxy and PostgreSQL): a node's figures there are not a node's on its
   own box.

Everything runs on loopback and stops by itself.

    flock /tmp/bench.lock .venv/bin/python scripts/bench_cluster.py --people 40 --seconds 60
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gateway.cluster.local import LocalCluster
from gateway.cluster.postgres import TempPostgres
from gateway.ofp import Conversation, Envelope, Event, EventType, Parameters, Sender, text_event
from gateway.records import Recorder, SQLiteRecorder
from gateway.records.postgres import PostgresRecorder

PERSON = "tag:bench,2025:user"
AGENT = "tag:bench,2025:agent"


def _envelope(n: int) -> dict[str, Any]:
    de = text_event(PERSON, f"utterance number {n}: " + "words " * 150)
    return Envelope(
        conversation=Conversation(id="bench"),
        sender=Sender(speaker_uri=PERSON),
        events=[Event(event_type=EventType.UTTERANCE, parameters=Parameters(dialog_event=de))],
    ).to_wire()


def _ms(values: list[float]) -> str:
    values = sorted(values)
    p95 = values[min(len(values) - 1, int(len(values) * 0.95))]
    return f"{statistics.median(values) * 1000:7.3f} ms | {p95 * 1000:7.3f} ms"


def bench_writes(rec: Recorder, writes: int) -> dict[str, list[float]]:
    """Seconds per call of each kind of write."""
    envelopes = [_envelope(n) for n in range(64)]
    clip = b"RIFF" + bytes(32_000)
    out: dict[str, list[float]] = {"envelope": [], "floor change": [], "clip (32 KB)": []}
    conv = f"bench-{time.monotonic_ns()}"
    rec.conversation_started(conv, at=datetime.now(UTC), user_speaker_uri=PERSON)
    for n in range(writes):
        t = time.perf_counter()
        rec.envelope(
            conv, direction="in", peer=PERSON, envelope=envelopes[n % 64], at=datetime.now(UTC)
        )
        out["envelope"].append(time.perf_counter() - t)
        if n % 4 == 0:
            t = time.perf_counter()
            rec.floor_changed(
                conv,
                conversants=[{"speakerUri": PERSON}, {"speakerUri": AGENT}],
                floor_granted=[PERSON, AGENT],
                convener=None,
                at=datetime.now(UTC),
            )
            out["floor change"].append(time.perf_counter() - t)
        if n % 8 == 0:
            t = time.perf_counter()
            rec.audio(conv, f"de:{n}", clip, at=datetime.now(UTC))
            out["clip (32 KB)"].append(time.perf_counter() - t)
    return out


def _statement(body: str, n: int) -> tuple[str, dict[str, Any]]:
    from gateway.records.postgres import _ENVELOPE

    return _ENVELOPE, {
        "cid": "drv",
        "at": datetime.now(UTC),
        "folder": "drv",
        "direction": "in",
        "peer": PERSON,
        "body": body,
        "ids": [f"de:{n}"],
        "speakers": [PERSON],
        "snippets": ["words"],
    }


def _psycopg(url: str, body: str, n: int) -> list[float]:
    import psycopg

    times = []
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET synchronous_commit = off")
        for i in range(n):
            query, params = _statement(body, i)
            t = time.perf_counter()
            conn.execute(query, params)
            times.append(time.perf_counter() - t)
    return times


async def _asyncpg(url: str, body: str, n: int) -> list[float]:
    import re

    import asyncpg  # type: ignore[import-not-found]

    conn = await asyncpg.connect(url)
    await conn.execute("SET synchronous_commit = off")
    names: list[str] = []

    def number(m: re.Match[str]) -> str:
        if m.group(1) not in names:
            names.append(m.group(1))
        return f"${names.index(m.group(1)) + 1}"

    query = re.sub(r"%\((\w+)\)s", number, _statement(body, 0)[0])
    times = []
    for i in range(n):
        params = _statement(body, i)[1]
        t = time.perf_counter()
        await conn.execute(query, *(params[k] for k in names))
        times.append(time.perf_counter() - t)
    await conn.close()
    return times


def bench_stores(writes: int) -> None:
    print(f"\n## Records write cost ({writes} envelopes, one call at a time)\n")
    print("| store | write | median | p95 |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder, TempPostgres(fsync=True) as pg:
        stores: list[tuple[str, Recorder]] = [
            ("SQLite (WAL, synchronous=NORMAL)", SQLiteRecorder(Path(folder))),
            ("PostgreSQL (psycopg 3, pooled, synchronous_commit=off)", PostgresRecorder(pg.url)),
        ]
        for name, rec in stores:
            try:
                for kind, times in bench_writes(rec, writes).items():
                    print(f"| {name} | {kind} | {_ms(times).replace(' | ', ' | ')} |")
            finally:
                rec.close()
        with contextlib.suppress(ImportError):
            import asyncpg  # type: ignore[import-not-found]  # noqa: F401

            body = json.dumps(_envelope(0))
            print("\n## The same envelope statement by driver (PostgreSQL, no pool)\n")
            print("| driver | median | p95 |")
            print("|---|---|---|")
            print(f"| psycopg 3, synchronous | {_ms(_psycopg(pg.url, body, writes))} |")
            apg = asyncio.run(_asyncpg(pg.url, body, writes))
            print(f"| asyncpg, awaited in an event loop | {_ms(apg)} |")


async def _one_failover(cluster: LocalCluster) -> tuple[float, float]:
    from gateway.testing.cluster import Page, rejoin

    url = cluster.url.replace("http://", "ws://") + "/ws"
    page = await Page.open(url)
    await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == 5)
    await page.say("hello before the failure")
    node = next(n for n in cluster.nodes if n.name == page.node)
    killed_at = time.monotonic()
    cluster.kill(node)
    again, _ = await rejoin(url, page)
    welcomed = time.monotonic() - killed_at
    assert again.welcome["rejoined"] and len(again.welcome["history"]) >= 2
    await again.say("and after it")
    answered = time.monotonic() - killed_at
    await again.close()
    with contextlib.suppress(Exception):
        await page.close()
    cluster.start_node(node)
    cluster.wait_ready(node, 300)
    return welcomed, answered


def bench_failover(rounds: int) -> None:
    print(f"\n## A person's rejoin after their node is killed ({rounds} rounds)\n")
    welcomed, answered = [], []
    with LocalCluster(2) as cluster:
        for _ in range(rounds):
            w, a = asyncio.run(_one_failover(cluster))
            welcomed.append(w)
            answered.append(a)
    print("| from SIGKILL to | median | max |")
    print("|---|---|---|")
    print(
        f"| welcome on the other node, history shown | {statistics.median(welcomed) * 1000:.0f} ms | {max(welcomed) * 1000:.0f} ms |"
    )
    print(
        f"| first agent answer after it | {statistics.median(answered) * 1000:.0f} ms | {max(answered) * 1000:.0f} ms |"
    )


def _until_balanced(cluster: LocalCluster, timeout: float = 60.0) -> None:
    """Until HAProxy sends each node's cookie to that node. The cluster is up when HAProxy
    reaches *a* ready node; a node its health check has not yet seen ready has its people
    redispatched to another (a loaded CI run counted two on one node and none on the other).
    A request HAProxy sent elsewhere comes back with a new ``OFPNODE`` cookie."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + timeout
    waiting = [node.name for node in cluster.nodes if node.proc is not None]
    while waiting:
        name = waiting[0]
        request = urllib.request.Request(
            cluster.url + "/readyz", headers={"Cookie": f"OFPNODE={name}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                moved = "OFPNODE=" in (response.headers.get("Set-Cookie") or "")
        except (urllib.error.URLError, OSError):
            moved = True
        if not moved:
            waiting.pop(0)
            continue
        if time.monotonic() > deadline:
            raise SystemExit(f"HAProxy did not send people to {name} within {timeout:.0f} s")
        time.sleep(0.2)


async def cluster_load(
    cluster: LocalCluster, people: int, seconds: float, webrtc_every: int
) -> dict[str, Any]:
    """``people`` split evenly over the cluster's nodes, all through HAProxy at once: one
    :func:`run_load` per node (its clients carry the node's cookie); the machine's CPU over
    the first node's steady window."""
    from gateway.testing.load import run_load
    from gateway.testing.load_client import load_clips
    from gateway.testing.load_metrics import ServedGateway, machine_busy_s

    clips = load_clips()
    via = cluster.url.replace("http://", "ws://") + "/ws"
    await asyncio.to_thread(_until_balanced, cluster)
    shares = [people // len(cluster.nodes)] * len(cluster.nodes)
    for i in range(people % len(cluster.nodes)):
        shares[i] += 1
    busy: list[float] = []

    def window(started: bool) -> None:
        busy.extend((machine_busy_s(), time.monotonic()))

    runs = await asyncio.gather(
        *(
            run_load(
                ServedGateway(node.url, node.proc.pid),
                clips,
                n,
                seconds,
                ramp_s=0.5 * n,
                webrtc_every=webrtc_every,
                on_window=window if i == 0 else None,
                via=via,
                node=node.name,
            )
            for i, (node, n) in enumerate(zip(cluster.nodes, shares, strict=True))
            if node.proc is not None
        )
    )
    machine = 100 * (busy[2] - busy[0]) / (busy[3] - busy[1]) if len(busy) == 4 else None
    for node, run in zip(cluster.nodes, runs, strict=True):
        run["node"] = node.name
        run.pop("turnDetail", None)
    return {
        "people": people,
        "nodes": runs,
        "turns": sum(r["turns"] for r in runs),
        "missed": sum(r["missed"] for r in runs),
        "refused": sum(r["refused"] for r in runs),
        "nodesCpuPercent": round(sum(r["cpuPercent"] for r in runs), 1),
        "clientsCpuPercent": runs[0]["loadCpuPercent"],
        "machineCpuPercent": round(machine, 1) if machine is not None else None,
    }


def bench_people(people: int, seconds: float, nodes: int, webrtc_every: int) -> dict[str, Any]:
    """The cluster under ``people`` talking at once: the report, and a table printed."""
    from gateway.testing.figures import piper_rtf

    share = -(-people // nodes)
    speed = piper_rtf()
    before = os.getloadavg()
    print(
        f"\n## {people} people through HAProxy on {nodes} nodes ({share} each), "
        f"{os.cpu_count()} cores shared by all; Piper RTF {speed}\n"
    )
    serve_args = ("--agent", "builtin:parrot", "--max-sessions", str(max(16, share)))
    with LocalCluster(nodes, serve_args=serve_args) as cluster:
        report = asyncio.run(cluster_load(cluster, people, seconds, webrtc_every))
    report["piperRtf"], report["loadBefore"], report["loadAfter"] = speed, before, os.getloadavg()
    print(
        "| node | people (sessions seen) | turns | missed | first reply audio p50 / p95 | "
        "loop lag p99 | CPU | RSS mean / peak | stages p95: endpoint / Whisper queue / "
        "first synthesised audio |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in report["nodes"]:
        g = r["gatewayStagesMs"]
        print(
            f"| {r['node']} | {r['connected']} ({r['gatewaySessions']}) | {r['turns']} | "
            f"{r['missed']} | {r['p50Ms']} / {r['p95Ms']} ms | {r['loopLagP99Ms']} ms | "
            f"{r['cpuPercent']} % | {r['rssMeanMb']} / {r['rssMb']} MB | "
            f"{g['endpoint p95']} / {g['stt_queue p95']} / {g['tts_first_audio p95']} ms |"
        )
    print(
        f"\nnodes' CPU {report['nodesCpuPercent']} %, load clients {report['clientsCpuPercent']} %,"
        f" the whole machine {report['machineCpuPercent']} % (of {100 * (os.cpu_count() or 1)} %);"
        f" refused {report['refused']}; load average before "
        + " ".join(f"{a:.2f}" for a in before)
        + ", after "
        + " ".join(f"{a:.2f}" for a in report["loadAfter"])
    )
    return report


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--rounds", type=int, default=5, help="node failures to time (5)")
    p.add_argument("--writes", type=int, default=2000, help="envelopes written per store (2000)")
    p.add_argument("--skip-failover", action="store_true", help="only the write cost")
    p.add_argument(
        "--people", type=int, default=0,
        help="only this: N people talking at once through HAProxy, N / --nodes on each node",
    )  # fmt: skip
    p.add_argument("--nodes", type=int, default=2, help="nodes behind HAProxy, with --people (2)")
    p.add_argument("--seconds", type=float, default=60, help="steady window, with --people (60)")
    p.add_argument(
        "--webrtc-every", type=int, default=4,
        help="every Kth person over WebRTC, with --people (4, as scripts/load.py; 0: none)",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="with --people: print the report as JSON")
    args = p.parse_args()
    if args.people < 0 or args.nodes < 1 or (args.people and args.people < args.nodes):
        p.error("--people must be at least --nodes (one person per node), --nodes at least 1")
    with contextlib.suppress(OSError), open("/proc/loadavg") as f:
        print(f"load average at start: {' '.join(f.read().split()[:3])}")
    if args.people:
        report = bench_people(args.people, args.seconds, args.nodes, args.webrtc_every)
        if args.json:
            print(json.dumps(report))
        return
    bench_stores(args.writes)
    if not args.skip_failover:
        bench_failover(args.rounds)


if __name__ == "__main__":
    main()
