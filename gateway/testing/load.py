"""Load generator: N people talking to the built-in parrot at once, in real time.

Starts ``python -m gateway serve`` (parrot only) as a subprocess — or uses one given with
``--url`` and ``--pid`` — and opens N clients (``gateway/testing/load_client.py``): every fourth
over WebRTC (aiortc), the rest sending 16 kHz PCM on the WebSocket. Each speaks a sentence of
Piper speech in real time, waits for the parrot's spoken reply, pauses 2–4 s, and again. Per turn,
from the moment the client sent its last voiced frame (end of speech): → final transcript, →
first reply audio (the first received frame with sound in it), and where that time went, stage
by stage (client → gateway, the gateway's own stages from its ``timing`` message, gateway →
client). Over the steady window it samples the gateway's CPU and RSS from ``/proc`` and reads the
event-loop lag histogram from ``/metrics``.

    .venv/bin/python scripts/load.py --sessions 12 --seconds 60
    .venv/bin/python scripts/load.py --sessions 1,2,4,8,12,16 --seconds 60   # the table
    .venv/bin/python scripts/load.py --sessions 1 --webrtc-every 1 --seconds 120 # WebRTC stages
    .venv/bin/python scripts/load.py --sessions 16 --max-sessions 12 --json  # past capacity
    .venv/bin/python scripts/load.py --sessions 12 --repeat 4 --seconds 90   # the spread

It lives in the package (``gateway.testing.load``; ``scripts/load.py`` runs it) so that the tests
call :func:`run_load` rather than running a script.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from gateway.testing.figures import piper_rtf
from gateway.testing.load_client import Client, Clip, Tally, Turn, load_clips
from gateway.testing.load_metrics import (
    ServedGateway,
    delta,
    histogram_quantile,
    machine_busy_s,
    read_proc,
    stage_metrics,
)

#: The gateway's per-stage latency histograms read from ``/metrics``.
STAGES = ("endpoint", "stt", "stt_queue", "stt_decode", "agent", "tts_first_audio", "total")
#: A turn's way, client → gateway → client, as :meth:`Turn.breakdown` splits it.
TURN_STAGES = ("in", "endpoint", "stt", "floor", "tts", "out", "network", "decode", "total")


# ---------------------------------------------------------------------------------- one run
def _percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 1) if values else None


async def run_load(
    gateway: ServedGateway,
    clips: list[Clip],
    sessions: int,
    seconds: float,
    *,
    ramp_s: float,
    webrtc_every: int = 4,
    on_window: Callable[[bool], None] | None = None,
    via: str | None = None,
    node: str = "",
) -> dict[str, Any]:
    """N clients for ``seconds`` of steady state; the report as a dict (times in ms).

    ``on_window`` is called with True as the steady window starts and False as it ends (a
    profiler attaches there: ``scripts/profile_load.py``). ``via`` is where the clients connect
    instead of the gateway's own ``/ws`` (a cluster's HAProxy), with ``node``'s sticky cookie
    so that the balancer sends them to this gateway (``scripts/bench_cluster.py --people``);
    the gateway's own ``/proc`` and ``/metrics`` are read as before."""
    tally = Tally()
    idle = read_proc(gateway.pid)
    clients = [
        Client(
            via or gateway.ws,
            clips,
            tally,
            transport="webrtc" if webrtc_every and i % webrtc_every == webrtc_every - 1 else "ws",
            seed=i,
            node=node,
        )
        for i in range(sessions)
    ]
    opened: list[Client] = []
    for client in clients:  # people arrive over a few seconds, not in one instant
        if await client.open():
            opened.append(client)
        await asyncio.sleep(ramp_s / max(1, sessions))
    await asyncio.sleep(3.0)  # greetings
    loop = asyncio.get_running_loop()
    until = time.monotonic() + seconds
    talks = [loop.create_task(c.converse(until)) for c in opened]
    start_metrics = await asyncio.to_thread(gateway.metrics)
    start, start_proc, start_own = time.monotonic(), read_proc(gateway.pid), time.process_time()
    start_busy = machine_busy_s()
    if on_window is not None:
        on_window(True)
    rss = [start_proc.rss_mb]
    while time.monotonic() < until:
        await asyncio.sleep(1.0)
        rss.append(read_proc(gateway.pid).rss_mb)
    end, end_proc, end_own = time.monotonic(), read_proc(gateway.pid), time.process_time()
    end_busy = machine_busy_s()
    if on_window is not None:
        on_window(False)
    end_metrics = await asyncio.to_thread(gateway.metrics)
    await asyncio.gather(*talks)
    for client in opened:
        await client.close()
    window = [t for t in tally.turns if start <= t.end_of_speech <= end]
    replies = [1000 * (t.first_audio - t.end_of_speech) for t in window if t.first_audio]
    finals = [1000 * (t.transcript - t.end_of_speech) for t in window if t.transcript]
    elapsed = end - start
    gateway_cpu, own_cpu = end_proc.cpu_s - start_proc.cpu_s, end_own - start_own
    lag = histogram_quantile(start_metrics, end_metrics, "ofp_gateway_loop_lag_seconds", 0.99)
    stages = {
        f"{stage} p{q}": round(
            1000
            * histogram_quantile(
                stage_metrics(start_metrics, stage),
                stage_metrics(end_metrics, stage),
                "s",
                q / 100,
            )
        )
        for stage in STAGES
        for q in (50, 95)
    }
    return {
        "sessions": sessions,
        "connected": len(opened),
        # The clients the gateway itself counted as the window opened (through a balancer:
        # whether they all reached this node).
        "gatewaySessions": round(start_metrics.get("ofp_gateway_sessions", 0)),
        "webrtc": sum(c.rtc for c in opened),
        "refused": len(tally.refused),
        "refusal": tally.refused[0] if tally.refused else None,
        "seconds": round(elapsed, 1),
        "turns": len(window),
        "missed": len(window) - len(replies),
        "noTranscript": len(window) - len(finals),
        "replyGaps": sum(t.gaps for t in window),
        # Sentences the gateway's synthesizer finished after the audio before them had played.
        "lateSentences": delta(start_metrics, end_metrics, "ofp_gateway_tts_late_sentences"),
        # Final transcripts decoded a second time on the full window (slow).
        "sttFullWindow": delta(start_metrics, end_metrics, "ofp_gateway_stt_full_window_retries"),
        # Decodes given up (a speculation overtaken by more speech) and partial transcripts
        # skipped because the model was busy.
        "sttAbandoned": delta(start_metrics, end_metrics, "ofp_gateway_stt_abandoned"),
        "partialsSkipped": delta(
            start_metrics, end_metrics, "ofp_gateway_stt_partials_skipped"
        ),
        "missedWebrtc": sum(
            1 for t in tally.rtc_turns if start <= t.end_of_speech <= end and not t.first_audio
        ),
        "transcriptP50Ms": _percentile(finals, 50),
        "transcriptP95Ms": _percentile(finals, 95),
        "p50Ms": _percentile(replies, 50),
        "p95Ms": _percentile(replies, 95),
        "maxMs": round(max(replies), 1) if replies else None,
        "cpuPercent": round(100 * gateway_cpu / elapsed, 1),
        "rssIdleMb": round(idle.rss_mb, 1),
        "rssMb": round(max(rss), 1),
        # Sampled once a second: the mean is steadier than the peak between two runs.
        "rssMeanMb": round(statistics.fmean(rss), 1),
        "rssPerSessionMb": round((max(rss) - idle.rss_mb) / max(1, len(opened)), 2),
        "memoryReleasedMb": round(
            delta(start_metrics, end_metrics, "ofp_gateway_memory_released_bytes_total") / 2**20
        ),
        "allocator": next(
            (k.split("=", 1)[1].rstrip("}") for k in end_metrics if "memory_info{" in k), None
        ),
        "loopLagP99Ms": round(1000 * lag, 1),
        "loadCpuPercent": round(100 * own_cpu / elapsed, 1),
        # Everything else on the machine: other work skews the figures when this is not ~0.
        "otherCpuPercent": round(
            100 * (end_busy - start_busy - gateway_cpu - own_cpu) / elapsed, 1
        ),
        "gatewayStagesMs": stages,
        # Over WebRTC: how late the gateway's RTP packets arrived against their timestamps
        # (above the earliest), i.e. what a browser's jitter buffer must hold for this stream.
        "rtpLateMs": _rtp_lateness(opened, start, end),
        # Where a turn's time went, client → gateway → client: the median of each stage by
        # transport, and every turn (ms; TURN_STAGES).
        "turnStagesMs": {
            transport: _stage_medians(turns)
            for transport, turns in _by_transport(window, tally).items()
        },
        "turnDetail": [
            {"transport": "webrtc" if _is_rtc(t, tally) else "ws", **(t.breakdown() or {})}
            for t in window
        ],
        # Why the turns ended (the turn rule's reasons), and the semantic signal's call at the
        # pause that ended each turn as the session waited for it (ms; None: not made).
        "turnEnds": _turn_ends(window),
        "notices": sorted(set(tally.notices)),
        "errors": sorted(set(tally.errors)),
    }


