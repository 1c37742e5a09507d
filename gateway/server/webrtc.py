"""WebRTC audio for one client (aiortc): the microphone in, the agents' voices out.

Signalling is one offer/answer over the client WebSocket (no trickle ICE: the client sends its
offer once gathering is complete, and aiortc answers with all its candidates).
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import logging
from collections.abc import Callable
from typing import Any

import av
import numpy as np
from aiortc import (
    MediaStreamTrack,
    RTCConfiguration,
    RTCIceServer,
    RTCPeerConnection,
    RTCRtpSender,
    RTCSessionDescription,
)
from aiortc.codecs.opus import OpusEncoder
from aiortc.jitterbuffer import JitterBuffer, JitterFrame
from aiortc.mediastreams import MediaStreamError
from aiortc.rtp import RtpPacket
from aiortc.utils import uint16_add, uint16_gt

from gateway.audio import Resampler
from gateway.audio.playout import Playout, PlayoutClosed

log = logging.getLogger(__name__)

#: Opus in WebRTC runs at 48 kHz.
WEBRTC_RATE = 48_000
#: Inbound frames allowed to wait in aiortc's (unbounded) receive queue before the oldest go.
MAX_INBOUND_BACKLOG = 25  # 25 × 20 ms = 0.5 s


class PromptJitterBuffer(JitterBuffer):
    """An audio jitter buffer that holds nothing: each Opus packet newer than the last one
    handed on goes to the decoder at once; a packet older than that (reordered past its turn)
    is dropped.

    aiortc's own audio buffer (``JitterBuffer(capacity=16, prefetch=4)``) hands a packet on
    only once four more have arrived, so every inbound frame waited 80 ms before the voice
    pipeline saw it (measured: 80.0 ms on each of 3237 frames), which is 80 ms on every turn's
    end of speech. The gateway does not play this audio, it listens to it: a frame lost to
    reordering costs the recogniser 20 ms of a word, a held frame costs every turn. Opus packs
    one frame per packet (RFC 7587), so a packet is a whole frame.
    """

    def __init__(self) -> None:
        super().__init__(capacity=16)
        self._next: int | None = None
        #: Packets dropped for arriving after a newer one had been handed on.
        self.late = 0

    def add(self, packet: RtpPacket) -> tuple[bool, JitterFrame | None]:
        """Hand ``packet`` on now, unless a newer one already went (no picture loss: audio)."""
        seq = packet.sequence_number
        if self._next is not None and uint16_gt(self._next, seq):
            self.late += 1
            return False, None
        self._next = uint16_add(seq, 1)
        # The depayloaded frame: aiortc's receiver sets _data on each packet without declaring
        # it (its own JitterBuffer reads it the same way, under the same ignore).
        return False, JitterFrame(data=packet._data, timestamp=packet.timestamp)  # type: ignore[attr-defined]


def listen_promptly(pc: RTCPeerConnection) -> int:
    """Give every audio receiver of ``pc`` a :class:`PromptJitterBuffer` (call after the remote
    description is set, before media flows); returns how many were replaced.

    aiortc has no option for this: the buffer is the receiver's private attribute, so a later
    aiortc that renames it leaves the default in place (logged, and a test fails).
    """
    replaced = 0
    for transceiver in pc.getTransceivers():
        receiver = transceiver.receiver
        if transceiver.kind != "audio" or receiver is None:
            continue
        if isinstance(getattr(receiver, JITTER_ATTR, None), JitterBuffer):
            setattr(receiver, JITTER_ATTR, PromptJitterBuffer())
            replaced += 1
        else:
            log.warning("aiortc's receiver has no %s: inbound audio keeps its 80 ms", JITTER_ATTR)
    return replaced


#: Where aiortc's RTCRtpReceiver keeps its jitter buffer (a name-mangled private attribute).
JITTER_ATTR = "_RTCRtpReceiver__jitter_buffer"


class PlayoutTrack(MediaStreamTrack):
    """The outbound track: one 20 ms frame per :meth:`recv`, paced by the :class:`Playout`.
    While no agent speaks it gives a short tail of silence, then a silent frame every 400 ms
    (:class:`~gateway.audio.playout.IdleSilence`): the stream never stalls, and aiortc does not
    encode, encrypt and send 50 silent frames a second.

    Frames are stamped with their place in real time: when the playout skipped time after a
    stall (a busy loop), the timestamps skip it too. Left contiguous, every later packet arrived
    late against its timestamp, and a browser's jitter buffer grew to hold that lateness for
    the rest of the call (measured under load: packets up to ~1 s late against their
    timestamps after a minute, and Chromium buffering ~350–390 ms).

    With ``encode`` (the default) the track hands aiortc Opus packets it encoded itself (with
    aiortc's own encoder, off the event loop as aiortc does), each stamped with its frame's
    place. Given frames, aiortc stamps each packet with what FFmpeg's Opus encoder says, and
    that lags a gap in the frames by one packet: the encoder holds 6.5 ms of the frame before
    the gap, so the first packet after every idle stretch carried the old place (measured: the
    keep-alives and each reply's first packet ~380 ms late against their timestamps). The
    peer connection must then send Opus (:meth:`WebRTCLink.answer` asks for only that).
    """

    kind = "audio"

    def __init__(self, playout: Playout, *, encode: bool = True) -> None:
        super().__init__()
        self._playout = playout
        self._pts = 0
        self._skipped = playout.skipped_samples
        self._time_base = fractions.Fraction(1, playout.rate)
        self._encoder = OpusEncoder() if encode else None
        if encode and playout.rate != WEBRTC_RATE:
            raise ValueError(f"an Opus track plays at {WEBRTC_RATE} Hz, not {playout.rate}")

    async def recv(self) -> av.AudioFrame | av.Packet[Any]:
        while True:
            frame = await self._next_frame()
            if self._encoder is None:
                return frame
            loop = asyncio.get_running_loop()
            payloads, _ = await loop.run_in_executor(None, self._encoder.encode, frame)
            if payloads:  # a 20 ms frame in, one packet out (none while the encoder primes)
                packet = av.Packet(payloads[0])
                packet.pts = frame.pts
                packet.time_base = self._time_base
                return packet

    async def _next_frame(self) -> av.AudioFrame:
        try:
            pcm = await self._playout.recv()
        except PlayoutClosed:
            self.stop()
            raise MediaStreamError from None
        # A gap in the timestamps (a stall, or idle slots left empty): the receiver conceals
        # it and stays on time.
        self._pts += self._playout.skipped_samples - self._skipped
        self._skipped = self._playout.skipped_samples
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = self._playout.rate
        frame.pts = self._pts
        frame.time_base = self._time_base
        self._pts += len(pcm)
        return frame


def opus_only(pc: RTCPeerConnection) -> None:
    """Answer every audio m-line with Opus alone: :class:`PlayoutTrack` sends Opus packets
    (every WebRTC endpoint has Opus: RFC 7874)."""
    opus = [
        codec
        for codec in RTCRtpSender.getCapabilities("audio").codecs
        if codec.mimeType.lower() == "audio/opus"
    ]
    for transceiver in pc.getTransceivers():
        if transceiver.kind == "audio":
            transceiver.setCodecPreferences(opus)


def rtc_configuration(ice_servers: tuple[str, ...] = ()) -> RTCConfiguration:
    """The peer connections' configuration: exactly the ICE servers given (``serve
    --ice-server``). With none, aiortc would fall back to a public STUN server of its own
    choosing (``RTCPeerConnection()`` with no configuration does): an empty list keeps the media
    path to the page's own candidates, so the gateway contacts no third party."""
    return RTCConfiguration(iceServers=[ice_server(url) for url in ice_servers])


def ice_server(url: str) -> RTCIceServer:
    """One ``--ice-server``: ``stun:HOST[:PORT]`` or ``turn[s]:[USER:PASSWORD@]HOST[:PORT]
    [?transport=udp|tcp]`` (credentials inline, since aiortc takes one TURN server)."""
    scheme, sep, rest = url.partition(":")
    if not sep or scheme not in ("stun", "stuns", "turn", "turns") or not rest:
        raise ValueError(
            f"{url!r} is not an ICE server: use stun:HOST:PORT or turn:USER:PASSWORD@HOST:PORT"
        )
    if "@" not in rest:
        return RTCIceServer(urls=url)
    credentials, _, host = rest.rpartition("@")
    user, _, password = credentials.partition(":")
    return RTCIceServer(urls=f"{scheme}:{host}", username=user, credential=password)


class WebRTCLink:
    """One peer connection carrying a session's audio both ways."""

    def __init__(
        self,
        playout: Playout,
        feed: Callable[[np.ndarray], None],
        *,
        ice_servers: tuple[str, ...] = (),
    ) -> None:
        self.pc = RTCPeerConnection(rtc_configuration(ice_servers))
        self._feed = feed
        self._reader: asyncio.Task[None] | None = None
        self.pc.addTrack(PlayoutTrack(playout))
        self.dropped = 0

        @self.pc.on("track")
        def on_track(track: MediaStreamTrack) -> None:
            if track.kind == "audio" and self._reader is None:
                self._reader = asyncio.get_running_loop().create_task(self._read(track))

        @self.pc.on("connectionstatechange")
        async def on_state() -> None:
            log.info("webrtc connection %s", self.pc.connectionState)

    async def answer(self, offer_sdp: str) -> str:
        """Take the client's offer; return the answer SDP."""
        await self.pc.setRemoteDescription(RTCSessionDescription(sdp=offer_sdp, type="offer"))
        listen_promptly(self.pc)
        opus_only(self.pc)
        await self.pc.setLocalDescription(await self.pc.createAnswer())
        return self.pc.localDescription.sdp

    async def _read(self, track: MediaStreamTrack) -> None:
        resampler: Resampler | None = None
        queue = getattr(track, "_queue", None)
        while True:
            # aiortc queues decoded frames without bound; a session that falls behind would
            # grow it forever, so the oldest frames are dropped (late speech is useless anyway).
            if isinstance(queue, asyncio.Queue):
                while queue.qsize() > MAX_INBOUND_BACKLOG:
                    queue.get_nowait()
                    self.dropped += 1
            try:
                frame = await track.recv()
            except MediaStreamError:
                return
            if not isinstance(frame, av.AudioFrame):
                continue  # an audio track gives audio frames; anything else is not ours
            channels = len(frame.layout.channels)
            if resampler is None or resampler.in_rate != frame.sample_rate:
                resampler = Resampler(frame.sample_rate, in_channels=channels)
            pcm = frame.to_ndarray().reshape(-1)
            if frame.format.name != "s16":
                pcm = (np.clip(pcm, -1, 1) * 32767).astype(np.int16)
            self._feed(resampler.process(pcm))

    async def close(self) -> None:
        """Hang up."""
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        await self.pc.close()
