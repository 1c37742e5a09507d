"""Text to speech over Wyoming: :class:`RemoteSynthesizer`, the session's synthesizer when
``--tts wyoming://host:port`` is given.

One reply is one connection: ``synthesize`` (the text, and this project's ``ofp`` voice fields),
answered by ``audio-start``, ``audio-chunk``s as the server finishes each sentence, and
``audio-stop``. The chunks are resampled to the listener's rate as they come, so the first
sentence plays while the server makes the next. Closing the stream early (a barge-in) closes
the connection; this project's server then drops the sentences not yet made.

What a stock ``wyoming-piper`` does not do: the agents' own voices. It speaks with its one
``--voice`` and knows nothing of this project's per-agent speed, pitch and noise
(:class:`~gateway.render.tts.VoiceSettings`); only the loudness is applied here, so a stock
voice is as loud as an in-process one. ``ofp-gateway speech serve`` applies all of them.

A reply whose connection breaks (cut, the server killed or hung, garbage on the wire) keeps its
text: once the link's probe finds the service answering again (within
:attr:`~gateway.speech.link.LinkSettings.retry_s`) it is asked once more on a new connection, and
the audio already played is skipped (by its length: Piper's timing varies a little between two
runs, so a syllable may repeat or drop at the seam).
"""

from __future__ import annotations

import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

import numpy as np
from wyoming.tts import Synthesize

from gateway.audio import Resampler
from gateway.render.tts import (
    HEADROOM,
    SynthesisError,
    SynthesizerBusy,
    VoiceSettings,
    text_to_speak,
)
from gateway.speech.link import (
    NOT_WYOMING,
    ServiceBusy,
    ServiceLink,
    SpeechServiceDown,
    not_wyoming,
    read_until,
)


def voice_extras(settings: VoiceSettings) -> dict[str, Any]:
    """The ``ofp`` fields of a ``synthesize`` event: how this project's server shapes the voice
    (the voice file itself is the server's)."""
    return {
        "speaker_id": settings.speaker_id,
        "length_scale": settings.length_scale,
        "noise_scale": settings.noise_scale,
        "noise_w_scale": settings.noise_w_scale,
        "pitch_semitones": settings.pitch_semitones,
        "volume": settings.volume,
    }


def voice_from_extras(extra: dict[str, Any]) -> VoiceSettings:
    """:class:`VoiceSettings` (the server's own voice file) from a request's ``ofp`` fields;
    values that are not numbers are left at their defaults."""

    def number(key: str, default: float | None) -> float | None:
        value = extra.get(key, default)
        return float(value) if isinstance(value, int | float) else default

    speaker = extra.get("speaker_id")
    return VoiceSettings(
        speaker_id=speaker if isinstance(speaker, int) else None,
        length_scale=number("length_scale", 1.0) or 1.0,
        noise_scale=number("noise_scale", None),
        noise_w_scale=number("noise_w_scale", None),
        pitch_semitones=number("pitch_semitones", 0.0) or 0.0,
        volume=number("volume", 1.0) or 1.0,
    )