def _turn_ends(turns: list[Turn]) -> dict[str, Any]:
    stages = [t.stages for t in turns if t.stages is not None]
    called = [float(s["semanticMs"]) for s in stages if s.get("semanticMs") is not None]
    scored = [s for s in stages if s.get("semantic") is not None]
    verdicts = [float(s["verdictMs"]) for s in stages if s.get("verdictMs") is not None]
    return {
        "reasons": dict(Counter(str(s.get("endReason")) for s in stages).most_common()),
        "semanticScored": len(scored),
        "semanticCalled": len(called),
        "semanticMsP50": _percentile(called, 50),
        "semanticMsP95": _percentile(called, 95),
        # When the verdict (decode, signals and semantic call) came, from the pause's start.
        "verdictMsP50": _percentile(verdicts, 50),
        "verdictMsP95": _percentile(verdicts, 95),
    }


def _rtp_lateness(clients: list[Client], start: float, end: float) -> dict[str, float] | None:
    """p50/p95/p99/max over the WebRTC clients of each packet's transit above that client's
    fastest one in the window (ms)."""
    late: list[float] = []
    for client in clients:
        if client.jitter is None:
            continue
        transits = [t for at, t in client.jitter.transits if start <= at <= end]
        if transits:
            fastest = min(transits)
            late += [1000 * (t - fastest) for t in transits]
    if not late:
        return None
    return {
        **{f"p{q}": round(float(np.percentile(late, q)), 1) for q in (50, 95, 99)},
        "max": round(max(late), 1),
    }


