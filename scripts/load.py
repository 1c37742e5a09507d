"""Load generator: N people talking to the built-in parrot at once, in real time.

Starts ``python -m gateway serve`` (parrot only) as a subprocess — or uses one given with
``--url`` and ``--pid`` — and opens N clients over the documented protocol
(``docs/client-protocol.md``): every fourth over WebRTC (aiortc), the rest sending 16 kHz PCM on
the WebSocket. Each client streams its microphone without a break (silence between turns) and
loops: a 2–4 s pause, one sentence of Piper speech in real time (20 ms frames), then it waits for
the parrot's spoken reply to end. Per turn it records, from the moment it sent the last voiced
frame (end of speech):

- → final transcript: the ``transcript`` event's arrival;
- → first reply audio: the first binary audio frame after it (WebSocket), or the first inbound
  RTP frame with energy in it (WebRTC).

Over the steady window (after every client is up and greeted) it samples the gateway's CPU and
RSS from ``/proc``, and reads the event-loop lag histogram from ``/metrics``.

    .venv/bin/python scripts/load.py --sessions 12 --seconds 60
    .venv/bin/python scripts/load.py --sessions 1,2,4,8,12,16 --seconds 60   # the table
    .venv/bin/python scripts/load.py --sessions 16 --max-sessions 12 --json  # past capacity
    .venv/bin/python scripts/load.py --sessions 12 --repeat 4 --seconds 90   # the spread
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fractions
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import av
import numpy as np
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gateway.audio import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, resample  # noqa: E402
from gateway.server.webrtc import WEBRTC_RATE  # noqa: E402
from tests.support.speech import piper_16k  # noqa: E402

#: What the clients say (short requests, 1.5–3 s each, as people talk to an assistant).
SENTENCES = (
    "What is the weather like today?",
    "Please turn off the kitchen lights.",
    "Book a table for two people tonight.",
    "Play some relaxing music in the living room.",
    "Set an alarm for seven in the morning.",
    "Is it going to rain this afternoon?",
    "Open the garage door.",
    "Turn the volume down a little.",
)
FRAME_S = FRAME_MS / 1000
#: The gateway's per-stage latency histograms read from ``/metrics``.
STAGES = ("endpoint", "stt", "stt_queue", "stt_decode", "agent", "tts_first_audio", "total")
RTC_RATE = WEBRTC_RATE
RTC_FRAME = RTC_RATE * FRAME_MS // 1000
#: A turn with no reply audio this long after the end of speech counts as missed.
TURN_TIMEOUT_S = 15.0
#: Time beyond a clip's length for its frames to go out before the client counts as cut off.
MOUTH_SLACK_S = 5.0
#: Quiet after the gateway spoke that ends a reply (the parrot pauses 300 ms inside one).
REPLY_SETTLE_S = 1.2
#: Peak sample level that counts as sound in a received WebRTC frame (Opus leaves faint noise).
ENERGY_PEAK = 500


# ---------------------------------------------------------------------------------- speech
@dataclass(frozen=True)
class Clip:
    """One sentence cut into frames ahead of time, so clients only pick frames while running."""

    ws: tuple[bytes, ...]  # 20 ms of 16 kHz s16le each
    rtc: tuple[np.ndarray, ...]  # 20 ms of 48 kHz int16 each, shaped (1, 960) for PyAV
    last_voiced: int  # index of the last frame with speech in it


def _frames(pcm: np.ndarray, size: int) -> list[np.ndarray]:
    pcm = np.concatenate([pcm, np.zeros(-len(pcm) % size, np.int16)])
    return [pcm[i : i + size] for i in range(0, len(pcm), size)]


def load_clips() -> list[Clip]:
    """Piper speech of :data:`SENTENCES` (cached WAVs via ``tests.support.speech``), framed."""
    clips = []
    for text in SENTENCES:
        pcm = piper_16k(text)
        frames = _frames(pcm, FRAME_SAMPLES)
        rms = np.array([np.sqrt(np.mean(f.astype(np.float64) ** 2)) for f in frames])
        voiced = np.nonzero(rms >= rms.max() * 0.01)[0]  # -40 dB below the loudest frame
        hi = resample(pcm, SAMPLE_RATE, RTC_RATE)
        clips.append(
            Clip(
                ws=tuple(f.astype("<i2").tobytes() for f in frames),
                rtc=tuple(np.ascontiguousarray(f.reshape(1, -1)) for f in _frames(hi, RTC_FRAME)),
                last_voiced=int(voiced[-1]),
            )
        )
    return clips


class Mouth:
    """A client's microphone: silence, or a clip while one is being said; one frame per tick."""

    def __init__(self, rtc: bool) -> None:
        self._rtc = rtc
        self._silence: bytes | np.ndarray = (
            np.zeros((1, RTC_FRAME), np.int16) if rtc else bytes(2 * FRAME_SAMPLES)
        )
        self._clip: Clip | None = None
        self._index = 0
        self._ended: asyncio.Future[float] | None = None

    def say(self, clip: Clip) -> asyncio.Future[float]:
        """Start saying ``clip``; the future gets the time its last voiced frame went out."""
        self._clip, self._index = clip, 0
        self._ended = asyncio.get_running_loop().create_future()
        return self._ended

    def next_frame(self) -> bytes | np.ndarray:
        """This tick's frame (the caller sends it now)."""
        clip = self._clip
        if clip is None:
            return self._silence
        frames = clip.rtc if self._rtc else clip.ws
        frame = frames[self._index] if self._index < len(frames) else self._silence
        if self._index == clip.last_voiced and self._ended and not self._ended.done():
            self._ended.set_result(time.monotonic())
        self._index += 1
        if self._index >= len(frames):
            self._clip = None
        return frame