class RemoteSynthesizer:
    """Speech synthesis by a Wyoming server, behind the in-process
    :class:`~gateway.render.tts.Synthesizer`'s interface (see the module docstring).

    Raises :class:`~gateway.render.tts.SynthesizerBusy` when every connection is in use and
    enough requests wait; :class:`~gateway.speech.link.SpeechServiceDown` when the server cannot
    be reached, ends the stream before ``audio-stop``, or times out.
    """

    def __init__(self, link: ServiceLink, *, max_chars: int = 5000) -> None:
        self.link = link
        self._max_chars = max_chars
        self.late_sentences = 0  # not known here: the server paces itself
        #: Replies asked of the server (a page without audio asks for none).
        self.sentences = 0
        self.cache_hits = 0  # the server keeps no cache this gateway sees
        #: Replies asked again after their connection broke.
        self.resent = 0

    def paced_by(self, queued_s: Callable[[], float]) -> RemoteSynthesizer:
        """The same synthesizer: the server orders its own queue (the listener's queued audio
        is not sent over Wyoming)."""
        return self

    @property
    def pending(self) -> int:
        """Replies being synthesized or waiting for a connection."""
        return self.link.in_flight

    @property
    def detailed(self) -> bool:
        """Whether the server applies the agents' voice settings (this project's does)."""
        return bool(self.link.extras.get("voice_settings"))

    async def warm_up(self, settings: VoiceSettings | None = None) -> None:
        """Ask the server what it serves: fails (``SpeechServiceDown``) when it is not there."""
        await self.link.describe()

    def close(self) -> None:
        """Nothing to stop: each reply's connection closes with it."""

    async def stream(
        self, text: str, settings: VoiceSettings, *, rate: int
    ) -> AsyncIterator[np.ndarray]:
        """Speak ``text``: yields mono int16 PCM at ``rate`` as the server sends it."""
        text = text_to_speak(text, self._max_chars)
        if not text:
            return
        self.sentences += 1
        played = 0  # samples at ``rate`` yielded so far
        try:
            # aclosing: a reply cut short (a barge-in) closes the connection now, not at GC.
            async with aclosing(self._once(text, settings, rate=rate)) as chunks:
                async for pcm in chunks:
                    played += len(pcm)
                    yield pcm
            return
        except SpeechServiceDown:
            # The text is still here: once more on the next connection when the service
            # answers again, skipping what was played; still down after retry_s, it fails.
            if not await self.link.wait_up():
                raise
        self.resent += 1
        skip = played
        async with aclosing(self._once(text, settings, rate=rate)) as chunks:
            async for pcm in chunks:
                if skip >= len(pcm):
                    skip -= len(pcm)
                    continue
                yield pcm[skip:]
                skip = 0

    async def _once(
        self, text: str, settings: VoiceSettings, *, rate: int
    ) -> AsyncGenerator[np.ndarray, None]:
        """One request for ``text`` on one connection (see :meth:`stream`)."""
        link = self.link
        own = self.detailed
        gain = 1.0 if own else HEADROOM * settings.volume
        try:
            async with link.connection() as conn:
                deadline = time.monotonic() + link.settings.timeout_s
                request = Synthesize(text=text).event()
                if own:
                    request.data["ofp"] = voice_extras(settings)
                try:
                    await conn.send(request)
                except OSError as exc:
                    raise link.broke(f"connection failed while sending text: {exc}") from None
                start, _ = await read_until(link, conn, ("audio-start",), deadline=deadline)
                try:
                    source_rate = int(start.data.get("rate", rate))
                    width = int(start.data.get("width", 2))
                    channels = int(start.data.get("channels", 1))
                except NOT_WYOMING as exc:
                    raise link.broke(not_wyoming(exc)) from None
                if source_rate <= 0 or channels <= 0:
                    raise link.broke(f"it sent audio of {source_rate} Hz, {channels} channels")
                if width != 2:
                    raise SynthesisError(f"the {link.kind} service sent {8 * width}-bit audio")
                resampler = Resampler(source_rate, rate)
                while True:
                    # Each chunk has its own deadline: a listener's playout holds the stream
                    # back (the session reads the next sentence when it is nearly needed), and
                    # that wait is not the server's.
                    deadline = time.monotonic() + link.settings.timeout_s
                    event, _ = await read_until(
                        link, conn, ("audio-chunk", "audio-stop"), deadline=deadline
                    )
                    if event.type == "audio-stop":
                        tail = resampler.flush()
                        if tail.size:
                            yield tail
                        break
                    payload = event.payload or b""
                    if len(payload) % 2:
                        raise link.broke("it sent an audio chunk of an odd number of bytes")
                    pcm = np.frombuffer(payload, dtype=np.int16)
                    if channels > 1:
                        pcm = pcm[::channels]
                    if gain != 1.0:
                        pcm = np.clip(pcm.astype(np.float32) * gain, -32768, 32767).astype(np.int16)
                    out = resampler.process(pcm)
                    if out.size:
                        yield out
        except ServiceBusy as exc:
            raise SynthesizerBusy(str(exc)) from None
        link.worked()