def _is_rtc(turn: Turn, tally: Tally) -> bool:
    return any(turn is t for t in tally.rtc_turns)


def _by_transport(turns: list[Turn], tally: Tally) -> dict[str, list[Turn]]:
    split: dict[str, list[Turn]] = {}
    for turn in turns:
        split.setdefault("webrtc" if _is_rtc(turn, tally) else "ws", []).append(turn)
    return split


def _stage_medians(turns: list[Turn]) -> dict[str, float]:
    """The median of each stage over the turns that have every part measured."""
    parts = [b for t in turns if (b := t.breakdown()) is not None]
    medians: dict[str, float] = {"turns": len(parts)}
    for stage in TURN_STAGES:
        values = [b[stage] for b in parts if stage in b]
        if values:
            medians[stage] = round(statistics.median(values), 1)
    return medians


def _stage_table(rows: list[dict[str, Any]]) -> str:
    """Where the time went, per run and transport (medians), then every turn of one-person
    runs: the client's last voiced frame → the gateway has it (in) → end of turn (endpoint) →
    transcript (stt) → the agent's reply (floor) → first synthesised audio (tts) → the first
    reply frame with sound at the client (out; over WebRTC: network, i.e. playout, Opus
    encoding and RTP, then decode)."""
    head = "| N | transport | turns | " + " | ".join(TURN_STAGES) + " |"
    lines = [head, "|---" * (3 + len(TURN_STAGES)) + "|"]
    for r in rows:
        for transport, m in r["turnStagesMs"].items():
            cells = " | ".join(str(m.get(stage, "–")) for stage in TURN_STAGES)
            lines.append(f"| {r['connected']} | {transport} | {m['turns']} | {cells} |")
    for r in rows:
        if r["connected"] != 1:
            continue
        lines.append("")
        lines.append(f"one person, {r['turns']} turns (ms):")
        for turn in r["turnDetail"]:
            cells = " | ".join(str(turn.get(stage, "–")) for stage in TURN_STAGES)
            lines.append(f"| | {turn['transport']} | | {cells} |")
    return "\n".join(lines)


