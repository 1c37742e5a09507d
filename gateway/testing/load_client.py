"""A person talking to the gateway over the client protocol, for load and soak runs.

Each :class:`Client` speaks the documented protocol (``docs/client-protocol.md``) the way the page
does: a WebSocket for events and either 16 kHz PCM on the same socket or audio over WebRTC
(aiortc). It streams its microphone without a break (silence between turns) and, in
:meth:`Client.converse`, loops: a 2–4 s pause, one sentence of Piper speech in real time (20 ms
frames), then it waits for the spoken reply to end. Per turn it records, on its own monotonic
clock, from the moment it sent the last voiced frame (end of speech):

- the final transcript's arrival;
- the first reply audio: the first received frame with sound in it, over either transport;
- the gateway's stages (its ``timing`` message), placed on the client's clock, and over WebRTC
  when the RTP packet of that first frame arrived, so a turn's time splits into: in (client →
  gateway), the gateway's stages, and out (gateway → client).
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import random
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, TypeVar

import av
import numpy as np
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.jitterbuffer import JitterFrame
from aiortc.mediastreams import MediaStreamError
from aiortc.rtp import RtpPacket
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from gateway.audio import FRAME_MS, FRAME_SAMPLES, SAMPLE_RATE, resample
from gateway.server import message_codec as codec
from gateway.server import messages as m
from gateway.server.webrtc import JITTER_ATTR, WEBRTC_RATE, PromptJitterBuffer
from gateway.testing.speech import piper_16k

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
RTC_RATE = WEBRTC_RATE
RTC_FRAME = RTC_RATE * FRAME_MS // 1000
#: A turn with no reply audio this long after the end of speech counts as missed.
TURN_TIMEOUT_S = 15.0
#: Time beyond a clip's length for its frames to go out before the client counts as cut off.
MOUTH_SLACK_S = 5.0
#: Quiet after the gateway spoke that ends a reply (the parrot pauses 300 ms inside one).
REPLY_SETTLE_S = 1.2
#: Peak sample level that counts as sound in a received frame (Opus leaves faint noise).
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
    """Piper speech of :data:`SENTENCES` (cached WAVs via ``gateway.testing.speech``), framed."""
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


#: A frame as one transport sends it: bytes on the WebSocket, an int16 array on WebRTC.
Frame = TypeVar("Frame", bytes, np.ndarray)


class Mouth:
    """A client's microphone: silence, or a clip while one is being said; one frame per tick,
    as 16 kHz bytes for the WebSocket (:meth:`next_pcm`) or 48 kHz for WebRTC (:meth:`next_rtc`)."""

    def __init__(self) -> None:
        self._silent_pcm = bytes(2 * FRAME_SAMPLES)
        self._silent_rtc = np.zeros((1, RTC_FRAME), np.int16)
        self._clip: Clip | None = None
        self._index = 0
        self._ended: asyncio.Future[float] | None = None

    def say(self, clip: Clip) -> asyncio.Future[float]:
        """Start saying ``clip``; the future gets the time its last voiced frame went out."""
        self._clip, self._index = clip, 0
        self._ended = asyncio.get_running_loop().create_future()
        return self._ended

    def next_pcm(self) -> bytes:
        """This tick's 20 ms of 16 kHz s16le for the WebSocket (the caller sends it now)."""
        return self._next(self._clip.ws if self._clip else (), self._silent_pcm)

    def next_rtc(self) -> np.ndarray:
        """This tick's 20 ms of 48 kHz int16 for WebRTC (the caller sends it now)."""
        return self._next(self._clip.rtc if self._clip else (), self._silent_rtc)

    def _next(self, frames: tuple[Frame, ...], silence: Frame) -> Frame:
        clip = self._clip
        if clip is None:
            return silence
        frame = frames[self._index] if self._index < len(frames) else silence
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
        frame = av.AudioFrame.from_ndarray(self._mouth.next_rtc(), format="s16", layout="mono")
        frame.sample_rate = RTC_RATE
        frame.pts = self._n * RTC_FRAME
        frame.time_base = self._time_base
        self._n += 1
        return frame


