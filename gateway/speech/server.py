"""``ofp-gateway speech serve``: this project's speech as a Wyoming server.

One process holds the models (Whisper, Piper, microWakeWord) and serves any number of gateway
nodes (``--stt/--tts/--wake-service wyoming://…``) and Wyoming clients such as Home Assistant.
It speaks plain Wyoming, so a stock client understands every answer, and adds an ``ofp`` object
where this project has more to say (a stock client ignores data it does not know):

- **asr** (``transcribe``, ``audio-start``/``-chunk``/``-stop`` → ``transcript``): the fitted
  window and its full-window guard, as in process. The transcript's ``ofp`` holds the words
  with timings and probabilities, the confidence, beam alternates, the window and the decode
  and queue times. A request's ``ofp`` may give ``speech_end_s``, ``prompt`` and ``partial``;
  a ``partial`` one is a quick decode (greedy, or ``beam`` wide, at most 5) whose
  transcript's ``ofp`` holds its ``avg_logprob`` and, when the request gave ``within`` (a list
  of words, at most 128), the ``nearest`` reading in them (``text``, ``gap``). A request the
  server cannot take (``within`` too long) is answered ``error`` code ``bad-request``.
  While the audio streams in, a client that is not this gateway gets live partials:
  ``transcript-start``, ``transcript-chunk`` (the text added since the last, with the whole
  partial in ``ofp.partial``) about every second when the model is free, ``transcript-stop``
  and then the final ``transcript``.
- **tts** (``synthesize``, or ``synthesize-start``/``-chunk``/``-stop``): ``audio-start``,
  chunks as each sentence is made, ``audio-stop`` (``synthesize-stopped`` after a stream).
  Sentences of all connections share the bounded pool of :class:`~gateway.render.tts.
  Synthesizer` (parallel workers). A request's ``ofp`` carries the agent's voice settings.
- **wake** (``detect``, then audio): the microWakeWord models; each ``detection`` has the chunk
  time in ``timestamp`` and ``ofp.end``/``detected_at`` (samples) and ``score``; one phrase is
  detected once (the models' refractory period). ``not-detected`` at ``audio-stop`` if none.

Bounded everywhere: ``max_connections`` connections (more get ``error`` code ``busy``), the
models' own admission bounds (a decode or sentence refused is ``error`` code ``busy``), 30 s of
audio per utterance. A client that goes away mid-request cancels its work: a queued decode
leaves the queue, a running one stops at its next stage, unsynthesized sentences are dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import signal
import socket
import sys
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from wyoming.asr import Transcript as WyTranscript
from wyoming.asr import TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    Info,
    TtsProgram,
    TtsVoice,
    WakeModel,
    WakeProgram,
)
from wyoming.tts import SynthesizeStopped
from wyoming.wake import Detection, NotDetected

from gateway import __version__
from gateway.audio import SAMPLE_RATE, Resampler
from gateway.catalogue import wake_words
from gateway.errors import Busy, ConfigError, SpeechError
from gateway.render.tts import Synthesizer, VoiceSettings
from gateway.speech.asr import transcript_extras
from gateway.speech.link import parse_address
from gateway.speech.tts import voice_from_extras
from gateway.voice.stt import Partial, SttSettings, Transcriber, check_within
from gateway.voice.wake import WakeWordDetector

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Piper's own rate for the packaged voice: nothing is resampled on the server.
TTS_RATE = 22_050
#: Samples per ``audio-chunk`` sent (about 93 ms at 22 050 Hz).
TTS_CHUNK = 2048
_ATTRIBUTION = Attribution(name="ofp-gateway", url="https://github.com/openfloor")
#: Events a client may send ahead while one job (a decode, a synthesis) runs, and their bytes.
#: A node sends one request per connection and waits, so it never gets near; a client
#: streaming its next utterance during a decode keeps 30 s of 20 ms chunks (1 500 events,
#: ~1 MB) ahead. Past either, the server stops reading the connection until the job ends: TCP
#: pushes back on the client, nothing is dropped, and a client that went away meanwhile is
#: noticed when the job ends (its work is then already done, so nothing is left to cancel).
MAX_STASH_EVENTS = 2048
MAX_STASH_BYTES = 4 << 20
#: The most data or payload one event may carry. A Wyoming header may name any length and the
#: stock reader would buffer all of it; audio chunks are a few kB (1 MB is 30 s of 16 kHz).
MAX_EVENT_BYTES = 1 << 20


class EventTooLarge(SpeechError):
    """A client's event said it carries more than :data:`MAX_EVENT_BYTES`."""


