"""Faults while people talk: what each costs the people, their turns and their records.

People talk through the load client (``gateway/testing/load_client.py``: real-time Piper speech,
WebSocket PCM, replies heard) while, in turn:

``agent-killed``
    the parrot's HTTP agent process (``agents serve``) is SIGKILLed, replies in flight, and
    started again on the same port ``--fault-s`` later;
``agent-hung``
    the same process is stopped (SIGSTOP) for ``--hang-s`` (past the agents' timeout), then
    continued;
``sqlite-full``
    the records' disk (a tmpfs of its own, in a mount namespace only the gateway sees) is filled
    for ``--fault-s``, then freed;
``postgres-restarted``
    the records' PostgreSQL server is stopped for ``--fault-s``, then started again;
``node-killed``
    one node of the local cluster (``gateway.cluster``: HAProxy, two nodes, PostgreSQL) is
    SIGKILLed; its people rejoin their conversations through HAProxy, on the other node.

A second agent (the built-in parrot, joined after the HTTP one) is on the floor, so during the
agent faults the people's words can be routed around the parrot that is not answering. A person
told that the agent left the conversation invites it again a second later, as a person
would. Per fault: the people affected (told something, cut off, or a turn unanswered), whether
every one of them was told in words, turns acknowledged (the person saw their transcript),
turns lost (acknowledged, then neither answered nor explained), the share of the turns
acknowledged during the fault that were answered (by any agent) during it, records lost (acknowledged
words missing from the records at the end), the time to recover (the first reply after the
fault ended; for the records, ``/readyz`` saying they are kept again; for a node, the slowest
rejoin), and the p95 time from the end of speech to the first reply audio, during the fault and
after it.

    flock /tmp/bench.lock .venv/bin/python scripts/bench_faults.py          # 12 people
    .venv/bin/python -m gateway.testing.bench_faults --people 1 --fault-s 3 --after-s 6 --json  # the test
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from pathlib import Path
from typing import Any

import numpy as np

from gateway.cluster.local import LocalCluster
from gateway.cluster.postgres import TempPostgres
from gateway.records.model import SNIPPET_CHARS
from gateway.server import messages as m
from gateway.server.settings import GatewaySettings
from gateway.testing.faults import SmallDisk, can_mount
from gateway.testing.load_client import Client, Clip, Tally, Turn, load_clips
from gateway.testing.processes import Served, free_port, spawn

FAULTS = ("agent-killed", "agent-hung", "sqlite-full", "postgres-restarted", "node-killed")
ALLOW = ("--allow-address", "127.0.0.0/8")
#: Sessions a node holds beyond the people: a person who rejoins may briefly hold two.
ROOM_SLACK = 4


def room(people: int) -> tuple[str, str]:
    """``serve``'s ``--max-sessions`` for ``people`` (the default holds 12: 20 were refused)."""
    return ("--max-sessions", str(max(GatewaySettings().max_sessions, people + ROOM_SLACK)))


#: The agent that takes the people's words while the HTTP parrot is not answering.
STANDBY = "builtin:parrot"
#: Seconds a person told the agent left waits before inviting it again.
REINVITE_S = 1.0
#: Seconds to let the last replies arrive before counting.
SETTLE_S = 4.0