class MouthTrack(MediaStreamTrack):
    """An aiortc track that plays a :class:`Mouth` at 48 kHz, paced at 20 ms per frame."""

    kind = "audio"

    def __init__(self, mouth: Mouth) -> None:
        super().__init__()
        self._mouth = mouth
        self._start: float | None = None
        self._n = 0
        self._time_base = fractions.Fraction(1, RTC_RATE)

    async def recv(self) -> av.AudioFrame:
        if self.readyState != "live":
            raise MediaStreamError
        if self._start is None:
            self._start = time.monotonic()
        await asyncio.sleep(max(0.0, self._start + self._n * FRAME_S - time.monotonic()))
        frame = av.AudioFrame.from_ndarray(self._mouth.next_frame(), format="s16", layout="mono")
        frame.sample_rate = RTC_RATE
        frame.pts = self._n * RTC_FRAME
        frame.time_base = self._time_base
        self._n += 1
        return frame


# ---------------------------------------------------------------------------------- clients
@dataclass
class Turn:
    """One utterance and what came back (monotonic seconds)."""

    end_of_speech: float
    transcript: float | None = None
    first_audio: float | None = None
    text: str = ""
    gaps: int = 0


@dataclass
class Tally:
    """What every client saw, for the report."""

    turns: list[Turn] = field(default_factory=list)
    rtc_turns: list[Turn] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Client:
    """One person: a WebSocket for events (and PCM audio), or WebRTC for the audio."""

    def __init__(
        self, url: str, clips: list[Clip], tally: Tally, *, transport: str, seed: int
    ) -> None:
        self.url = url
        self.clips = clips
        self.tally = tally
        self.transport = transport  # "ws", "webrtc" or "none" (text only)
        self.rtc = transport == "webrtc"
        self.replies = 0  # agent utterances seen
        self.rng = random.Random(seed)
        self.mouth = Mouth(self.rtc)
        self.ws: ClientConnection | None = None
        self.pc: RTCPeerConnection | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._turn: Turn | None = None
        self._state = ("listening", 0.0)  # the session's state and when it began
        self._spoke = False  # the gateway has spoken since this turn began
        self._lost = False  # the gateway gave up on this turn (a notice)
        self._answer: asyncio.Future[str] | None = None

    async def open(self) -> bool:
        """Connect and say hello; False if the gateway refused the session."""
        self.ws = await connect(self.url, max_size=2**20, compression=None)
        try:
            # A full gateway closes at once, maybe before the hello is even sent.
            await self.ws.send(json.dumps({"type": "hello", "transport": self.transport}))
            welcome = json.loads(await self.ws.recv())
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd else "closed"
            self.tally.refused.append(f"{exc.rcvd.code if exc.rcvd else '?'} {reason}")
            return False
        assert welcome["type"] == "welcome", welcome
        loop = asyncio.get_running_loop()
        self._tasks.append(loop.create_task(self._read_ws()))
        if self.rtc:
            await self._negotiate()
        elif self.transport == "ws":
            self._tasks.append(loop.create_task(self._speak_ws()))
        return True

    async def _negotiate(self) -> None:
        assert self.ws is not None
        self.pc = pc = RTCPeerConnection()
        pc.addTrack(MouthTrack(self.mouth))

        @pc.on("connectionstatechange")
        def on_state() -> None:
            if pc.connectionState == "failed":
                self.tally.errors.append("a WebRTC connection failed")

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            self._tasks.append(asyncio.get_running_loop().create_task(self._hear_rtc(track)))

        await pc.setLocalDescription(await pc.createOffer())
        self._answer = asyncio.get_running_loop().create_future()
        await self.ws.send(json.dumps({"type": "offer", "sdp": pc.localDescription.sdp}))
        sdp = await asyncio.wait_for(self._answer, 10)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))

    async def converse(self, until: float) -> None:
        """Take turns until ``until`` (monotonic): pause, speak, wait for the reply to end."""
        await self._reply_finished(10)  # the parrot's greeting, heard out as a person would
        n = self.rng.randrange(len(self.clips))
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(2.0, 4.0))
            if time.monotonic() >= until:
                break
            self._spoke = self._lost = False
            turn = Turn(0.0)
            self._turn = turn
            clip = self.clips[n % len(self.clips)]
            try:
                # Bounded: a dropped connection stops the frames, and the clip would never end.
                turn.end_of_speech = await asyncio.wait_for(
                    self.mouth.say(clip), FRAME_S * len(clip.ws) + MOUTH_SLACK_S
                )
            except TimeoutError:
                self.tally.errors.append(f"a {self.transport} client's audio stopped going out")
                return
            n += 1
            self.tally.turns.append(turn)
            if self.rtc:
                self.tally.rtc_turns.append(turn)
            await self._reply_finished(TURN_TIMEOUT_S)
            self._turn = None

    async def _reply_finished(self, timeout: float) -> None:
        """Wait until the gateway spoke and then stayed quiet for :data:`REPLY_SETTLE_S` (a
        reply may pause between its parts), the turn was lost, or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._lost:
            state, since = self._state
            if self._spoke and state == "listening" and time.monotonic() - since >= REPLY_SETTLE_S:
                return
            await asyncio.sleep(0.1)

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        turn = self._turn
        if kind == "transcript" and not event.get("typed"):
            if turn is not None and turn.transcript is None:
                turn.transcript = time.monotonic()
                turn.text = str(event.get("text", ""))
        elif kind == "state":
            state = str(event.get("state"))
            if state == "speaking":
                if self._spoke and turn is not None:
                    turn.gaps += 1  # the reply went quiet mid-way and resumed
                self._spoke = True
            self._state = (state, time.monotonic())
        elif kind == "notice":
            self.tally.notices.append(str(event.get("text")))
            if turn is not None and turn.transcript is None:
                self._lost = True  # e.g. "please say that again": this turn is lost
        elif kind == "utterance":
            self.replies += 1
        elif kind == "answer" and self._answer is not None and not self._answer.done():
            self._answer.set_result(str(event.get("sdp", "")))
        elif kind == "error":
            self.tally.errors.append(str(event.get("message")))

    def _on_audio(self) -> None:
        turn = self._turn
        if turn is not None and turn.transcript is not None and turn.first_audio is None:
            turn.first_audio = time.monotonic()

    async def _read_ws(self) -> None:
        assert self.ws is not None
        with contextlib.suppress(ConnectionClosed):
            async for message in self.ws:
                if isinstance(message, bytes):
                    self._on_audio()
                else:
                    self._on_event(json.loads(message))

    async def _speak_ws(self) -> None:
        assert self.ws is not None
        # A random phase, so clients' frames do not all arrive in the same instant.
        await asyncio.sleep(self.rng.uniform(0, FRAME_S))
        start, n = time.monotonic(), 0
        with contextlib.suppress(ConnectionClosed):
            while True:
                await self.ws.send(self.mouth.next_frame())
                n += 1
                await asyncio.sleep(max(0.0, start + n * FRAME_S - time.monotonic()))

    async def _hear_rtc(self, track: MediaStreamTrack) -> None:
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                turn = self._turn
                # Only look inside frames while a reply is awaited: the rest is just drained.
                if (
                    turn is not None
                    and turn.transcript is not None
                    and turn.first_audio is None
                    and np.abs(frame.to_ndarray()).max() >= ENERGY_PEAK
                ):
                    self._on_audio()

    async def close(self) -> None:
        """Hang up and stop every task of this client."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.pc is not None:
            await self.pc.close()
        if self.ws is not None:
            await self.ws.close()


