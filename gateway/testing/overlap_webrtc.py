"""Speech over an agent over WebRTC: :func:`gateway.testing.overlap.talk_over`'s trial with the
microphone and the agent's audio on RTP (Opus, aiortc) instead of PCM on the WebSocket.

The person is the load client's (:class:`gateway.testing.load_client.Client` with
``transport="webrtc"``): its offer and answer, its paced 48 kHz microphone track, its receiving
track. What this adds is the trial: the parrot's greeting heard out, the long text typed, the clip
said 1.5 s into the reply, and the gateway's ``playback``, ``flush`` and ``transcript`` messages
noted on the client's clock from the clip's speech onset (when its frame went out on the track).
The client's speaker is as the page's over WebRTC: what arrives plays, and a ``paused`` mutes it
(the audio element; what arrives meanwhile is lost) until ``resumed`` or a flush; with
``echo_db`` what it plays leaks back into the microphone, ``echo_lag_ms`` late.
:func:`say_in_parts_webrtc` is :func:`gateway.testing.overlap.say_in_parts` over WebRTC.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import av
import numpy as np
from aiortc import MediaStreamTrack
from aiortc.mediastreams import MediaStreamError

from gateway.audio import FRAME_SAMPLES, SAMPLE_RATE, resample
from gateway.server import message_codec as codec
from gateway.server import messages as m
from gateway.testing.load_client import RTC_FRAME, RTC_RATE, Client, Clip, Mouth, Tally
from gateway.testing.overlap import LONG_TEXT, ContinuationTrial, OverlapTrial, raw_text

#: What a trial notes of the gateway's messages (the rest only drives the client).
NOTED = (m.Playback, m.Flush, m.FinalTranscript, m.StateUpdate, m.AgentUtterance)


class Speaker:
    """The client's loudspeaker over WebRTC: received audio (48 kHz mono) played 20 ms a tick,
    muted while the gateway holds the reply, and what it played kept for the echo."""

    def __init__(self) -> None:
        self.buffer = np.zeros(0, np.int16)
        self.muted = False
        self.played: list[np.ndarray] = []
        #: Seconds of sound played after the onset, and of those while told to be quiet.
        self.audio_after_s = 0.0
        self.audio_while_quiet_s = 0.0
        self.quiet = False  # paused, or stopped and the person's turn not answered yet
        self.onset = False

    def arrived(self, pcm: np.ndarray) -> None:
        """A frame came off the receiving track (an element that is muted plays it silently)."""
        if not self.muted:
            self.buffer = np.concatenate([self.buffer, pcm.astype(np.int16)])[-RTC_RATE:]

    def flush(self) -> None:
        self.buffer = np.zeros(0, np.int16)

    def tick(self) -> np.ndarray:
        """This tick's 20 ms out of the speaker."""
        if self.muted or len(self.buffer) < RTC_FRAME:
            out = np.zeros(RTC_FRAME, np.int16)
        else:
            out, self.buffer = self.buffer[:RTC_FRAME], self.buffer[RTC_FRAME:]
        if self.onset and np.abs(out.astype(np.int32)).max() >= 500:
            self.audio_after_s += 0.02
            self.audio_while_quiet_s += 0.02 if self.quiet else 0.0
        self.played.append(out)
        del self.played[:-64]  # over a second: more than any lag
        return out


class EchoMouth(Mouth):
    """The microphone: the clip (the load client's :class:`Mouth`), plus the speaker's own
    sound ``gain`` down and ``lag`` frames late (the echo trials)."""

    def __init__(self, speaker: Speaker, gain: float, lag: int) -> None:
        super().__init__()
        self.speaker, self.gain, self.lag = speaker, gain, lag

    def next_rtc(self) -> np.ndarray:
        frame = super().next_rtc()
        self.speaker.tick()  # the speaker plays in step with the microphone
        if not self.gain or len(self.speaker.played) <= self.lag:
            return frame
        echo = self.gain * self.speaker.played[-1 - self.lag].astype(np.float64)
        mixed = frame.reshape(-1).astype(np.float64) + echo
        return np.clip(mixed, -32768, 32767).astype(np.int16).reshape(1, -1)


class OverlapClient(Client):
    """A WebRTC person that notes the overlap's messages and plays what it hears."""

    def __init__(self, url: str, speaker: Speaker, mouth: EchoMouth) -> None:
        super().__init__(url, [], Tally(), transport="webrtc", seed=0)
        self.mouth = mouth
        self.speaker = speaker
        #: ``(arrival, message as on the wire)`` of the messages in :data:`NOTED`.
        self.noted: list[tuple[float, dict[str, Any]]] = []

    def _on_event(self, message: codec.Message, arrived: float) -> None:
        if isinstance(message, NOTED):
            wire = message.to_dict()
            self.noted.append((arrived, wire))
            if wire["type"] == "playback":
                self.speaker.muted = wire["outcome"] == "paused"
                self.speaker.quiet = self.speaker.muted
            elif wire["type"] == "flush":
                self.speaker.muted = False
                self.speaker.quiet = True  # until the person's own turn is answered
                self.speaker.flush()
            elif wire["type"] == "transcript" and not wire.get("typed"):
                self.speaker.quiet = False
        super()._on_event(message, arrived)

    async def _hear_rtc(self, track: MediaStreamTrack) -> None:
        with contextlib.suppress(MediaStreamError):
            while True:
                frame = await track.recv()
                if not isinstance(frame, av.AudioFrame):
                    continue
                pcm = frame.to_ndarray()
                channels = len(frame.layout.channels)
                mono = pcm[0] if frame.format.is_planar else pcm.reshape(-1)[::channels]
                if frame.sample_rate != RTC_RATE:
                    mono = resample(mono.astype(np.int16), frame.sample_rate, RTC_RATE)
                self.speaker.arrived(mono)

    async def wait_noted(self, kind: str, state: str | None, since: float, timeout: float) -> float:
        """When a noted message of ``kind`` (a ``state`` of ``state``) arrived after ``since``."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for at, wire in self.noted:
                if at > since and wire["type"] == kind and state in (None, wire.get("state")):
                    return at
            await asyncio.sleep(0.05)
        raise AssertionError(f"no {kind} {state or ''} in {timeout} s: {self.noted[-5:]}")


def _rtc_clip(mic: np.ndarray, onset: int) -> Clip:
    """The trial's microphone (16 kHz) as the load client's clip; its "last voiced" frame is the
    onset's, so saying it tells when the onset went out."""
    hi = resample(mic, SAMPLE_RATE, RTC_RATE)
    hi = np.concatenate([hi, np.zeros(-len(hi) % RTC_FRAME, np.int16)])
    frames = tuple(
        np.ascontiguousarray(hi[i : i + RTC_FRAME].reshape(1, -1))
        for i in range(0, len(hi), RTC_FRAME)
    )
    return Clip(ws=(), rtc=frames, last_voiced=min(onset, len(frames) - 1))