# ---------------------------------------------------------------------------------- people
class Person:
    """One person: talks in turns, re-invites an agent they are told left, rejoins their
    conversation when the connection drops (through HAProxy, to whichever node is alive)."""

    def __init__(self, url: str, clips: list[Clip], seed: int, agent: str | None) -> None:
        self.url, self.clips, self.seed, self.agent = url, clips, seed, agent
        self.tally = Tally()
        self.clients: list[Client] = []
        self.turns: list[Turn] = []
        #: (time the connection dropped, time the conversation was rejoined)
        self.rejoins: list[tuple[float, float | None]] = []
        self._task: asyncio.Task[None] | None = None
        self._reinviter: asyncio.Task[None] | None = None

    @property
    def said(self) -> list[tuple[float, str, str]]:
        return sorted(e for c in self.clients for e in c.said)

    async def start(self) -> None:
        client = Client(self.url, self.clips, self.tally, transport="ws", seed=self.seed)
        if not await client.open():
            raise RuntimeError(f"refused: {self.tally.refused}")
        self.clients.append(client)
        self._reinviter = asyncio.get_running_loop().create_task(self._reinvite())

    def talk(self, until: float) -> None:
        self._task = asyncio.get_running_loop().create_task(self._talk(until))

    async def _talk(self, until: float) -> None:
        while time.monotonic() < until:
            client = self.clients[-1]
            talking = asyncio.get_running_loop().create_task(client.converse(until))
            while not talking.done() and not client.dropped:
                await asyncio.sleep(0.05)
            if client.dropped:  # the node went away: do not wait for the turn to time out
                talking.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await talking
            if time.monotonic() >= until or not client.dropped:
                return
            await self._rejoin(client, until)

    async def _rejoin(self, old: Client, until: float) -> None:
        dropped = old.dropped_at or time.monotonic()
        self.rejoins.append((dropped, None))
        assert old.welcome is not None
        hello = {"conversation_id": old.welcome.conversation_id, "token": old.welcome.token}
        while time.monotonic() < until:
            client = Client(
                self.url, self.clips, self.tally, transport="ws", seed=self.seed, hello=hello
            )
            with contextlib.suppress(Exception):  # the balancer's 503 while it notices
                if await client.open():
                    self.clients.append(client)
                    self.rejoins[-1] = (dropped, time.monotonic())
                    return
            await client.close()
            await asyncio.sleep(0.2)

    async def _reinvite(self) -> None:
        seen = 0
        while True:
            await asyncio.sleep(0.2)
            said = self.said
            left = [e for e in said[seen:] if e[1] == "notice" and "left the conversation" in e[2]]
            seen = len(said)
            if left and self.agent:
                await asyncio.sleep(REINVITE_S)
                with contextlib.suppress(Exception):
                    ws = self.clients[-1].ws
                    assert ws is not None
                    await ws.send(m.Invite(url=self.agent).to_json())

    async def stop(self) -> None:
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task
        if self._reinviter is not None:
            self._reinviter.cancel()
        for c in self.clients:
            await c.close()
        self.turns = list(self.tally.turns)


# ---------------------------------------------------------------------------------- figures
def _p95(values: list[float]) -> float | None:
    return round(float(np.percentile(values, 95)), 0) if values else None


def _latencies(people: list[Person], start: float, end: float) -> list[float]:
    return [
        1000 * (t.first_audio - t.end_of_speech)
        for p in people
        for t in p.turns
        if t.first_audio is not None and start <= t.end_of_speech < end
    ]


def _turn_fate(person: Person, turn: Turn, next_start: float) -> str:
    """``answered``, ``explained`` (a notice), ``lost`` or ``unacknowledged``."""
    if turn.transcript is None:
        return "unacknowledged"
    if turn.first_audio is not None:
        return "answered"
    after = [e for e in person.said if turn.transcript <= e[0] < next_start]
    if any(kind == "reply" for _, kind, _ in after):
        return "answered"
    if any(kind == "notice" for _, kind, _ in after):
        return "explained"
    return "lost"


def _answered_by(person: Person, turn: Turn, until: float) -> bool:
    """Whether an acknowledged turn was answered (an agent's utterance, from any agent) before
    ``until``. Not reply audio: the floor's spoken "One moment…" while an agent is slow is audio
    too, and no answer."""
    if turn.transcript is None:
        return False
    return any(kind == "reply" and turn.transcript <= t < until for t, kind, _ in person.said)


def answered_during(people: list[Person], t0: float, t1: float) -> tuple[int, int]:
    """Of the turns acknowledged that ended during the fault (``t0`` to ``t1``), how many were
    answered (by any agent) before it ended: (answered, acknowledged)."""
    answered = acknowledged = 0
    for p in people:
        for i, t in enumerate(p.turns):
            if not (t0 <= t.end_of_speech < t1) or t.transcript is None:
                continue
            next_start = p.turns[i + 1].end_of_speech if i + 1 < len(p.turns) else t1
            acknowledged += 1
            answered += _answered_by(p, t, min(t1, next_start))
    return answered, acknowledged