@dataclass(frozen=True)
class SpeechServerSettings:
    """What ``speech serve`` is told.

    Attributes:
        uri: where to listen (``tcp://HOST:PORT``); 10300 is Wyoming's usual first port.
        stt: the speech model and its decoding (the gateway's own defaults).
        max_connections: connections served at once; more are answered ``error`` (busy).
            A connection costs little (the work is bounded by the models' pools), but wake
            streams hold theirs as long as a session listens and replies while they play: a
            node opens up to 4 + 32 + one per listening session.
        partial_every_s: audio between two live partial transcripts for a streaming client.
        max_audio_s: the longest utterance taken (Whisper's window).
    """

    uri: str = "tcp://127.0.0.1:10300"
    stt: SttSettings = field(default_factory=SttSettings)
    max_connections: int = 256
    partial_every_s: float = 1.0
    max_audio_s: float = 30.0


class SpeechServer:
    """The models and the connections' handler (see the module docstring)."""

    def __init__(self, settings: SpeechServerSettings | None = None) -> None:
        self.settings = settings or SpeechServerSettings()
        self.transcriber = Transcriber(self.settings.stt)
        self.synthesizer = Synthesizer()
        self.wake_models = wake_words()
        self.connections = 0
        self.refused = 0
        self.cancelled = 0  # requests whose client went away before the answer
        self._server: asyncio.Server | None = None

    def info(self) -> Event:
        """The ``info`` answer to ``describe``, with this project's ``ofp`` capabilities."""
        stt = self.settings.stt
        # An English-only model hears English; a multilingual one what it is told (none: any).
        languages = ["en"] if stt.model.endswith(".en") else [stt.language] if stt.language else []
        info = Info(
            asr=[
                AsrProgram(
                    name="ofp-gateway-whisper",
                    attribution=_ATTRIBUTION,
                    installed=True,
                    description="faster-whisper with a fitted window, word timings and "
                    "confidences (ofp-gateway)",
                    version=__version__,
                    models=[
                        AsrModel(
                            name=stt.model,
                            attribution=_ATTRIBUTION,
                            installed=True,
                            description=f"Whisper {stt.model}",
                            version=None,
                            languages=languages,
                        )
                    ],
                    supports_transcript_streaming=True,
                )
            ],
            tts=[
                TtsProgram(
                    name="ofp-gateway-piper",
                    attribution=_ATTRIBUTION,
                    installed=True,
                    description="Piper, streamed by sentence (ofp-gateway)",
                    version=__version__,
                    voices=[
                        TtsVoice(
                            name="en_US-joe-medium",
                            attribution=_ATTRIBUTION,
                            installed=True,
                            description="Piper en_US-joe-medium",
                            version=None,
                            languages=["en_US"],
                        )
                    ],
                    supports_synthesize_streaming=True,
                )
            ],
            wake=[
                WakeProgram(
                    name="ofp-gateway-microwakeword",
                    attribution=_ATTRIBUTION,
                    installed=True,
                    description="microWakeWord models (ofp-gateway)",
                    version=__version__,
                    models=[
                        WakeModel(
                            name=name,
                            attribution=_ATTRIBUTION,
                            installed=True,
                            description=None,
                            version=None,
                            languages=["en"],
                            phrase=name.replace("_", " "),
                        )
                        for name in self.wake_models
                    ],
                )
            ],
        ).event()
        info.data["ofp"] = {
            "version": __version__,
            "words": True,
            "partials": True,
            "voice_settings": True,
            "max_connections": self.settings.max_connections,
            "cancelled": self.cancelled,
        }
        return info

    async def warm_up(self) -> None:
        """Load the models and run each once."""
        await self.transcriber.warm_up()
        await self.synthesizer.warm_up()

    async def start(self) -> asyncio.Server:
        """Listen at ``settings.uri``."""
        host, port = parse_address(self.settings.uri)
        try:
            self._server = await asyncio.start_server(self._accept, host, port, limit=1 << 20)
        except OSError as exc:  # in use, no such address, not allowed: the person can fix it
            raise ConfigError(
                f"cannot listen at {self.settings.uri}: {exc.strerror or exc} "
                "(give another with --uri)"
            ) from None
        return self._server

    async def close(self) -> None:
        """Stop listening and the synthesizer's workers."""
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
        self.synthesizer.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.connections >= self.settings.max_connections:
            self.refused += 1
            with contextlib.suppress(OSError):
                await async_write_event(
                    Error(
                        text=f"the speech server is serving {self.connections} connections "
                        "(its limit); try again later",
                        code="busy",
                    ).event(),
                    writer,
                )
                # Closing with the client's request unread would reset the connection, and the
                # reset can overtake the error: half-close, drain a little, then close.
                writer.write_eof()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(2.0):
                        while await reader.read(1 << 16):
                            pass
            writer.close()
            return
        self.connections += 1
        try:
            await _Connection(self, reader, writer).run()
        except EventTooLarge as exc:
            self.refused += 1
            with contextlib.suppress(OSError):
                await async_write_event(Error(text=str(exc), code="too-large").event(), writer)
        except (OSError, asyncio.IncompleteReadError):
            pass  # the client went away
        except Exception:  # one connection's failure must not take the server down
            log.exception("speech connection failed")
        finally:
            self.connections -= 1
            writer.close()