class ArrivalJitterBuffer(PromptJitterBuffer):
    """The gateway's own prompt buffer (no hold), noting when each RTP packet arrived, so the
    client can tell the network's share of a reply's first frame from its decoding.

    The client measures when reply audio *arrives*, as over the WebSocket, where it stamps the
    frame's arrival: a page then plays either through a buffer of its own (the browser's jitter
    buffer, the WebSocket player's queue). aiortc's default buffer would add its 80 ms hold.
    """

    def __init__(self) -> None:
        super().__init__()
        self.first_timestamp: int | None = None
        self._arrivals: OrderedDict[int, float] = OrderedDict()
        #: (arrival, transit) per in-order packet: transit is the arrival minus the packet's
        #: place in the stream (its RTP timestamp in seconds), plus a constant. Its spread is
        #: what a receiver playing by the timestamps (a browser) must buffer to never run dry.
        self.transits: list[tuple[float, float]] = []
        self._last_timestamp: int | None = None
        self._stream_s = 0.0

    def add(self, packet: RtpPacket) -> tuple[bool, JitterFrame | None]:
        now = time.monotonic()
        if self.first_timestamp is None:
            self.first_timestamp = packet.timestamp  # aiortc's receiver maps this one to pts 0
        self._arrivals[packet.timestamp] = now
        while len(self._arrivals) > 256:
            self._arrivals.popitem(last=False)
        step = (packet.timestamp - (self._last_timestamp or packet.timestamp)) % 2**32
        if step < 2**31:  # not a reordered packet
            self._stream_s += step / RTC_RATE
            self._last_timestamp = packet.timestamp
            self.transits.append((now, now - self._stream_s))
        return super().add(packet)

    def arrival(self, pts: int) -> float | None:
        """When the packet of the decoded frame with ``pts`` arrived (None: not known)."""
        if self.first_timestamp is None:
            return None
        return self._arrivals.get((self.first_timestamp + pts) % 2**32)


# ---------------------------------------------------------------------------------- clients
@dataclass
class Turn:
    """One utterance and what came back (monotonic seconds on the client's clock)."""

    end_of_speech: float
    transcript: float | None = None
    first_audio: float | None = None
    text: str = ""
    gaps: int = 0
    #: The gateway's ``timing`` message: its stages (ms) from the arrival of the last voiced
    #: audio to the reply's first synthesised audio.
    stages: dict[str, Any] | None = None
    #: When the gateway had the last voiced audio, on this client's clock.
    heard: float | None = None
    #: WebRTC: when the RTP packet of the first reply frame with sound arrived.
    first_packet: float | None = None

    def breakdown(self) -> dict[str, float] | None:
        """Where this turn's time went (ms), stage by stage, or None if a part is missing:
        ``in`` (the client's last voiced frame → the gateway has it), the gateway's
        ``endpoint``, ``stt``, ``floor`` (routing and the agent), ``tts`` (first synthesised
        audio), then ``out`` (→ the first reply frame with sound at the client) and
        ``total``; over WebRTC ``out`` splits into ``network`` and ``decode``."""
        s = self.stages
        if s is None or self.heard is None or self.first_audio is None or s.get("total") is None:
            return None
        endpoint, stt, tts = s.get("endpoint") or 0.0, s.get("stt") or 0.0, s.get("ttsFirstAudio")
        ms = {
            "in": 1000 * (self.heard - self.end_of_speech),
            "endpoint": endpoint,
            "stt": stt,
            "floor": s["total"] - endpoint - stt - (tts or 0.0),
            "tts": tts or 0.0,
            "out": 1000 * (self.first_audio - self.heard) - s["total"],
            "total": 1000 * (self.first_audio - self.end_of_speech),
        }
        if self.first_packet is not None:
            ms["network"] = 1000 * (self.first_packet - self.heard) - s["total"]
            ms["decode"] = 1000 * (self.first_audio - self.first_packet)
        return {k: round(v, 1) for k, v in ms.items()}


@dataclass
class Tally:
    """What every client saw, for the report."""

    turns: list[Turn] = field(default_factory=list)
    rtc_turns: list[Turn] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _loud(pcm: np.ndarray) -> bool:
    return bool(pcm.size) and int(np.abs(pcm.astype(np.int32)).max()) >= ENERGY_PEAK