def figures(
    name: str,
    people: list[Person],
    t0: float,
    t1: float,
    end: float,
    recovered_at: float | None,
    recorded: list[str] | None,
) -> dict[str, Any]:
    """One fault's report."""
    affected, told, acknowledged, lost = 0, 0, 0, 0
    acknowledged_texts: list[str] = []
    for p in people:
        fates = []
        for i, t in enumerate(p.turns):
            next_start = p.turns[i + 1].end_of_speech if i + 1 < len(p.turns) else end + SETTLE_S
            if t0 <= t.end_of_speech < end:
                fates.append(_turn_fate(p, t, next_start))
            if t.transcript is not None and t.text.strip():
                acknowledged_texts.append(t.text.strip())
        notices = [e for e in p.said if e[1] == "notice" and t0 <= e[0] < end + SETTLE_S]
        cut_off = any(t0 <= d < end for d, _ in p.rejoins)
        hit = bool(notices) or cut_off or any(f in ("lost", "explained") for f in fates)
        affected += hit
        told += hit and bool(notices)
        acknowledged += sum(f != "unacknowledged" for f in fates)
        lost += fates.count("lost")
    records_lost = None
    if recorded is not None:
        have = Counter(r.strip()[:SNIPPET_CHARS] for r in recorded)
        want = Counter(t[:SNIPPET_CHARS] for t in acknowledged_texts)
        records_lost = sum((want - have).values())
    answered, acked_during = answered_during(people, t0, t1)
    return {
        "fault": name,
        "people": len(people),
        "affected": affected,
        "toldInWords": told,
        "turnsAcknowledged": acknowledged,
        "turnsLost": lost,
        "turnsAcknowledgedDuring": acked_during,
        "turnsAnsweredDuring": answered,
        "answeredDuringShare": round(answered / acked_during, 2) if acked_during else None,
        "recordsLost": records_lost,
        "recoverS": round(recovered_at - t1, 1) if recovered_at is not None else None,
        "p95FirstAudioMsDuring": _p95(_latencies(people, t0, max(t1, t0 + 1e-3))),
        "p95FirstAudioMsAfter": _p95(_latencies(people, t1, end)),
        "rejoinS": [round(b - a, 1) for a, b in (r for p in people for r in p.rejoins) if b],
    }


def first_reply_after(people: list[Person], t: float) -> float | None:
    times = [
        e[0] for p in people for e in p.said if e[0] > t and e[1] == "reply" and "said" in e[2]
    ]
    return min(times) if times else None


def records_ok(
    served: Served, timeout: float = 60
) -> Callable[[float], Coroutine[Any, Any, float | None]]:
    """A watch: when ``/readyz`` said the records are kept again (polled every 0.1 s)."""

    async def watch(t: float) -> float | None:
        deadline = t + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(Exception):
                body = (await asyncio.to_thread(served.get, "/readyz"))[1]
                if json.loads(body)["records"]["state"] == "ok":
                    return time.monotonic()
            await asyncio.sleep(0.1)
        return None

    return watch


# ---------------------------------------------------------------------------------- runs
async def talk_through(
    url: str,
    clips: list[Clip],
    args: argparse.Namespace,
    agent: str | None,
    inject: Callable[[], Awaitable[None]],
    heal: Callable[[], Awaitable[None]],
    watch: Callable[[float], Coroutine[Any, Any, float | None]] | None = None,
    people: list[Person] | None = None,
) -> tuple[list[Person], float, float, float, float | None]:
    """People talk; ``inject`` at t0, ``heal`` ``--fault-s`` later, then ``watch(t1)`` runs
    alongside the talk (when the fault's effect was over, or None); returns people, times and
    what ``watch`` found. The people are put in ``people`` when given (for an ``inject`` that
    picks among them)."""
    people = [] if people is None else people
    people.extend(Person(url, clips, seed, agent) for seed in range(args.people))
    for p in people:
        await p.start()
    end = time.monotonic() + args.warm_s + args.fault_s + args.after_s
    for p in people:
        p.talk(end)
    await asyncio.sleep(args.warm_s)
    t0 = time.monotonic()
    await inject()
    await asyncio.sleep(args.fault_s)
    await heal()
    t1 = time.monotonic()
    watching = asyncio.get_running_loop().create_task(watch(t1)) if watch else None
    await asyncio.sleep(max(0.0, end - time.monotonic()) + SETTLE_S)
    for p in people:
        await p.stop()
    seen = await watching if watching is not None else None
    return people, t0, t1, end, seen


def _agents(port: int, log: Path) -> Served:
    return spawn(["agents", "serve", "--port", str(port)], log, port, ready="/")