async def talk_over_webrtc(
    url: str,
    clip: np.ndarray,
    *,
    at_s: float = 1.5,
    after_s: float = 3.0,
    echo_db: float | None = None,
    echo_lag_ms: int = 150,
    reply: str = LONG_TEXT,
) -> OverlapTrial:
    """One trial against the gateway at ``url`` (its ``/ws``) over WebRTC, the parrot saying
    ``reply``; see the module."""
    speaker = Speaker()
    gain = 0.0 if echo_db is None else 10 ** (echo_db / 20)
    mouth = EchoMouth(speaker, gain, echo_lag_ms // 20)
    client = OverlapClient(url, speaker, mouth)
    if not await client.open():
        raise AssertionError(f"the gateway refused the session: {client.tally.refused}")
    assert client.welcome is not None and client.ws is not None and client.pc is not None
    trial = OverlapTrial(conversation=client.welcome.conversation_id)
    try:
        await client.greeted(60)
        typed = time.monotonic()
        await client.ws.send(raw_text(reply).to_json())
        await client.wait_noted("state", "speaking", typed, 60)
        lead = np.zeros(int(at_s * 50) * FRAME_SAMPLES, np.int16)
        tail = np.zeros(int(after_s * 50) * FRAME_SAMPLES, np.int16)
        voiced = np.flatnonzero(np.abs(clip) > 500)
        onset_frame = (len(lead) + (int(voiced[0]) if len(voiced) else 0)) // FRAME_SAMPLES
        mic = np.concatenate([lead, clip.astype(np.int16), tail])
        frames = len(mic) // FRAME_SAMPLES
        started = time.monotonic()
        onset_wall = await asyncio.wait_for(
            mouth.say(_rtc_clip(mic, onset_frame)), frames * 0.02 + 10
        )
        speaker.onset = True
        await asyncio.sleep(max(0.0, started + frames * 0.02 - time.monotonic()) + 1.5)
        if client.pc.connectionState != "connected":
            raise AssertionError(f"WebRTC {client.pc.connectionState}: {client.tally.errors}")
    finally:
        await client.close()
    for at, wire in client.noted:
        if at <= started:
            continue
        now = at - onset_wall
        if wire["type"] == "playback":
            trial.playback.append((now, wire))
        elif wire["type"] == "flush" and trial.flushed_at is None:
            trial.flushed_at = now
        elif wire["type"] == "transcript" and not wire.get("typed"):
            trial.transcripts.append(wire["text"])
    trial.audio_after_s = speaker.audio_after_s
    trial.audio_while_quiet_s = speaker.audio_while_quiet_s
    return trial


async def say_in_parts_webrtc(
    url: str, first: np.ndarray, second: np.ndarray, *, gap_ms: int = 500, after_s: float = 6.0
) -> ContinuationTrial:
    """Say ``first``, ``gap_ms`` of silence, then ``second`` over WebRTC into the gateway at
    ``url`` (its ``/ws``) in real time, and collect what came back (the parrot answers)."""
    speaker = Speaker()
    mouth = EchoMouth(speaker, 0.0, 0)
    client = OverlapClient(url, speaker, mouth)
    if not await client.open():
        raise AssertionError(f"the gateway refused the session: {client.tally.refused}")
    assert client.pc is not None
    trial = ContinuationTrial()
    try:
        await client.greeted(60)
        started = time.monotonic()
        silence = np.zeros(SAMPLE_RATE * 2 // 5, np.int16)
        gap = np.zeros(SAMPLE_RATE * gap_ms // 1000, np.int16)
        mic = np.concatenate([silence, first, gap, second, np.zeros(SAMPLE_RATE // 50, np.int16)])
        frames = len(mic) // FRAME_SAMPLES
        await asyncio.wait_for(mouth.say(_rtc_clip(mic, frames - 1)), frames * 0.02 + 10)
        await asyncio.sleep(after_s)
        if client.pc.connectionState != "connected":
            raise AssertionError(f"WebRTC {client.pc.connectionState}: {client.tally.errors}")
    finally:
        await client.close()
    first_said = False
    for at, wire in client.noted:
        if at <= started:
            continue
        if wire["type"] == "transcript" and not wire.get("typed"):
            trial.transcripts.append(wire)
            first_said = True
            trial.answered = []
        elif wire["type"] == "utterance" and first_said:
            trial.answers.append(wire["text"])
            trial.answered.append(wire["text"])
        elif wire["type"] == "flush":
            trial.flushes += 1
    return trial