class Client:
    """One person: a WebSocket for events (and PCM audio), or WebRTC for the audio."""

    def __init__(
        self,
        url: str,
        clips: list[Clip],
        tally: Tally,
        *,
        transport: m.Transport,
        seed: int,
        hello: dict[str, Any] | None = None,
        node: str = "",
    ) -> None:
        self.url = url
        #: Extra hello fields (``conversation_id`` and ``token`` to rejoin a conversation).
        self.hello = hello or {}
        #: The node HAProxy chose (its sticky cookie), kept for a rejoin.
        self.node = node
        self.welcome: m.Welcome | None = None
        #: ``(monotonic time, kind, text)`` of what the gateway said: ``notice``, ``reply``,
        #: ``transcript`` (scripts/bench_faults.py reads who was told what, when).
        self.said: list[tuple[float, str, str]] = []
        #: True once the connection dropped (the gateway went away), and when.
        self.dropped = False
        self.dropped_at: float | None = None
        self.clips = clips
        self.tally = tally
        self.transport = transport
        self.rtc = transport == "webrtc"
        self.replies = 0  # agent utterances seen
        self.rng = random.Random(seed)
        self.mouth = Mouth()
        self.ws: ClientConnection | None = None
        self.pc: RTCPeerConnection | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._turn: Turn | None = None
        self._state = (m.SessionState.LISTENING, 0.0)  # the session's state, since when
        self._spoke = False  # the gateway has spoken since this turn began
        self._lost = False  # the gateway gave up on this turn (a notice)
        self._answer: asyncio.Future[str] | None = None
        #: WebRTC: the receiving side's buffer, with its arrival times.
        self.jitter: ArrivalJitterBuffer | None = None

    async def open(self) -> bool:
        """Connect and say hello; False if the gateway refused the session."""
        headers = {"Cookie": f"OFPNODE={self.node}"} if self.node else {}
        self.ws = await connect(
            self.url, max_size=2**20, compression=None, additional_headers=headers
        )
        cookie = self.ws.response.headers.get("Set-Cookie", "") if self.ws.response else ""
        if "OFPNODE=" in cookie:
            self.node = cookie.split(";")[0].partition("=")[2]
        try:
            # A full gateway closes at once, maybe before the hello is even sent.
            hello = m.Hello(transport=self.transport, **self.hello)
            await self.ws.send(hello.to_json())
            self.welcome = m.Welcome.from_json(await self.ws.recv())
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd else "closed"
            self.tally.refused.append(f"{exc.rcvd.code if exc.rcvd else '?'} {reason}")
            return False
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
        transceiver = pc.addTransceiver(MouthTrack(self.mouth), direction="sendrecv")
        self.jitter = ArrivalJitterBuffer()
        setattr(transceiver.receiver, JITTER_ATTR, self.jitter)

        @pc.on("connectionstatechange")
        def on_state() -> None:
            if pc.connectionState == "failed":
                self.tally.errors.append("a WebRTC connection failed")

        @pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            self._tasks.append(asyncio.get_running_loop().create_task(self._hear_rtc(track)))

        await pc.setLocalDescription(await pc.createOffer())
        self._answer = asyncio.get_running_loop().create_future()
        await self.ws.send(m.SdpOffer(pc.localDescription.sdp).to_json())
        sdp = await asyncio.wait_for(self._answer, 10)
        await pc.setRemoteDescription(RTCSessionDescription(sdp=sdp, type="answer"))

    async def converse(self, until: float) -> None:
        """Take turns until ``until`` (monotonic): pause, speak, wait for the reply to end."""
        await self.greeted()
        n = self.rng.randrange(len(self.clips))
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(2.0, 4.0))
            if time.monotonic() >= until:
                break
            if await self.take_turn(self.clips[n % len(self.clips)]) is None:
                return
            n += 1

    async def take_turn(self, clip: Clip) -> Turn | None:
        """Say ``clip`` and wait for the reply to end; the turn, or None if the audio stopped
        going out (a dropped connection)."""
        self._spoke = self._lost = False
        turn = Turn(0.0)
        self._turn = turn
        try:
            # Bounded: a dropped connection stops the frames, and the clip would never end.
            turn.end_of_speech = await asyncio.wait_for(
                self.mouth.say(clip), FRAME_S * len(clip.ws) + MOUTH_SLACK_S
            )
        except TimeoutError:
            self.tally.errors.append(f"a {self.transport} client's audio stopped going out")
            return None
        self.tally.turns.append(turn)
        if self.rtc:
            self.tally.rtc_turns.append(turn)
        await self._reply_finished(TURN_TIMEOUT_S)
        self._turn = None
        return turn

    async def greeted(self, timeout: float = 10) -> None:
        """Hear out the parrot's greeting, as a person would (at most ``timeout`` seconds)."""
        await self._reply_finished(timeout)

    async def _reply_finished(self, timeout: float) -> None:
        """Wait until the gateway spoke and then stayed quiet for :data:`REPLY_SETTLE_S` (a
        reply may pause between its parts), the turn was lost, or ``timeout`` passed."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._lost:
            state, since = self._state
            quiet = time.monotonic() - since >= REPLY_SETTLE_S
            if self._spoke and state is m.SessionState.LISTENING and quiet:
                return
            await asyncio.sleep(0.1)

    def _on_event(self, message: codec.Message, arrived: float) -> None:
        turn = self._turn
        match message:
            case m.FinalTranscript(typed=None, command=None):
                self.said.append((arrived, "transcript", message.text))
                if turn is not None and turn.transcript is None:
                    turn.transcript = arrived
                    turn.text = message.text
            case m.TurnTiming():
                if turn is not None and turn.stages is None and turn.end_of_speech:
                    turn.stages = message.to_dict()["stagesMs"]
                    turn.heard = arrived - message.since_last_voiced_ms / 1000
            case m.StateUpdate():
                if message.state is m.SessionState.SPEAKING:
                    if self._spoke and turn is not None:
                        turn.gaps += 1  # the reply went quiet mid-way and resumed
                    self._spoke = True
                self._state = (message.state, arrived)
            case m.PageNotice():
                self.said.append((arrived, "notice", message.text))
                self.tally.notices.append(message.text)
                if turn is not None and turn.transcript is None:
                    self._lost = True  # e.g. "please say that again": this turn is lost
            case m.AgentUtterance():
                self.said.append((arrived, "reply", message.text))
                self.replies += 1
            case m.SdpAnswer():
                if self._answer is not None and not self._answer.done():
                    self._answer.set_result(message.sdp)
            case m.RequestError():
                self.tally.errors.append(message.message)

    def _awaiting_audio(self) -> Turn | None:
        """The turn whose first reply audio is awaited, if any."""
        turn = self._turn
        if turn is not None and turn.transcript is not None and turn.first_audio is None:
            return turn
        return None

    async def _read_ws(self) -> None:
        assert self.ws is not None
        with contextlib.suppress(ConnectionClosed):
            async for message in self.ws:
                arrived = time.monotonic()
                if isinstance(message, bytes):
                    turn = self._awaiting_audio()
                    # The first frame with sound, as over WebRTC (a reply opens with ~15 ms of
                    # quiet, and silence is what a late frame would look like).
                    if turn is not None and _loud(np.frombuffer(message, "<i2")):
                        turn.first_audio = arrived
                else:
                    try:
                        event = codec.read_json(message, m.FROM_GATEWAY)
                    except codec.ProtocolError as exc:  # a newer gateway's message: not counted
                        self.tally.notices.append(f"unread message: {exc}")
                        continue
                    self._on_event(event, arrived)
        self.dropped, self.dropped_at = True, time.monotonic()

    async def _speak_ws(self) -> None:
        assert self.ws is not None
        # A random phase, so clients' frames do not all arrive in the same instant.
        await asyncio.sleep(self.rng.uniform(0, FRAME_S))
        start, n = time.monotonic(), 0
        with contextlib.suppress(ConnectionClosed):
            while True:
                await self.ws.send(self.mouth.next_pcm())
                n += 1
                await asyncio.sleep(max(0.0, start + n * FRAME_S - time.monotonic()))

    async def _hear_rtc(self, track: MediaStreamTrack) -> None:
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                if not isinstance(frame, av.AudioFrame):
                    continue  # an audio track gives audio frames; anything else is not ours
                turn = self._awaiting_audio()
                # Only look inside frames while a reply is awaited: the rest is just drained.
                if turn is not None and _loud(frame.to_ndarray()):
                    turn.first_audio = time.monotonic()
                    if self.jitter is not None and frame.pts is not None:
                        turn.first_packet = self.jitter.arrival(frame.pts)

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