async def run_single(
    args: argparse.Namespace, clips: list[Clip], work: Path
) -> list[dict[str, Any]]:
    """agent-killed, agent-hung and sqlite-full against one `serve` on a small disk."""
    out = []
    port = free_port()
    agents = [_agents(port, work / "agents.log")]
    agent = f"http://127.0.0.1:{port}/parrot"
    # --keep-audio: each utterance's clip is a new file, so a full disk fails the store at
    # once (SQLite alone reuses its write-ahead log's space and can go on for a while).
    # A second agent on the floor, joined after the HTTP parrot: while both answer, the
    # person's unaddressed words (placed to neither) go to the first that joined; while the HTTP
    # parrot is not answering (a timeout, a failure, the slow notice), to this one
    # (gateway/proxy/addressing.py, docs/floor.md). ``answeredDuringShare`` counts it.
    disk = SmallDisk(
        work / "data",
        work / "serve.log",
        *ALLOW,
        *room(args.people),
        *("--agent", agent, "--agent", STANDBY, "--keep-audio"),
        size_mb=64,
    )
    url = disk.served.ws
    try:
        for fault in [f for f in args.faults if f in ("agent-killed", "agent-hung", "sqlite-full")]:
            if fault == "agent-killed":

                async def inject() -> None:
                    agents[-1].proc.send_signal(signal.SIGKILL)
                    agents[-1].proc.wait()

                async def heal() -> None:
                    agents.append(await asyncio.to_thread(_agents, port, work / "agents2.log"))

            elif fault == "agent-hung":

                async def inject() -> None:
                    os.kill(agents[-1].pid, signal.SIGSTOP)

                async def heal() -> None:
                    await asyncio.sleep(max(0.0, args.hang_s - args.fault_s))
                    os.kill(agents[-1].pid, signal.SIGCONT)

            else:

                async def inject() -> None:
                    await asyncio.to_thread(disk.fill)

                async def heal() -> None:
                    await asyncio.to_thread(disk.free)

            watch = records_ok(disk.served) if fault == "sqlite-full" else None
            people, t0, t1, end, recovered = await talk_through(
                url, clips, args, agent, inject, heal, watch
            )
            if fault != "sqlite-full":
                recovered = first_reply_after(people, t1)
            copy = disk.copy_out(work / f"copy-{fault}")
            out.append(figures(fault, people, t0, t1, end, recovered, sqlite_texts(copy, people)))
            print(json.dumps(out[-1]), file=sys.stderr, flush=True)
    finally:
        disk.stop()
        for a in agents:
            with contextlib.suppress(Exception):
                os.kill(a.pid, signal.SIGCONT)
            a.stop()
    return out


def conversations(people: list[Person]) -> list[str]:
    return sorted({c.welcome.conversation_id for p in people for c in p.clients if c.welcome})


def sqlite_texts(folder: Path, people: list[Person]) -> list[str]:
    """What the records hold of these people's conversations (one snippet per utterance)."""
    db = sqlite3.connect(f"file:{folder / 'records.sqlite3'}?mode=ro", uri=True)
    ids = conversations(people)
    marks = ",".join("?" * len(ids))
    try:
        query = f"SELECT snippet FROM utterances WHERE conversation_id IN ({marks})"
        return [s for (s,) in db.execute(query, ids).fetchall()]
    finally:
        db.close()


def postgres_texts(url: str, people: list[Person]) -> list[str]:
    """As :func:`sqlite_texts`, from PostgreSQL."""
    import psycopg

    with psycopg.connect(url) as db:
        rows = db.execute(
            "SELECT snippet FROM utterances WHERE conversation_id = ANY(%s)",
            (conversations(people),),
        ).fetchall()
    return [s for (s,) in rows]


async def run_postgres(
    args: argparse.Namespace, clips: list[Clip], work: Path
) -> list[dict[str, Any]]:
    """postgres-restarted: `serve` with its records in PostgreSQL, the server stopped a while."""
    pg = TempPostgres(fsync=False).start()
    port = free_port()
    served = spawn(
        [
            *("-v", "serve", "--port", str(port), "--data", pg.url, *ALLOW),
            *(*room(args.people), "--agent", "builtin:parrot"),
        ],
        work / "serve-pg.log",
        port,
    )
    try:

        async def inject() -> None:
            await asyncio.to_thread(pg.halt)

        async def heal() -> None:
            await asyncio.to_thread(pg.resume)

        people, t0, t1, end, recovered = await talk_through(
            served.ws, clips, args, None, inject, heal, records_ok(served)
        )
        report = figures(
            "postgres-restarted", people, t0, t1, end, recovered, postgres_texts(pg.url, people)
        )
    finally:
        served.stop()
        pg.stop()
    print(json.dumps(report), file=sys.stderr, flush=True)
    return [report]


