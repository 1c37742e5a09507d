"""WebRTC audio for one client (gateway/server/webrtc.py): a real aiortc peer connection on this
machine against :class:`WebRTCLink`, both ways over Opus; the inbound backlog bound; the ICE
server configuration."""

from __future__ import annotations

import asyncio
import fractions
import time
from collections.abc import AsyncIterator

import av
import numpy as np
import pytest
from aiortc import MediaStreamTrack, RTCConfiguration, RTCPeerConnection, RTCSessionDescription
from aiortc.mediastreams import MediaStreamError

from gateway.audio import SAMPLE_RATE
from gateway.audio.playout import KEEP_ALIVE, Playout
from gateway.server.webrtc import (
    MAX_INBOUND_BACKLOG,
    WEBRTC_RATE,
    WebRTCLink,
    ice_server,
    rtc_configuration,
)

FRAME = WEBRTC_RATE // 50  # 20 ms


def tone(hz: float, samples: int, start: int = 0, rate: int = WEBRTC_RATE) -> np.ndarray:
    t = (start + np.arange(samples)) / rate
    return (12000 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def dominant_hz(pcm: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64) * np.hanning(len(pcm))))
    return float(np.argmax(spectrum) * rate / len(pcm))


class Microphone(MediaStreamTrack):
    """The page's microphone: a 440 Hz tone in 20 ms frames, paced in real time."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self._sent = 0
        self._start: float | None = None

    async def recv(self) -> av.AudioFrame:
        self._start = self._start or time.monotonic()
        due = self._start + self._sent / WEBRTC_RATE
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        frame = av.AudioFrame.from_ndarray(
            tone(440.0, FRAME, self._sent).reshape(1, -1), format="s16", layout="mono"
        )
        frame.sample_rate = WEBRTC_RATE
        frame.pts = self._sent
        frame.time_base = fractions.Fraction(1, WEBRTC_RATE)
        self._sent += FRAME
        return frame


class Page:
    """The client end: sends the microphone, keeps every frame it hears (as mono int16)."""

    def __init__(self) -> None:
        # No ICE servers: both ends on this machine, nothing contacted outside it.
        self.pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
        self.pc.addTrack(Microphone())
        self.heard: list[np.ndarray] = []
        self.pts: list[int] = []  # each heard frame's timestamp (from its RTP timestamp)
        self.rate = 0
        self._tasks: list[asyncio.Task[None]] = []

        @self.pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            self._tasks.append(asyncio.get_running_loop().create_task(self._hear(track)))

    async def _hear(self, track: MediaStreamTrack) -> None:
        while True:
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            self.rate = frame.sample_rate
            self.pts.append(frame.pts)
            pcm = frame.to_ndarray().reshape(-1, len(frame.layout.channels))
            self.heard.append(pcm.mean(axis=1).astype(np.int16))

    async def connect(self, link: WebRTCLink) -> None:
        """One offer, complete with its candidates, and the link's answer (no trickle ICE)."""
        await self.pc.setLocalDescription(await self.pc.createOffer())
        answer = await link.answer(self.pc.localDescription.sdp)
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await self.pc.close()


