"""The WebRTC audio path: inbound audio reaches the voice pipeline without being held back, and a
spoken turn over a real aiortc peer connection reports where its time went."""

from __future__ import annotations

import asyncio
import fractions

import av
import numpy as np
import pytest
from aiortc import MediaStreamTrack, RTCPeerConnection, RTCSessionDescription
from aiortc.rtp import RtpPacket

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.audio.playout import Playout
from gateway.proxy.models import VoiceModels
from gateway.proxy.timing import Timing
from gateway.server import messages as m
from gateway.server.app import Gateway, GatewaySettings
from gateway.server.webrtc import (
    JITTER_ATTR,
    WEBRTC_RATE,
    PlayoutTrack,
    PromptJitterBuffer,
    WebRTCLink,
)
from gateway.testing.load_client import Client, Tally, load_clips
from gateway.testing.processes import free_port
from tests.audio.helpers import virtual_playout_clock
from tests.server.helpers import admitting

FRAME = WEBRTC_RATE // 50  # 20 ms


def packet(seq: int, payload: bytes = b"x") -> RtpPacket:
    p = RtpPacket(payload_type=111, sequence_number=seq, timestamp=seq * FRAME)
    p._data = payload  # type: ignore[attr-defined]  (what aiortc's depayloader sets)
    return p


def test_each_packet_is_handed_on_as_it_arrives() -> None:
    buffer = PromptJitterBuffer()
    for seq in (100, 101, 103):  # 102 is lost: 103 does not wait for it
        _, frame = buffer.add(packet(seq, bytes([seq % 256])))
        assert frame is not None
        assert frame.timestamp == seq * FRAME and frame.data == bytes([seq % 256])


def test_a_packet_overtaken_by_a_newer_one_is_dropped() -> None:
    buffer = PromptJitterBuffer()
    assert buffer.add(packet(10))[1] is not None
    assert buffer.add(packet(12))[1] is not None
    assert buffer.add(packet(11))[1] is None  # its moment has passed
    assert buffer.add(packet(12))[1] is None  # a duplicate too
    assert buffer.late == 2
    assert buffer.add(packet(13))[1] is not None


def test_sequence_numbers_wrap() -> None:
    buffer = PromptJitterBuffer()
    for seq in (65534, 65535, 0, 1):
        assert buffer.add(packet(seq))[1] is not None
    assert buffer.add(packet(65535))[1] is None and buffer.late == 1


class Taps(MediaStreamTrack):
    """A microphone that sends exactly the frames put into it, then nothing."""

    kind = "audio"

    def __init__(self) -> None:
        super().__init__()
        self.frames: asyncio.Queue[np.ndarray] = asyncio.Queue()
        self._pts = 0

    async def recv(self) -> av.AudioFrame:
        pcm = await self.frames.get()
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = WEBRTC_RATE
        frame.pts, frame.time_base = self._pts, fractions.Fraction(1, WEBRTC_RATE)
        self._pts += pcm.size
        return frame


async def test_inbound_audio_is_not_held_for_later_packets() -> None:
    """aiortc's own buffer hands a packet on only once four newer ones arrived: a loud frame
    followed by two quiet ones would stay inside it for good. The gateway's must deliver it."""
    heard: list[np.ndarray] = []
    link = WebRTCLink(Playout(WEBRTC_RATE, fill_silence=True), heard.append)
    client = RTCPeerConnection()
    taps = Taps()
    client.addTransceiver(taps, direction="sendrecv")
    try:
        await client.setLocalDescription(await client.createOffer())
        answer = await link.answer(client.localDescription.sdp)
        await client.setRemoteDescription(RTCSessionDescription(sdp=answer, type="answer"))
        (transceiver,) = link.pc.getTransceivers()
        assert isinstance(getattr(transceiver.receiver, JITTER_ATTR), PromptJitterBuffer)

        quiet = np.zeros(FRAME, np.int16)
        tone = (8000 * np.sin(np.arange(FRAME) * 2 * np.pi * 440 / WEBRTC_RATE)).astype(np.int16)
        for pcm in (*[quiet] * 5, tone, quiet, quiet):  # the encoder may keep one frame back
            taps.frames.put_nowait(pcm)

        async def loud() -> None:
            while not heard or np.abs(np.concatenate(heard)).max() < 2000:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(loud(), 30)  # a bound for failure, not a speed target
    finally:
        await client.close()
        await link.close()


async def test_after_a_stall_the_outbound_timestamps_skip_the_time_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A receiver plays by the timestamps: contiguous ones after a stall would arrive late for
    the rest of the call, and a browser's jitter buffer would grow to hold that. On the
    playout's virtual clock: on the real one a busy machine stalled the first frames too."""
    clock = virtual_playout_clock(monkeypatch)
    playout = Playout(WEBRTC_RATE, fill_silence=True, max_lag_ms=200)
    track = PlayoutTrack(playout)
    assert [(await track.recv()).pts for _ in range(3)] == [0, FRAME, 2 * FRAME]
    clock.advance(0.4)  # the event loop is blocked: beyond max_lag, the schedule starts anew
    after = await track.recv()
    assert playout.skipped_samples >= 10 * FRAME  # at least the 200 ms beyond which it skips
    assert after.pts == 3 * FRAME + playout.skipped_samples
    assert (await track.recv()).pts == after.pts + FRAME  # then contiguous again


def test_the_timing_message_carries_every_stage_the_session_measures() -> None:
    timing = Timing(last_voiced=1.0, endpoint=1.2, transcript=1.25, sent=1.26, reply=1.27)
    timing.first_audio = 1.4
    sent = m.TurnTiming(
        m.TurnStages(endpoint=200.0, stt=50.0, agent=10.0, tts_first_audio=130.0, total=400.0), 1.0
    ).to_dict()
    assert set(sent["stagesMs"]) == set(timing.as_ms())


@pytest.mark.slow
async def test_a_spoken_turn_over_webrtc_reports_where_its_time_went() -> None:
    """Real models and a real peer connection: the client hears the reply and can split the
    turn into in (client → gateway), the gateway's stages and out (gateway → client)."""
    settings = GatewaySettings(port=free_port(), agents=("builtin:parrot",))
    gateway = Gateway(settings, models=VoiceModels(), directory=AgentDirectory(AddressPolicy()))
    await gateway.start()
    tally = Tally()
    clips = load_clips()
    client = Client(f"ws://127.0.0.1:{settings.port}/ws", clips, tally, transport="webrtc", seed=0)
    try:
        await admitting(gateway)
        assert await client.open(), tally.refused
        await client.greeted(30)
        turn = await client.take_turn(clips[6])  # "Open the garage door."
        assert turn is not None and tally.errors == []
        assert "garage" in turn.text.lower()
        assert turn.first_audio is not None and turn.first_packet is not None
        assert turn.first_packet <= turn.first_audio  # arrived, then decoded
        assert turn.stages is not None and turn.stages["total"] > 0  # the timing message
        stages = turn.breakdown()
        assert stages is not None
        assert set(stages) >= {"in", "endpoint", "stt", "floor", "tts", "out", "network", "decode"}
        assert stages["total"] == round(1000 * (turn.first_audio - turn.end_of_speech), 1)
    finally:
        await client.close()
        await gateway.close()
