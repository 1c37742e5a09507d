"""Wake words over Wyoming: :class:`RemoteWakeListener`, a session's wake detector when
``--wake-service wyoming://host:port`` is given.

Each listening session holds one connection: ``detect`` (the model's name), ``audio-start``,
then every 20 ms frame as an ``audio-chunk`` stamped with its time in the stream. The server
answers ``detection`` events when it hears the phrase; they are picked up at the next frame.
The answer arrives a hop after the audio, so a session keeps :data:`HOP_LOOKBACK_MS` more audio
than in process to start the utterance right after the phrase.

This project's server runs the gateway's microWakeWord models (``hey_jarvis``, ``okay_nabu``,
``alexa``, ``hey_mycroft``) and adds an ``ofp`` object to each detection: where the phrase
ended and the score. The stock ``wyoming-openwakeword`` cannot load microWakeWord models (and
with numpy 2 says Ready and never detects), so it is not a server for these names.

Detections are de-duplicated here as in process (``WakeSettings.refractory_ms``), whatever the
server does. While the service is down the session hears no wake word (it stays asleep: nothing
said before a wake word may go anywhere); ``/readyz`` says so, and the stream is opened again
after the link's backoff.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import numpy as np
from wyoming.audio import AudioChunk, AudioStart
from wyoming.wake import Detect

from gateway.audio import SAMPLE_RATE
from gateway.errors import Busy, SpeechError
from gateway.speech.link import NOT_WYOMING, Connection, ServiceLink, not_wyoming
from gateway.voice.wake import MODEL_LATENCY_MS, WakeDetection, WakeSettings, _as_pcm16

log = logging.getLogger(__name__)

#: Extra audio a session keeps for a remote detector: the detection comes a hop (and a
#: server's queue) after the audio that caused it.
HOP_LOOKBACK_MS = 1500
#: A model whose latency is not measured here (a server's own model) is taken to fire this late.
_DEFAULT_LATENCY_MS = 150


class RemoteWakeListener:
    """A wake word model on a Wyoming server, listening to one session's stream (the
    :class:`~gateway.voice.wake.WakeListener` interface)."""

    def __init__(self, link: ServiceLink, model: str, settings: WakeSettings | None = None) -> None:
        self.link = link
        self.settings = settings or WakeSettings()
        self._name = model
        self._latency = SAMPLE_RATE * MODEL_LATENCY_MS.get(model, _DEFAULT_LATENCY_MS) // 1000
        self._refractory = SAMPLE_RATE * self.settings.refractory_ms // 1000
        self._conn: Connection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._found: list[WakeDetection] = []
        self._position = 0  # samples of the stream heard
        self._offset = 0  # stream sample at which the current connection began
        self._quiet_until = 0
        self._retry_at = 0.0
        #: What the person is to be told of a failure, once (:meth:`take_trouble`).
        self._trouble: str | None = None
        #: Whether the person was told of this failure already: once per outage, until the
        #: service is heard again (a detection), not at every reopening after the backoff.
        self._told = False

    @property
    def name(self) -> str:
        """The model's name, e.g. ``hey_jarvis``."""
        return self._name

    @property
    def max_lookback(self) -> int:
        """The model's latency and the hop (see :data:`HOP_LOOKBACK_MS`)."""
        return self._latency + SAMPLE_RATE * HOP_LOOKBACK_MS // 1000

    def reset(self) -> None:
        """Forget all audio: the next sample is index 0 of a new stream (a new connection)."""
        self.close()
        self._position = 0
        self._quiet_until = 0
        self._found.clear()

    def close(self) -> None:
        """Close the stream's connection (the session's wake word changed or it ended)."""
        if self._reader is not None:
            self._reader.cancel()
            self._reader = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def listen(self, audio: np.ndarray) -> list[WakeDetection]:
        """Send 16 kHz mono audio; returns the detections the server reported since the last
        call (de-duplicated)."""
        pcm = _as_pcm16(audio)
        if self._conn is None and time.monotonic() >= self._retry_at and not self.link.down:
            await self._open()
        if self._conn is not None:
            stamp = 1000 * (self._position - self._offset) // SAMPLE_RATE
            try:
                await self._conn.send(AudioChunk(SAMPLE_RATE, 2, 1, pcm.tobytes(), stamp).event())
            except (OSError, RuntimeError) as exc:
                self._lost(f"connection failed: {exc}")
        self._position += len(pcm)
        found, self._found = self._found, []
        return found

    def take_trouble(self) -> str | None:
        """A line for the person when the wake word service failed (once per outage), naming
        the service; None when there is nothing new to tell."""
        trouble, self._trouble = self._trouble, None
        return trouble

    def _failed(self) -> None:
        if not self._told:
            self._told = True
            self._trouble = (
                f"The wake word cannot be heard right now ({self.link.service} is not "
                "answering); trying again."
            )

    async def _open(self) -> None:
        try:
            conn = await self.link.open_stream()
        except (SpeechError, Busy) as exc:
            log.warning("wake word stream not opened: %s", exc)
            self._retry_at = time.monotonic() + self.link.settings.backoff_s
            self._failed()
            return
        try:
            await conn.send(Detect(names=[self._name]).event())
            await conn.send(AudioStart(SAMPLE_RATE, 2, 1).event())
        except OSError as exc:
            conn.close()
            self.link.broke(f"connection failed: {exc}")
            self._failed()
            return
        self._conn = conn
        self._offset = self._position
        self._reader = asyncio.get_running_loop().create_task(
            self._read(conn, self._offset), name="wake-stream"
        )

    def _lost(self, reason: str) -> None:
        self.close()
        self.link.broke(reason)
        self._retry_at = time.monotonic() + self.link.settings.backoff_s
        self._failed()

    async def _read(self, conn: Connection, offset: int) -> None:
        while True:
            try:
                event = await conn.receive()
            except (OSError, asyncio.IncompleteReadError) as exc:
                event = None
                log.warning("wake word stream failed: %s", exc)
            except NOT_WYOMING as exc:  # garbage: given up on like a cut stream, in one line
                event = None
                log.warning("wake word stream failed: %s", not_wyoming(exc))
            if event is None:  # the server went away mid-stream
                if self._conn is conn:
                    self._reader = None  # this task: not cancelled by _lost
                    self._lost("the stream ended")
                return
            if event.type == "error":
                log.warning("wake word service said: %s", event.data.get("text"))
                continue
            if event.type != "detection":
                continue
            self.link.worked()
            try:
                detection = self._detection(event.data, offset)
            except NOT_WYOMING as exc:  # a detection whose fields are not numbers
                log.warning("wake word service sent a bad detection: %s", not_wyoming(exc))
                continue
            if detection is not None:
                self._found.append(detection)
                self._told = False  # heard again: a later outage is told again

    def _detection(self, data: dict[str, object], offset: int) -> WakeDetection | None:
        extra = data.get("ofp")
        if isinstance(extra, dict) and "detected_at" in extra:
            detected_at = offset + int(extra["detected_at"])
            end = offset + int(extra.get("end", int(extra["detected_at"]) - self._latency))
            score = float(extra.get("score", 1.0))
        else:  # a stock server: the time of the chunk it fired on
            stamp = data.get("timestamp")
            ms = int(stamp) if isinstance(stamp, int | float) else 0
            detected_at = offset + SAMPLE_RATE * ms // 1000
            end = max(0, detected_at - self._latency)
            score = 1.0
        if detected_at < self._quiet_until:
            return None  # the same phrase again (de-duplicated as in process)
        self._quiet_until = detected_at + self._refractory
        name = data.get("name")
        return WakeDetection(
            model=str(name) if name else self._name,
            end=max(0, end),
            detected_at=detected_at,
            score=score,
        )

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