# ---------------------------------------------------------------------------------- the gateway
@dataclass(frozen=True)
class ProcSample:
    """One reading of a process from ``/proc``."""

    cpu_s: float
    rss_mb: float
    threads: int
    fds: int


def read_proc(pid: int) -> ProcSample:
    """CPU seconds used so far, resident memory, threads and open file descriptors."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return ProcSample(
        cpu_s=cpu,
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        threads=int(status["Threads"]),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
    )


def machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (``/proc/stat``), to see other work."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class ServedGateway:
    """A ``serve`` process started for the run (parrot only), or one already running."""

    def __init__(self, url: str, pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
        self.url = url.rstrip("/")
        self.ws = self.url.replace("http", "ws", 1) + "/ws"
        self.pid = pid
        self.proc = proc
        self._data: str | None = None

    @classmethod
    def start(cls, *extra: str, log: Path | None = None) -> ServedGateway:
        """Start ``serve`` on a free port with a throwaway records folder; wait until ready."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = tempfile.mkdtemp(prefix="ofp-load-")
        out = open(log or Path(data) / "serve.log", "wb")  # noqa: SIM115 (the process owns it)
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "gateway", "serve", "--port", str(port), "--data", data),
                *("--agent", "builtin:parrot", *extra),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        gateway = cls(f"http://127.0.0.1:{port}", proc.pid, proc)
        gateway._data = data
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}; see {out.name}")
            with contextlib.suppress(OSError):
                if gateway.get("/healthz").startswith("ok"):
                    return gateway
            time.sleep(0.3)
        proc.kill()
        raise RuntimeError("serve did not become ready in 120 s")

    def get(self, path: str) -> str:
        """GET a path of the gateway as text."""
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return r.read().decode()

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as a flat ``{"name{labels}": value}`` dict."""
        flat = {}
        for family in text_string_to_metric_families(self.get("/metrics")):
            for s in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                flat[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
        return flat

    def stop(self) -> None:
        """Stop the process this script started (SIGTERM, then SIGKILL after 20 s)."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._data:
            shutil.rmtree(self._data, ignore_errors=True)


