"""Where every CPU-millisecond of a turn goes: ``scripts/load.py`` with a profiler on the gateway.

For each N it starts a ``serve`` (parrot only), runs :func:`gateway.testing.load.run_load` and,
over its steady window, (1) reads every thread's CPU time from ``/proc/PID/task`` (the ground
truth), (2) samples the Python threads' stacks with py-spy (``--idle``, so a thread waiting on a
native call is seen too), and (3) after the window names the native threads (CTranslate2's
Whisper worker, llama.cpp's, onnxruntime's, …) from one ``gdb`` backtrace. It folds them into
stages and prints CPU-ms per turn per stage:

- a Python thread's CPU is split over its stages by its busy samples (idle samples — a thread
  waiting on a lock, a queue or ``select`` — carry no CPU);
- a native thread's CPU goes to the stage of its library; CTranslate2's (Whisper) is split
  between final and partial decodes by what the ``stt`` worker threads waited on.

py-spy is a test dependency (``pip install -e .[test]``; by hand: ``.venv/bin/pip install
py-spy``); gdb is Debian's ``gdb``. Run it alone on the machine (it measures CPU):

    flock /tmp/bench.lock .venv/bin/python scripts/profile_load.py --sessions 1,12,20
    .venv/bin/python scripts/profile_load.py --sessions 12 --keep /tmp/prof --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gateway.testing.figures import piper_rtf
from gateway.testing.load import platform_line, run_load
from gateway.testing.load_client import load_clips
from gateway.testing.load_metrics import ServedGateway, thread_cpu

#: Stages a Python stack belongs to: the first rule (in this order) one of whose patterns occurs
#: in any of the stack's frames wins. The patterns are file paths (py-spy's ``function (file:line)``
#: frames) or function names.
RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("partial decodes", ("_decode_partial ",)),
    ("final decodes", ("gateway/voice/stt.py", "faster_whisper/", "ctranslate2/")),
    ("semantic signal", ("gateway/voice/semantic.py", "gateway/llm/")),
    ("Piper synthesis", ("gateway/render/tts.py", "piper/", "gateway/render/ssml_audio")),
    ("smart turn", ("gateway/voice/smart_turn.py",)),
    ("VAD", ("gateway/voice/vad.py",)),
    ("prosody", ("gateway/voice/prosody.py",)),
    ("echo", ("gateway/audio/echo.py",)),
    ("resampling", ("gateway/audio/resample.py",)),
    ("WebRTC, Opus", ("aiortc/", "aioice/", "gateway/server/webrtc.py", "av/", "pylibsrtp")),
    (
        "turn-taking",
        (
            "gateway/proxy/turn_taker.py",
            "gateway/proxy/turn_rule.py",
            "gateway/proxy/sentences.py",
            "gateway/voice/endpoint.py",
            "turn_signals.py",
        ),
    ),
    ("records", ("gateway/records/",)),
    ("floor, agents", ("gateway/floor/", "gateway/agents/", "gateway/ofp/")),
    ("metrics", ("prometheus_client/", "gateway/server/metrics.py")),
    ("WebSocket, JSON", ("websockets/", "message_codec.py", "json/", "aiohttp/")),
)
#: A stack whose innermost frame is one of these is a thread waiting, not working.
IDLE_LEAVES = (
    "select (selectors.py",
    "wait (threading.py",
    "_wait_for_tstate_lock (threading.py",
    "sleep (",
    "get (queue.py",
    "_worker (concurrent/futures/thread.py",
    "accept (socket.py",
    "readinto (socket.py",
    "recv_into (",
    "wait (concurrent/futures/_base.py",
)
#: The innermost frames of a Whisper worker thread waiting on CTranslate2, which runs the
#: encoder, the beam search and the alignment on a native thread of its own (the line of
#: ``Transcriber._decode`` that calls it, or faster-whisper's alignment helpers).
WHISPER_CALLS = (
    "Transcriber._decode (gateway/voice/stt.py",
    "Transcriber._language (gateway/voice/stt.py",
    "find_alignment (faster_whisper/",
    "detect_language (faster_whisper/",
)
#: A native (non-Python) thread's stage, by the first library in its backtrace that names one.
NATIVE: tuple[tuple[str, str], ...] = (
    ("ctranslate2", "Whisper (native)"),
    ("ggml", "semantic signal"),
    ("llama", "semantic signal"),
    ("onnxruntime", "onnxruntime (native)"),
    ("opus", "WebRTC, Opus"),
    ("avcodec", "WebRTC, Opus"),
    ("jemalloc", "allocator"),
    ("je_", "allocator"),
    ("openblas", "OpenBLAS threads (numpy)"),
    ("gomp", "OpenMP threads"),
)
WHISPER = "Whisper (native)"
IDLE = "idle"
OTHER = "event loop, other"


# ---------------------------------------------------------------------------------- folding
def classify(frames: list[str]) -> str:
    """The stage of one Python stack (outermost frame first), or :data:`IDLE`."""
    if frames and any(leaf in frames[-1] for leaf in IDLE_LEAVES):
        return IDLE
    joined = ";".join(frames)
    for stage, patterns in RULES:
        if any(p in joined for p in patterns):
            return stage
    return OTHER


#: py-spy's ``--threads`` root frame: ``thread (0x7F…)`` with the OS thread id in it for newer
#: versions (``process 1:"…";thread (0x…)`` or ``thread (123)``).
_THREAD = re.compile(r"thread \((0x[0-9A-Fa-f]+|\d+)\)")


@dataclass
class ThreadSamples:
    """One Python thread's samples: how many fell in each stage."""

    stages: Counter[str] = field(default_factory=Counter)
    #: Samples waiting inside a CTranslate2 call, by decode kind.
    whisper_waits: Counter[str] = field(default_factory=Counter)


