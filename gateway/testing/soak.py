"""Soak: sessions opening and closing by the thousand while a few people talk for minutes.

Starts ``serve`` (parrot only), as ``scripts/load.py`` does, then at once:

- holds ``--hold`` voice sessions (as in ``load.py``: real-time speech, pauses, replies) for
  ``--minutes``;
- opens and closes ``--visits`` sessions, ``--churn`` at a time, cycling transports: WebSocket
  PCM, WebRTC (connected before it hangs up), text only (one typed utterance answered), and
  every tenth one dropped without a closing handshake.

The gateway's RSS, open file descriptors, threads and asyncio tasks are read four times: idle
after a warm-up of 80 visits; with the held sessions talking, once they are warm (the first
turns allocate the models' working memory) and at the end; and idle again after everything has
hung up. A leak shows as a difference between the two idle or the two busy readings.

    .venv/bin/python scripts/soak.py --visits 1000 --hold 12 --minutes 10
    .venv/bin/python scripts/soak.py --visits 100 --hold 3 --minutes 0.3 --json   # the CI size

It lives in the package (``gateway.testing.soak``; ``scripts/soak.py`` runs it) so that the tests
call :func:`soak` rather than running a script.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

from gateway.server.messages import Transport
from gateway.testing.load_client import Client, Clip, Tally, load_clips
from gateway.testing.load_metrics import read_proc
from gateway.testing.processes import Served, serving

TRANSPORTS: tuple[Transport, ...] = ("ws", "webrtc", "none")
#: Seconds for the gateway to finish closing what was just hung up before it is read.
SETTLE_S = 3.0


def snapshot(gateway: Served) -> dict[str, Any]:
    """What a leak would grow: memory, descriptors, threads, tasks; and what is open."""
    proc = read_proc(gateway.pid)
    metrics = gateway.metrics()
    return {
        "rssMb": round(proc.rss_mb, 1),
        "fds": proc.fds,
        "threads": proc.threads,
        "tasks": int(metrics["ofp_gateway_tasks"]),
        "sessions": int(metrics["ofp_gateway_sessions"]),
        "conversations": int(metrics["ofp_gateway_conversations"]),
    }


async def visit(gateway: Served, clips: list[Clip], tally: Tally, n: int) -> bool:
    """One short session of the ``n``-th kind; False if it was refused or failed."""
    transport = TRANSPORTS[n % len(TRANSPORTS)]
    client = Client(gateway.ws, clips, tally, transport=transport, seed=n)
    try:
        if not await client.open():
            return False
        if transport == "webrtc":
            assert client.pc is not None
            deadline = time.monotonic() + 10
            while client.pc.connectionState != "connected" and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if client.pc.connectionState != "connected":
                tally.errors.append(f"webrtc visit {n} never connected")
        elif transport == "none":
            assert client.ws is not None
            await client.ws.send(json.dumps({"type": "text", "text": f"visit number {n}"}))
            deadline = time.monotonic() + 10
            while client.replies < 2 and time.monotonic() < deadline:  # greeting + answer
                await asyncio.sleep(0.05)
        else:
            await asyncio.sleep(0.5)  # half a second of microphone silence
        if n % 10 == 9 and client.ws is not None:
            client.ws.transport.abort()  # a page killed mid-session: no closing handshake
        return True
    except Exception as exc:  # a failed visit is a finding, not a crash of the soak
        tally.errors.append(f"visit {n} ({transport}): {exc!r}")
        return False
    finally:
        await client.close()


async def churn(
    gateway: Served, clips: list[Clip], tally: Tally, visits: int, at_once: int
) -> int:
    """``visits`` sessions, ``at_once`` concurrently; how many went through."""
    counter = itertools.count()
    done = 0

    async def lane() -> None:
        nonlocal done
        while (n := next(counter)) < visits:
            ok = await visit(gateway, clips, tally, n)  # not `done += await`: lanes interleave
            done += ok

    await asyncio.gather(*(lane() for _ in range(at_once)))
    return done


async def soak(args: argparse.Namespace) -> dict[str, Any]:
    """The whole run; the figures as a dict."""
    clips = load_clips()
    with serving(
        None,
        *("--agent", "builtin:parrot", "--max-sessions", str(args.hold + args.churn)),
        log=args.log,
        verbose=False,
    ) as gateway:
        tally = Tally()
        # Warm-up: allocator and caches, and as many conversations kept for a rejoin as the
        # gateway holds (--max-detached), so the start and end figures compare like with like.
        await churn(gateway, clips, tally, args.warm_up, args.churn)
        await asyncio.sleep(SETTLE_S)
        idle_start = await asyncio.to_thread(snapshot, gateway)
        began = time.monotonic()
        until = began + 60 * args.minutes
        holders = [
            Client(gateway.ws, clips, tally, transport="webrtc" if i % 4 == 3 else "ws", seed=i)
            for i in range(args.hold)
        ]
        opened = [c for c in holders if await c.open()]
        talks = [asyncio.get_running_loop().create_task(c.converse(until)) for c in opened]
        rss_track: list[tuple[float, float]] = []

        async def track() -> None:
            while True:
                rss_track.append((time.monotonic() - began, read_proc(gateway.pid).rss_mb))
                await asyncio.sleep(10)

        tracker = asyncio.get_running_loop().create_task(track())
        # The first turns allocate the models' working memory: "busy" figures start after.
        await asyncio.sleep(min(args.talk_warm_up, 60 * args.minutes / 2))
        busy_start = await asyncio.to_thread(snapshot, gateway)
        churn_began = time.monotonic()
        visited = await churn(gateway, clips, tally, args.visits, args.churn)
        churned_s = time.monotonic() - churn_began
        await asyncio.gather(*talks)
        busy_end = await asyncio.to_thread(snapshot, gateway)
        tracker.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await tracker
        for client in opened:
            await client.close()
        await asyncio.sleep(SETTLE_S)
        idle_end = await asyncio.to_thread(snapshot, gateway)
        turns = [t for t in tally.turns if t.first_audio]
        return {
            "visits": args.visits,
            "visited": visited,
            "churnSeconds": round(churned_s, 1),
            "held": len(opened),
            "minutes": args.minutes,
            "turns": len(tally.turns),
            "answeredTurns": len(turns),
            "idleStart": idle_start,
            "busyStart": busy_start,
            "busyEnd": busy_end,
            "idleEnd": idle_end,
            "rssAlongMb": [(round(t), round(r, 1)) for t, r in rss_track],
            "errors": tally.errors[:20],
            "refusedCount": len(tally.refused),
            "refused": tally.refused[:5],
        }


def parser() -> argparse.ArgumentParser:
    """The soak's options (``scripts/soak.py --help``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--visits", type=int, default=1000, help="sessions opened and closed")
    parser.add_argument("--churn", type=int, default=4, help="visits at once (4)")
    parser.add_argument("--hold", type=int, default=12, help="voice sessions held (12)")
    parser.add_argument("--minutes", type=float, default=10, help="how long they talk (10)")
    parser.add_argument(
        "--warm-up", type=int, default=80, help="visits before the start figures (80)"
    )
    parser.add_argument(
        "--talk-warm-up", type=float, default=60, help="talk before the busy figures (60 s)"
    )
    parser.add_argument("--log", type=Path, help="keep the gateway's output in this file")
    parser.add_argument("--json", action="store_true", help="print JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the soak and print its figures (a table, or JSON with ``--json``)."""
    args = parser().parse_args(argv)
    result = asyncio.run(soak(args))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"{result['visited']}/{result['visits']} visits in {result['churnSeconds']} s while "
            f"{result['held']} people talked for {result['minutes']} min "
            f"({result['answeredTurns']}/{result['turns']} turns answered)"
        )
        phases = ("idleStart", "busyStart", "busyEnd", "idleEnd")
        print(f"  {'':14}" + "".join(f"{p:>11}" for p in phases))
        for key in ("rssMb", "fds", "threads", "tasks", "sessions", "conversations"):
            print(f"  {key:14}" + "".join(f"{result[p][key]:>11}" for p in phases))
        print("  RSS along the way (s, MB):", result["rssAlongMb"])
        for reason in result["refused"]:
            print("  refused:", reason)
        for err in result["errors"]:
            print("  error:", err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