async def run_cluster(
    args: argparse.Namespace, clips: list[Clip], work: Path
) -> list[dict[str, Any]]:
    """node-killed: two nodes behind HAProxy; the one with the most people is SIGKILLed."""
    cluster = LocalCluster(
        nodes_count=2,
        port=free_port(),
        # Each node must hold everyone: the killed node's people all rejoin on the other.
        serve_args=(*room(args.people), "--agent", "builtin:parrot"),
        workdir=work,
    )
    cluster.start()
    url = cluster.url.replace("http://", "ws://", 1) + "/ws"
    people: list[Person] = []
    try:

        async def inject() -> None:
            by_node = Counter(p.clients[-1].node for p in people)
            victim = next(n for n in cluster.nodes if n.name == by_node.most_common(1)[0][0])
            cluster.kill(victim)

        async def heal() -> None:
            return None

        # talk_through makes the people; ``inject`` reads them through this list.
        result, t0, t1, end, _ = await talk_through(
            url, clips, args, None, inject, heal, people=people
        )
        t1 = t0  # the fault is the kill itself; recovery is the rejoin
        rejoined = [b for p in result for a, b in p.rejoins if b is not None and a >= t0]
        cut = [p for p in result if any(a >= t0 for a, _ in p.rejoins)]
        recovered = max(rejoined) if rejoined and len(rejoined) >= len(cut) else None
        report = figures(
            "node-killed",
            result,
            t0,
            t1,
            end,
            recovered,
            postgres_texts(cluster.database_url, result),
        )
    finally:
        cluster.stop()
    print(json.dumps(report), file=sys.stderr, flush=True)
    return [report]


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    clips = load_clips()
    reports: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ofp-faults-") as tmp:
        work = Path(tmp)
        if {"agent-killed", "agent-hung", "sqlite-full"} & set(args.faults):
            if not can_mount():
                raise SystemExit("needs root (a tmpfs in a mount namespace) for sqlite-full")
            (work / "single").mkdir()
            reports += await run_single(args, clips, work / "single")
        if "postgres-restarted" in args.faults:
            (work / "pg").mkdir()
            reports += await run_postgres(args, clips, work / "pg")
        if "node-killed" in args.faults:
            (work / "cluster").mkdir()
            reports += await run_cluster(args, clips, work / "cluster")
    return {
        "people": args.people,
        "faultS": args.fault_s,
        "hangS": args.hang_s,
        "warmS": args.warm_s,
        "afterS": args.after_s,
        "cpus": os.cpu_count(),
        "faults": reports,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--people", type=int, default=12, help="people talking at once (12)")
    p.add_argument("--fault-s", type=float, default=10.0, help="how long a fault lasts (10)")
    p.add_argument(
        "--hang-s",
        type=float,
        # 25, not 15: in a 15 s hang every turn is the person's first to the hung agent, which
        # waits out the 10 s timeout and is then passed on, mostly after the hang (0 of 12
        # answered during it, 2026-11-27); at 25 s people speak again once the floor knows, as
        # in the 20 s hang, and the share says whether those words are routed around.
        default=25.0,
        help="how long the agent hangs (25: past the agents' 10 s timeout, long enough that "
        "people speak again after the floor knows it is not answering)",
    )
    p.add_argument("--warm-s", type=float, default=12.0, help="talk before the fault (12)")
    p.add_argument("--after-s", type=float, default=25.0, help="talk after it ends (25)")
    p.add_argument(
        "--faults", default=",".join(FAULTS), help=f"which, comma-separated ({','.join(FAULTS)})"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    args = p.parse_args()
    args.faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = set(args.faults) - set(FAULTS)
    if unknown:
        p.error(f"unknown faults {sorted(unknown)}; choose from {', '.join(FAULTS)}")
    try:
        report = asyncio.run(bench(args))
    except RuntimeError as e:  # a person refused, a server that did not start: say which
        print(f"bench_faults: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{args.people} people, faults of {args.fault_s:g} s, {os.cpu_count()} CPUs")
    head = (
        "fault", "affected", "told", "acked", "lost", "answered during", "rec.lost",
        "recover s", "p95 during", "p95 after",
    )  # fmt: skip
    print(" | ".join(head))
    for r in report["faults"]:
        cells = (
            r["fault"], r["affected"], r["toldInWords"], r["turnsAcknowledged"], r["turnsLost"],
            f"{r['turnsAnsweredDuring']}/{r['turnsAcknowledgedDuring']}", r["recordsLost"], r["recoverS"], r["p95FirstAudioMsDuring"], r["p95FirstAudioMsAfter"],
        )  # fmt: skip
        print(" | ".join(str(c) for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