def _table(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table. "MB per extra session" is the RSS difference to the first
    row's N (usually one person; the mean over its runs with ``--repeat``) divided by the
    sessions added, from the mean and the peak of the once-a-second samples (each row is a
    fresh gateway)."""
    head = (
        "| N (rtc) | turns | missed | transcript p50/p95 ms | first audio p50/p95 ms | "
        "gateway CPU % | RSS MB mean / peak (idle) | MB per extra session mean / peak | "
        "loop lag p99 ms | load.py CPU % | refused |"
    )
    lines = [head, "|---" * 11 + "|"]
    base = [r for r in rows if r["sessions"] == rows[0]["sessions"]]
    if base:
        people, mean, peak = (
            statistics.fmean(b[k] for b in base) for k in ("connected", "rssMeanMb", "rssMb")
        )
    for r in rows:
        extra = "–"
        if base and (added := r["connected"] - people) > 0:
            extra = f"{(r['rssMeanMb'] - mean) / added:.1f} / {(r['rssMb'] - peak) / added:.1f}"
        lines.append(
            f"| {r['connected']} ({r['webrtc']}) | {r['turns']} | {r['missed']} "
            f"| {r['transcriptP50Ms']} / {r['transcriptP95Ms']} | {r['p50Ms']} / {r['p95Ms']} "
            f"| {r['cpuPercent']} | {r['rssMeanMb']} / {r['rssMb']} ({r['rssIdleMb']}) "
            f"| {extra} | {r['loopLagP99Ms']} | {r['loadCpuPercent']} | {r['refused']} |"
        )
    return "\n".join(lines)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--sessions", default="12", help="clients at once; a comma list runs each (1,2,4,8,12,16)"
    )
    parser.add_argument("--seconds", type=float, default=60, help="steady window per run (60)")
    parser.add_argument("--ramp", type=float, default=None, help="seconds to open all clients")
    parser.add_argument("--max-sessions", type=int, help="serve --max-sessions (default: serve's)")
    parser.add_argument("--url", help="use this running gateway (http://HOST:PORT) instead")
    parser.add_argument("--pid", type=int, help="its process id (with --url)")
    parser.add_argument(
        "--webrtc-every", type=int, default=4, help="every Kth client uses WebRTC (4; 0: none)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run each N this many times (p95s at 12 people vary by ±0.2 s between 90 s runs: "
        "judge a change by several)",
    )
    parser.add_argument(
        "--serve-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="pass ARG on to serve, e.g. --serve-arg=--trim-memory=1 (repeatable)",
    )
    parser.add_argument("--log", type=Path, help="keep the gateway's output in this file")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()
    if bool(args.url) != bool(args.pid):
        parser.error("--url and --pid go together")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    counts = [int(n) for n in args.sessions.split(",") for _ in range(args.repeat)]
    clips = load_clips()
    speed = piper_rtf()  # before the gateway starts: the machine's own speed today
    rows = []
    for n in counts:
        extra = ["--max-sessions", str(args.max_sessions or max(16, n)), *args.serve_arg]
        gateway = (
            ServedGateway(args.url, args.pid)
            if args.url
            else ServedGateway.start(*extra, log=args.log)
        )
        try:
            ramp = args.ramp if args.ramp is not None else 0.5 * n
            row = await run_load(
                gateway, clips, n, args.seconds, ramp_s=ramp, webrtc_every=args.webrtc_every
            )
        finally:
            gateway.stop()
        row["piperRtf"] = speed
        rows.append(row)
        if not args.json:
            print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows[0] if len(rows) == 1 else rows, indent=2))
    else:
        allocators = sorted({str(r.get("allocator")) for r in rows})
        print(
            f"{os.cpu_count()} cores; {platform_line()}; allocator {', '.join(allocators)}; "
            f"Piper RTF on one thread before the run {speed} (the machine's speed; lower is faster)"
        )
        print(_table(rows))
        print()
        print(_stage_table(rows))
        if args.repeat > 1:
            print(_spread(rows))
    return 0


def _spread(rows: list[dict[str, Any]]) -> str:
    """Per N over the repeated runs: the median and range of the first-audio p95."""
    lines = []
    for n in dict.fromkeys(r["sessions"] for r in rows):
        p95s = sorted(r["p95Ms"] for r in rows if r["sessions"] == n and r["p95Ms"] is not None)
        if p95s:
            lines.append(
                f"N={n}: first-audio p95 median {statistics.median(p95s):.0f} ms, "
                f"range {p95s[0]:.0f}–{p95s[-1]:.0f} ms over {len(p95s)} runs"
            )
    return "\n".join(lines)


def platform_line() -> str:
    """The CPU model, for the table's caption."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