def fold_raw(text: str) -> dict[int, ThreadSamples]:
    """py-spy ``--format raw --threads`` output (``frame;frame;… count`` lines) by thread id."""
    threads: dict[int, ThreadSamples] = defaultdict(ThreadSamples)
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        tid = 0
        for i, frame in enumerate(frames[:3]):
            if match := _THREAD.search(frame):
                tid = int(match.group(1), 0)
                frames = frames[i + 1 :]
                break
        samples = threads[tid]
        stage = classify(frames)
        samples.stages[stage] += int(count)
        if stage in ("final decodes", "partial decodes") and _in_native_whisper(frames):
            samples.whisper_waits[stage] += int(count)
    return dict(threads)


def _in_native_whisper(frames: list[str]) -> bool:
    """Whether the innermost frame is a call CTranslate2 runs on its own thread."""
    leaf = frames[-1] if frames else ""
    return any(call in leaf for call in WHISPER_CALLS)


# ---------------------------------------------------------------------------------- the process
def thread_cpu_s(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of every thread of the process, by OS thread id."""
    return {tid: cpu for tid, (cpu, _nice) in thread_cpu(pid).items()}


def native_threads(pid: int, keep: Path | None = None) -> dict[int, str]:
    """Each OS thread's stage by the libraries in its ``gdb`` backtrace (Python threads too:
    the caller ignores those); the backtraces are kept in ``keep`` when given."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return {}
    done = subprocess.run(
        [gdb, "-p", str(pid), "-batch", "-nx", "-ex", "thread apply all bt 40"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if keep is not None:
        keep.write_text(done.stdout)
    names: dict[int, str] = {}
    tid, trace = 0, ""
    for line in [*done.stdout.splitlines(), "Thread 0 (LWP 0)"]:
        if line.startswith("Thread ") and (lwp := re.search(r"LWP (\d+)", line)):
            if tid:
                names[tid] = _native_stage(trace)
            tid, trace = int(lwp.group(1)), ""
        else:
            trace += line.lower() + "\n"
    return names


def _native_stage(trace: str) -> str:
    if "pyeval" in trace or "_pyeval_evalframe" in trace:
        return "python"
    for needle, stage in NATIVE:
        if needle in trace:
            return stage
    return "other native"


# ---------------------------------------------------------------------------------- one run
@dataclass
class Profile:
    """What the window's profiler and ``/proc`` readings collected."""

    cpu_start: dict[int, float] = field(default_factory=dict)
    cpu_end: dict[int, float] = field(default_factory=dict)
    spy: subprocess.Popen[bytes] | None = None


def fold(
    cpu: dict[int, float], samples: dict[int, ThreadSamples], natives: dict[int, str]
) -> dict[str, float]:
    """CPU seconds by stage over the window (see the module docstring)."""
    stages: defaultdict[str, float] = defaultdict(float)
    whisper_split: Counter[str] = Counter()
    for seen in samples.values():
        whisper_split.update(seen.whisper_waits)
    for tid, seconds in cpu.items():
        thread = samples.get(tid)
        busy = {k: v for k, v in thread.stages.items() if k != IDLE} if thread else {}
        if thread is not None and busy:
            total = sum(busy.values())
            for stage, n in busy.items():
                stages[stage] += seconds * n / total
        elif thread is not None:
            stages[OTHER] += seconds  # a Python thread seen only idle: its little CPU is glue
        else:
            stage = natives.get(tid, "other native")
            if stage == WHISPER and sum(whisper_split.values()) > 0:
                total = sum(whisper_split.values())
                for kind, n in whisper_split.items():
                    stages[kind] += seconds * n / total
            elif stage == "python":
                stages[OTHER] += seconds  # a Python thread py-spy did not report
            else:
                stages[stage] += seconds
    return dict(stages)


async def profile_one(
    n: int, seconds: float, rate: int, serve_args: list[str], keep: Path
) -> dict[str, Any]:
    """One run at ``n`` people with the profiler attached; the load row plus ``cpuMsPerTurn``."""
    clips = load_clips()
    gateway = ServedGateway.start("--max-sessions", str(max(16, n)), *serve_args)
    spy_bin = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    raw = keep / f"pyspy-{n}.txt"
    profile = Profile()

    def window(started: bool) -> None:
        if started:
            profile.cpu_start = thread_cpu_s(gateway.pid)
            profile.spy = subprocess.Popen(
                [
                    *(spy_bin, "record", "--pid", str(gateway.pid), "--rate", str(rate)),
                    *("--format", "raw", "--threads", "--idle", "--nonblocking"),
                    *("--duration", str(round(seconds)), "--output", str(raw)),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        else:
            profile.cpu_end = thread_cpu_s(gateway.pid)

    uptime_before = Path("/proc/loadavg").read_text().split()[:3]
    try:
        row = await run_load(gateway, clips, n, seconds, ramp_s=0.5 * n, on_window=window)
        if profile.spy is not None:
            profile.spy.wait(timeout=60)
        natives = native_threads(gateway.pid, keep / f"gdb-{n}.txt")
    finally:
        if profile.spy is not None and profile.spy.poll() is None:
            profile.spy.kill()
        gateway.stop()
    uptime_after = Path("/proc/loadavg").read_text().split()[:3]
    cpu = {
        tid: end - profile.cpu_start.get(tid, 0.0)
        for tid, end in profile.cpu_end.items()
        if end - profile.cpu_start.get(tid, 0.0) > 0
    }
    samples = fold_raw(raw.read_text()) if raw.exists() else {}
    stages = fold(cpu, samples, natives)
    (keep / f"threads-{n}.json").write_text(
        json.dumps(
            {
                tid: {"cpuS": round(s, 3), "native": natives.get(tid), "python": tid in samples}
                for tid, s in sorted(cpu.items(), key=lambda kv: -kv[1])
            },
            indent=1,
        )
    )
    turns = max(1, row["turns"])
    row["loadAverageBefore"], row["loadAverageAfter"] = uptime_before, uptime_after
    row["profiledThreads"] = len(samples)
    row["cpuMsPerTurn"] = {
        stage: round(1000 * s / turns, 1) for stage, s in sorted(stages.items(), key=_by_size)
    }
    row["cpuMsPerTurnTotal"] = round(1000 * sum(stages.values()) / turns, 1)
    return row


def _by_size(item: tuple[str, float]) -> float:
    return -item[1]


def table(rows: list[dict[str, Any]]) -> str:
    """CPU-ms per turn per stage, one column per run, stages by their size in the last run."""
    stages = list(dict.fromkeys(s for r in reversed(rows) for s in r["cpuMsPerTurn"]))
    head = "| stage | " + " | ".join(f"{r['connected']} people" for r in rows) + " |"
    lines = [head, "|---" * (1 + len(rows)) + "|"]
    for stage in stages:
        cells = " | ".join(str(r["cpuMsPerTurn"].get(stage, "–")) for r in rows)
        lines.append(f"| {stage} | {cells} |")
    totals = " | ".join(f"**{r['cpuMsPerTurnTotal']}**" for r in rows)
    lines.append(f"| **total** | {totals} |")
    lines.append("| turns | " + " | ".join(str(r["turns"]) for r in rows) + " |")
    lines.append("| gateway CPU % | " + " | ".join(str(r["cpuPercent"]) for r in rows) + " |")
    lines.append(
        "| first audio p50 / p95 ms | "
        + " | ".join(f"{r['p50Ms']} / {r['p95Ms']}" for r in rows)
        + " |"
    )
    lines.append(
        "| load average before → after | "
        + " | ".join(
            f"{r['loadAverageBefore'][0]} → {r['loadAverageAfter'][0]}" for r in rows
        )
        + " |"
    )
    return "\n".join(lines)


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", default="1,12,20", help="people per run (1,12,20)")
    parser.add_argument("--seconds", type=float, default=60, help="steady window per run (60)")
    parser.add_argument("--rate", type=int, default=50, help="py-spy samples a second (50)")
    parser.add_argument(
        "--serve-arg", action="append", default=[], metavar="ARG", help="passed on to serve"
    )
    parser.add_argument("--keep", type=Path, help="keep py-spy's raw profiles in this folder")
    parser.add_argument("--json", action="store_true", help="print JSON rows too")
    args = parser.parse_args()
    keep = args.keep or Path(tempfile.mkdtemp(prefix="ofp-profile-"))
    keep.mkdir(parents=True, exist_ok=True)
    speed = piper_rtf()
    rows = []
    for n in [int(s) for s in args.sessions.split(",")]:
        started = time.monotonic()
        row = await profile_one(n, args.seconds, args.rate, args.serve_arg, keep)
        row["piperRtf"] = speed
        row["wallS"] = round(time.monotonic() - started)
        row.pop("turnDetail", None)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print(f"{os.cpu_count()} cores; {platform_line()}; Piper RTF before the runs {speed}")
    print(table(rows))
    if args.json:
        print(json.dumps(rows, indent=2))
    if not args.keep:
        shutil.rmtree(keep, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