class _Connection:
    """One client's events, in order; long work runs while the connection is watched."""

    def __init__(
        self, server: SpeechServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self._read: asyncio.Task[Event | None] | None = None
        self._stash: list[Event] = []  # bounded: MAX_STASH_EVENTS / MAX_STASH_BYTES
        self._stash_bytes = 0
        self.mode: str | None = None  # "asr", "wake" or "tts-stream" between request and stop
        self.request: dict[str, Any] = {}
        self.audio: list[np.ndarray] = []
        self.samples = 0
        self.resampler: Resampler | None = None
        self.partial: asyncio.Task[None] | None = None
        self.partial_at = 0
        self.sent_text = ""
        self.detectors: list[WakeWordDetector] = []
        self.detected = False
        self.text: list[str] = []

    # ------------------------------------------------------------------ reading
    async def _next(self) -> Event | None:
        if self._stash:
            event = self._stash.pop(0)
            self._stash_bytes -= _size(event)
            return event
        if self._read is None:
            self._read = asyncio.ensure_future(read_event(self.reader))
        try:
            return await self._read
        finally:
            self._read = None

    async def _guarded(self, work: Awaitable[T]) -> T:
        """Run ``work`` while watching the connection: the client going away cancels it (a
        queued decode leaves the queue; a running one stops at its next stage)."""
        task = asyncio.ensure_future(work)
        try:
            while not task.done():
                if self._stash_full:
                    # The bound: read no more until the job ends (backpressure, see
                    # MAX_STASH_EVENTS); a read already under way is kept for _next.
                    await asyncio.wait({task})
                    break
                if self._read is None:
                    self._read = asyncio.ensure_future(read_event(self.reader))
                await asyncio.wait({task, self._read}, return_when=asyncio.FIRST_COMPLETED)
                if self._read.done():
                    read, self._read = self._read, None
                    failed = read.exception()
                    event = None if failed else read.result()
                    if isinstance(failed, EventTooLarge):
                        task.cancel()
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await task
                        raise failed
                    if event is None:
                        task.cancel()
                        self.server.cancelled += 1
                        with contextlib.suppress(asyncio.CancelledError, Exception):
                            await task
                        raise ConnectionResetError("the client went away")
                    self._stash.append(event)
                    self._stash_bytes += _size(event)
            return task.result()
        finally:
            if not task.done():
                task.cancel()

    @property
    def _stash_full(self) -> bool:
        return len(self._stash) >= MAX_STASH_EVENTS or self._stash_bytes >= MAX_STASH_BYTES

    async def send(self, event: Event) -> None:
        await async_write_event(event, self.writer)

    async def run(self) -> None:
        try:
            while True:
                event = await self._next()
                if event is None:
                    return
                await self.handle(event)
        finally:
            if self._read is not None:
                self._read.cancel()
            if self.partial is not None:
                self.partial.cancel()

    # ------------------------------------------------------------------ events
    async def handle(self, event: Event) -> None:
        kind = event.type
        data = event.data or {}
        if kind == "describe":
            await self.send(self.server.info())
        elif kind == "transcribe":
            self.mode, self.request = "asr", data
        elif kind == "detect":
            names = data.get("names") or self.server.wake_models
            known = [n for n in names if n in self.server.wake_models]
            if not known:
                await self.send(
                    Error(
                        text=f"no wake word model among {names}: this server has "
                        f"{', '.join(self.server.wake_models)}",
                        code="unknown-model",
                    ).event()
                )
                return
            self.mode, self.request = "wake", {"names": known}
        elif kind == "audio-start":
            await self._audio_start(AudioStart.from_event(event))
        elif kind == "audio-chunk":
            await self._audio_chunk(AudioChunk.from_event(event))
        elif kind == "audio-stop":
            await self._audio_stop()
        elif kind == "synthesize":
            if self.mode == "tts-stream":
                return  # sent beside a stream for old servers; the stream's chunks count
            await self._synthesize(str(data.get("text", "")), data.get("ofp"))
            await self.send(AudioStop().event())
        elif kind == "synthesize-start":
            self.mode, self.request, self.text = "tts-stream", data, []
        elif kind == "synthesize-chunk" and self.mode == "tts-stream":
            self.text.append(str(data.get("text", "")))
            if sum(len(t) for t in self.text) > 5000:
                self.mode = None
                await self.send(Error(text="text over 5000 characters", code="too-long").event())
        elif kind == "synthesize-stop" and self.mode == "tts-stream":
            self.mode = None
            await self._synthesize("".join(self.text), self.request.get("ofp"))
            await self.send(AudioStop().event())
            await self.send(SynthesizeStopped().event())
        elif kind == "ping":
            await self.send(Event(type="pong", data=data))

    async def _audio_start(self, start: AudioStart) -> None:
        self.audio, self.samples, self.partial_at, self.sent_text = [], 0, 0, ""
        self.detected = False
        if start.width != 2 or start.channels not in (1, 2):
            await self.send(Error(text="send 16-bit mono or stereo audio", code="format").event())
            self.mode = None
            return
        self.resampler = Resampler(start.rate, SAMPLE_RATE, in_channels=start.channels)
        if self.mode == "wake":
            self.detectors = [WakeWordDetector(n) for n in self.request["names"]]
        elif self.mode == "asr" and self._streaming:
            await self.send(TranscriptStart(language="en").event())

    @property
    def _streaming(self) -> bool:
        """Live partials go to clients that are not this gateway (it asks for its own)."""
        return "ofp" not in self.request

    async def _audio_chunk(self, chunk: AudioChunk) -> None:
        if self.resampler is None or self.mode not in ("asr", "wake"):
            return
        pcm = self.resampler.process(np.frombuffer(chunk.audio, dtype=np.int16))
        if self.mode == "wake":
            for detector in self.detectors:
                for d in detector.process(pcm):
                    self.detected = True
                    await self.send(
                        _with_ofp(
                            Detection(
                                name=d.model, timestamp=1000 * d.detected_at // SAMPLE_RATE
                            ).event(),
                            {"end": d.end, "detected_at": d.detected_at, "score": d.score},
                        )
                    )
            return
        self.audio.append(pcm)
        self.samples += len(pcm)
        if self.samples > self.server.settings.max_audio_s * SAMPLE_RATE:
            self.mode = None
            await self.send(
                Error(
                    text=f"utterance over {self.server.settings.max_audio_s:g} s", code="too-long"
                ).event()
            )
            return
        every = int(self.server.settings.partial_every_s * SAMPLE_RATE)
        if (
            self._streaming
            and self.samples - self.partial_at >= every
            and (self.partial is None or self.partial.done())
        ):
            self.partial_at = self.samples
            clip = np.concatenate(self.audio)
            self.partial = asyncio.ensure_future(self._send_partial(clip))

    async def _send_partial(self, clip: np.ndarray) -> None:
        try:
            text = (await self.server.transcriber.transcribe_partial(clip)).text
        except (Busy, SpeechError):
            return  # the model is busy: live captions wait, the final transcript does not
        # Chunks are appended by the client, so only what is unlikely to change is sent: the
        # partial without its last word (still being spoken, and punctuated as if final).
        stable = text.rsplit(" ", 1)[0] if " " in text else ""
        added = stable[len(self.sent_text) :] if stable.startswith(self.sent_text) else ""
        if added:
            self.sent_text = stable
        await self.send(_with_ofp(TranscriptChunk(text=added).event(), {"partial": text}))

    async def _audio_stop(self) -> None:
        mode, self.mode = self.mode, None
        if mode == "wake":
            self.detectors = []
            if not self.detected:
                await self.send(NotDetected().event())
            return
        if mode != "asr":
            return
        if self.partial is not None:
            self.partial.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.partial
            self.partial = None
        tail = self.resampler.flush() if self.resampler is not None else np.zeros(0, np.int16)
        clip = np.concatenate([*self.audio, tail]) if self.audio else tail
        self.audio = []
        extra = self.request.get("ofp") or {}
        transcriber = self.server.transcriber
        prompt = extra.get("prompt")
        try:
            if extra.get("partial"):
                # A beam that is no whole number is the greedy one; the transcriber narrows a
                # wide one (MAX_PARTIAL_BEAM).
                beam = extra.get("beam")
                within = extra.get("within") or []
                if not isinstance(within, list) or not all(isinstance(w, str) for w in within):
                    raise ValueError("ofp.within is a list of words")
                partial = await self._guarded(
                    transcriber.transcribe_partial(
                        clip,
                        prompt=str(prompt) if prompt else None,
                        beam=beam if isinstance(beam, int) and not isinstance(beam, bool) else 1,
                        within=check_within(tuple(within)),
                    )
                )
                await self.send(partial_event(partial))
                return
            end = extra.get("speech_end_s")
            t = await self._guarded(
                transcriber.transcribe(
                    clip,
                    speech_end_s=float(end) if isinstance(end, int | float) else None,
                    prompt=str(prompt) if prompt else None,
                )
            )
        except Busy as exc:
            await self.send(Error(text=str(exc), code="busy").event())
            return
        except SpeechError as exc:
            await self.send(Error(text=str(exc), code="failed").event())
            return
        except ValueError as exc:  # a request this server cannot take: say why
            await self.send(Error(text=str(exc), code="bad-request").event())
            return
        if self._streaming:
            final_added = t.text[len(self.sent_text) :] if t.text.startswith(self.sent_text) else ""
            if final_added:
                await self.send(TranscriptChunk(text=final_added).event())
            await self.send(TranscriptStop().event())
        await self.send(
            _with_ofp(WyTranscript(text=t.text, language=t.language).event(), transcript_extras(t))
        )

    async def _synthesize(self, text: str, extra: object) -> None:
        """``audio-start`` and the chunks of every sentence as it is made (not ``audio-stop``)."""
        settings = voice_from_extras(extra) if isinstance(extra, dict) else VoiceSettings()
        started = False

        async def speak() -> None:
            nonlocal started
            async for pcm in self.server.synthesizer.stream(text, settings, rate=TTS_RATE):
                if not started:
                    await self.send(AudioStart(TTS_RATE, 2, 1).event())
                    started = True
                for at in range(0, len(pcm), TTS_CHUNK):
                    piece = pcm[at : at + TTS_CHUNK].tobytes()
                    await self.send(AudioChunk(TTS_RATE, 2, 1, piece).event())

        try:
            await self._guarded(speak())
        except Busy as exc:
            await self.send(Error(text=str(exc), code="busy").event())
        except SpeechError as exc:
            await self.send(Error(text=str(exc), code="failed").event())
        if not started:
            await self.send(AudioStart(TTS_RATE, 2, 1).event())


async def read_event(reader: asyncio.StreamReader) -> Event | None:
    """The next Wyoming event, or None at the end of the stream or on one that cannot be read
    (as ``wyoming.event.async_read_event``); but a header naming more than
    :data:`MAX_EVENT_BYTES` of data or payload raises :class:`EventTooLarge` before any of it
    is read."""
    try:
        line = await reader.readline()
        if not line:
            return None
        header = json.loads(line)
    except ValueError:  # a line past the reader's limit, or not JSON
        return None
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        return None
    sizes = [header.get("data_length") or 0, header.get("payload_length") or 0]
    if not all(isinstance(n, int) and 0 <= n <= MAX_EVENT_BYTES for n in sizes):
        raise EventTooLarge(
            f"an event may carry at most {MAX_EVENT_BYTES} bytes of data and of payload; "
            f"this one said {sizes[0]} and {sizes[1]}"
        )
    data = header.get("data") or {}
    if not isinstance(data, dict):
        return None
    if sizes[0]:
        try:
            more = json.loads(await reader.readexactly(sizes[0]))
        except ValueError:
            return None
        if isinstance(more, dict):
            data.update(more)
    payload = await reader.readexactly(sizes[1]) if sizes[1] else None
    return Event(type=header["type"], data=data, payload=payload)


def _size(event: Event) -> int:
    """An event's bytes as kept in memory (its payload; its data is small)."""
    return len(event.payload or b"") + 64


def partial_event(partial: Partial) -> Event:
    """The ``transcript`` answering a request for a partial (its ``ofp.partial``): the text, and
    the decode's ``avg_logprob`` in ``ofp`` (which makes it detailed to
    :func:`~gateway.speech.asr.transcript_from_event`) and its ``nearest`` reading in the words
    asked for (``{"text", "gap"}``) when there is one; text only when there is no
    ``avg_logprob``."""
    event = WyTranscript(text=partial.text, language="en").event()
    if partial.avg_logprob is None:
        return event
    extra: dict[str, Any] = {"avg_logprob": round(partial.avg_logprob, 4)}
    if partial.nearest is not None:
        extra["nearest"] = {"text": partial.nearest.text, "gap": round(partial.nearest.gap, 4)}
    return _with_ofp(event, extra)


def _with_ofp(event: Event, extra: dict[str, Any]) -> Event:
    event.data["ofp"] = extra
    return event


def _check_can_listen(uri: str) -> None:
    """Raise :class:`ConfigError` when ``uri``'s address cannot be listened at (in use...)."""
    host, port = parse_address(uri)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio's own
            probe.bind(address)
    except OSError as exc:
        raise ConfigError(
            f"cannot listen at {uri}: {exc.strerror or exc} (give another with --uri)"
        ) from None


async def run_speech_server(settings: SpeechServerSettings) -> int:
    """Load the models, listen, and serve until SIGINT or SIGTERM."""
    _check_can_listen(settings.uri)  # before the models' seconds of loading, not after
    print("loading speech models…", file=sys.stderr, flush=True)
    server = SpeechServer(settings)
    await server.warm_up()
    try:
        await server.start()
    except ConfigError:
        server.synthesizer.close()
        raise
    print(f"ofp-gateway speech server is ready at {settings.uri}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.close()
    return 0