def histogram_quantile(
    before: dict[str, float], after: dict[str, float], name: str, q: float
) -> float:
    """The ``q`` quantile of what histogram ``name`` observed between two scrapes, interpolated
    inside the bucket it falls in (as Prometheus' ``histogram_quantile`` does)."""
    bounds = sorted(
        (float(key.split("le=")[1].rstrip("}")), after[key] - before.get(key, 0.0))
        for key in after
        if key.startswith(f"{name}_bucket{{")
    )
    total = bounds[-1][1] if bounds else 0.0
    if total <= 0:
        return 0.0
    rank, lower, below = q * total, 0.0, 0.0
    for upper, count in bounds:
        if count >= rank:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (rank - below) / max(count - below, 1e-9)
        lower, below = upper, count
    return lower


def stage_metrics(scrape: dict[str, float], stage: str) -> dict[str, float]:
    """The buckets of one stage of ``ofp_gateway_stage_seconds``, renamed ``s_bucket{le=…}``."""
    prefix = "ofp_gateway_stage_seconds_bucket{le="
    return {
        f"s_bucket{{le={key[len(prefix) :].split(',')[0]}}}": value
        for key, value in scrape.items()
        if key.startswith(prefix) and key.endswith(f"stage={stage}}}")
    }


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
) -> dict[str, Any]:
    """N clients for ``seconds`` of steady state; the report as a dict (times in ms)."""
    tally = Tally()
    idle = read_proc(gateway.pid)
    clients = [
        Client(
            gateway.ws,
            clips,
            tally,
            transport="webrtc" if webrtc_every and i % webrtc_every == webrtc_every - 1 else "ws",
            seed=i,
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
    rss = [start_proc.rss_mb]
    while time.monotonic() < until:
        await asyncio.sleep(1.0)
        rss.append(read_proc(gateway.pid).rss_mb)
    end, end_proc, end_own = time.monotonic(), read_proc(gateway.pid), time.process_time()
    end_busy = machine_busy_s()
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
        "webrtc": sum(c.rtc for c in opened),
        "refused": len(tally.refused),
        "refusal": tally.refused[0] if tally.refused else None,
        "seconds": round(elapsed, 1),
        "turns": len(window),
        "missed": len(window) - len(replies),
        "noTranscript": len(window) - len(finals),
        "replyGaps": sum(t.gaps for t in window),
        # Sentences the gateway's synthesizer finished after the audio before them had played.
        "lateSentences": _delta(start_metrics, end_metrics, "ofp_gateway_tts_late_sentences"),
        # Final transcripts decoded a second time on the full window (slow).
        "sttFullWindow": _delta(start_metrics, end_metrics, "ofp_gateway_stt_full_window_retries"),
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
            _delta(start_metrics, end_metrics, "ofp_gateway_memory_released_bytes_total") / 2**20
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
        "notices": sorted(set(tally.notices)),
        "errors": sorted(set(tally.errors)),
    }


def _delta(start: dict[str, float], end: dict[str, float], name: str) -> int:
    return round(end.get(name, 0) - start.get(name, 0))


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
        rows.append(row)
        if not args.json:
            print(json.dumps(row), file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(rows[0] if len(rows) == 1 else rows, indent=2))
    else:
        allocators = sorted({str(r.get("allocator")) for r in rows})
        print(f"{os.cpu_count()} cores; {platform_line()}; allocator {', '.join(allocators)}")
        print(_table(rows))
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