async def until(condition, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not reached in time"
        await asyncio.sleep(0.05)


@pytest.fixture
async def call() -> AsyncIterator[tuple[WebRTCLink, Page, Playout, list[np.ndarray]]]:
    playout = Playout(WEBRTC_RATE, fill_silence=True)
    fed: list[np.ndarray] = []
    link = WebRTCLink(playout, fed.append)
    page = Page()
    try:
        await page.connect(link)
        yield link, page, playout, fed
    finally:
        await page.close()
        await link.close()
        playout.close()


async def test_the_microphone_arrives_at_16_khz_with_its_pitch(call) -> None:
    link, _, _, fed = call
    await until(lambda: sum(len(c) for c in fed) >= SAMPLE_RATE)  # one second of it
    assert link.pc.connectionState == "connected"
    heard = np.concatenate(fed)
    assert heard.dtype == np.int16
    # Opus and the resampler in between: the tone is still a 440 Hz tone, and loud.
    steady = heard[len(heard) // 2 :]
    assert abs(dominant_hz(steady, SAMPLE_RATE) - 440.0) < 10.0
    assert np.sqrt(np.mean(steady.astype(np.float64) ** 2)) > 3000


async def test_between_replies_the_track_sends_keep_alives_not_a_frame_every_20_ms(call) -> None:
    _, page, playout, _ = call
    tail, every = KEEP_ALIVE.tail, KEEP_ALIVE.every
    await until(lambda: len(page.heard) >= tail + 3)  # the tail, then keep-alives
    assert page.rate == WEBRTC_RATE
    assert max(int(np.max(np.abs(f))) for f in page.heard) < 300  # silence
    # The frames' timestamps keep to the wall clock: the skipped slots are a gap in them (a
    # receiver plays by them), not frames encoded and sent.
    # The first keep-alive too: stamped by aiortc from FFmpeg's encoder it carried the place
    # before the gap (~380 ms early), since the encoder holds 6.5 ms of the frame before it.
    steps = np.diff(page.pts[: tail + 3])
    assert list(steps[: tail - 1]) == [FRAME] * (tail - 1)
    assert all(step >= every * FRAME for step in steps[tail - 1 :]), steps
    before = len(page.heard)
    await playout.put(tone(1000.0, WEBRTC_RATE // 2))
    await playout.finish()
    await until(lambda: sum(int(np.max(np.abs(f))) > 3000 for f in page.heard[before:]) >= 15)
    loud = np.concatenate([f for f in page.heard[before:] if np.max(np.abs(f)) > 3000])
    assert abs(dominant_hz(loud, WEBRTC_RATE) - 1000.0) < 20.0
    # The reply's packets are stamped one after another from its first: that one too (from
    # FFmpeg's stamps it carried the last keep-alive's place, and the second jumped the gap).
    loud_pts = [
        p
        for f, p in zip(page.heard[before:], page.pts[before:], strict=True)
        if np.max(np.abs(f)) > 3000
    ]
    assert list(np.diff(loud_pts)) == [FRAME] * (len(loud_pts) - 1)


async def test_close_hangs_up() -> None:
    playout = Playout(WEBRTC_RATE, fill_silence=True)
    link = WebRTCLink(playout, lambda pcm: None)
    page = Page()
    try:
        await page.connect(link)
        await until(lambda: link.pc.connectionState == "connected")
        await link.close()
        assert link.pc.connectionState == "closed"
        await until(lambda: page.pc.connectionState in ("closed", "failed", "disconnected"), 40)
    finally:
        await page.close()
        playout.close()


class Backlogged(MediaStreamTrack):
    """A received track whose decoded frames piled up in aiortc's queue (a session behind)."""

    kind = "audio"

    def __init__(self, frames: int) -> None:
        super().__init__()
        self._queue: asyncio.Queue[av.AudioFrame] = asyncio.Queue()
        for i in range(frames):
            frame = av.AudioFrame.from_ndarray(
                tone(440.0, FRAME, i * FRAME).reshape(1, -1), format="s16", layout="mono"
            )
            frame.sample_rate = WEBRTC_RATE
            self._queue.put_nowait(frame)

    async def recv(self) -> av.AudioFrame:
        if self._queue.empty():
            raise MediaStreamError
        return self._queue.get_nowait()


async def test_a_backlog_of_inbound_frames_is_cut_to_half_a_second_oldest_first() -> None:
    playout = Playout(WEBRTC_RATE, fill_silence=True)
    fed: list[np.ndarray] = []
    link = WebRTCLink(playout, fed.append)
    try:
        link.pc.emit("track", Backlogged(MAX_INBOUND_BACKLOG + 15))
        await until(lambda: link._reader is not None and link._reader.done(), 10)
        assert link.dropped == 15
        # What was kept is what a session would hear: the newest 0.5 s, resampled to 16 kHz.
        got = sum(len(c) for c in fed)
        assert abs(got - MAX_INBOUND_BACKLOG * SAMPLE_RATE // 50) <= SAMPLE_RATE // 50
    finally:
        await link.close()
        playout.close()


def test_no_ice_servers_means_none_not_aiortcs_public_default() -> None:
    # None would let aiortc pick a public STUN server; an empty list contacts nobody.
    assert rtc_configuration().iceServers == []
    servers = rtc_configuration(("stun:127.0.0.1:3478", "turn:u:p@turn.example:3478")).iceServers
    assert [s.urls for s in servers] == ["stun:127.0.0.1:3478", "turn:turn.example:3478"]


@pytest.mark.parametrize(
    ("url", "urls", "username", "credential"),
    [
        ("stun:stun.example:3478", "stun:stun.example:3478", None, None),
        ("turn:alice:s3cret@turn.example:3478", "turn:turn.example:3478", "alice", "s3cret"),
        (
            "turns:bob:p@ss:w@turn.example?transport=tcp",
            "turns:turn.example?transport=tcp",
            "bob",
            "p@ss:w",
        ),
    ],
)
def test_ice_server_takes_credentials_inline(url, urls, username, credential) -> None:
    server = ice_server(url)
    assert (server.urls, server.username, server.credential) == (urls, username, credential)


@pytest.mark.parametrize("url", ["stun.example:3478", "http://stun.example", "turn:", "stun"])
def test_ice_server_refuses_what_is_not_one(url: str) -> None:
    with pytest.raises(ValueError, match="is not an ICE server"):
        ice_server(url)
