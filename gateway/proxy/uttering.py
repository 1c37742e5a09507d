"""Uttering: a finished turn becomes a dialog event on the floor.

One :class:`Utterer` per session takes each turn the listener ends (with the speculative decode
of its audio, if one ran), decodes it again if that decode failed or was busy, drops a wake
phrase still heard and a spoken "stop", builds the dialogEvent with its features
(gateway/proxy/utterance.py), keeps the person's audio with the record, chooses whom it is for
(gateway/proxy/addressing.py) and says it on the floor. Typed text takes the same way from the
choice on.

What it does that concerns the other parts goes out as typed events
(:mod:`gateway.proxy.events`) to the session's sink: the turn dismissed, sent, answered (for
the turn-taker), a spoken "stop" (``StopAgent``), a continued turn done with.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections import deque
from dataclasses import replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING

import numpy as np

from gateway.audio import SAMPLE_RATE, float_to_pcm16, wav_bytes
from gateway.errors import SpeechError
from gateway.floor.host import FloorHost
from gateway.ofp import DialogEvent, Event, EventType, Parameters, text_event
from gateway.ofp.timestamps import rfc3339, rfc3339_in
from gateway.proxy.addressing import Addressing, Choice, candidates
from gateway.proxy.events import (
    ContinuationDone,
    PartialText,
    Sink,
    StopAgent,
    Told,
    Transcribed,
    TurnDismissed,
    TurnEnded,
    UtteranceAnswered,
    UtteranceSent,
)
from gateway.proxy.listening import strip_wake_phrase
from gateway.proxy.services import Services
from gateway.proxy.settings import SessionSettings
from gateway.proxy.timing import Timing
from gateway.proxy.utterance import speech_dialog_event
from gateway.records.errors import RecordsError
from gateway.voice.endpoint import Utterance
from gateway.voice.stt import SpeechToText, TranscriberBusy, Transcript
from gateway.voice.words import words

if TYPE_CHECKING:
    from gateway.records.base import Recorder

log = logging.getLogger(__name__)


def _command(text: str) -> str:
    return " ".join(words(text))


def is_stop(text: str, stop_words: tuple[str, ...]) -> bool:
    """Whether ``text`` is only a stop command — said once or repeated ("Stop! Stop!": Whisper
    also hears one "Stop." that way)."""
    command = _command(text)
    said = command.split()
    return command in stop_words or (
        len(said) > 1 and len(set(said)) == 1 and said[0] in stop_words
    )


def with_choice(event: Transcribed, choice: Choice) -> Transcribed:
    """The transcript as the person is shown it: with whom it went to, and why."""
    return replace(
        event,
        to=choice.to.speaker_uri if choice.to else None,
        to_name=choice.to.name if choice.to else None,
        why=choice.why,
        private=True if choice.private and choice.to else None,
    )


class Utterer:
    """The uttering part of one session (see the module's docstring): ``sink`` where its
    events go, ``services`` the session's (its clock, where the person's clips are served)."""

    def __init__(
        self,
        settings: SessionSettings,
        *,
        conversation: FloorHost,
        transcriber: SpeechToText,
        sink: Sink,
        services: Services,
        recorder: Recorder | None = None,
    ) -> None:
        self.settings = settings
        self.conversation = conversation
        self._transcriber = transcriber
        self._sink = sink
        self._services = services
        self._recorder = recorder
        #: Whom the person's utterances are for (gateway/proxy/addressing.py).
        self.addressing = Addressing()
        #: The person's time zone (the page's): their utterances' times are written in it, so
        #: agents know where the person is (None: UTC, and agents use their own zone).
        self.time_zone: tzinfo | None = None
        self.timings: deque[Timing] = deque(maxlen=256)
        #: What the person said, newest last (bounded: a session may last for hours).
        self.transcripts: deque[str] = deque(maxlen=256)
        self._queue: asyncio.Queue[TurnEnded] = asyncio.Queue(4)
        #: Utterances between their end and the end of their reply.
        self.busy = 0
        self._previous_id: str | None = None
        #: The id of the person's last spoken utterance (a continuation takes its place).
        self._last_spoken: str | None = None

    @property
    def idle(self) -> bool:
        """Whether no utterance is waiting or being handled."""
        return self._queue.empty() and self.busy == 0

    def take(self, turn: TurnEnded) -> None:
        """A turn the listener ended (bounded: one too many is dropped, and the person told)."""
        self.busy += 1
        try:
            self._queue.put_nowait(turn)
        except asyncio.QueueFull:
            self.busy -= 1
            self._sink.emit(Told("Too many utterances at once; that one was dropped.", "@error"))

    async def run(self) -> None:
        """Utter each turn in order (the session's task)."""
        while True:
            turn = await self._queue.get()
            try:
                await self._one_utterance(turn)
            except Exception:  # the task must not die: one utterance lost, the next ones heard
                log.exception("utterance failed")
                self._done_one(turn.timing)

    async def _transcript(
        self, utt: Utterance, spec: asyncio.Task[Transcript] | None, timing: Timing
    ) -> Transcript | None:
        """The utterance's transcript: the speculative decode's, else decoded now (None: the
        person was told why there is none)."""
        if spec is not None:
            try:
                transcript = await spec
                timing.speculative = True
                return transcript
            except TranscriberBusy:
                pass  # decoded again below, now that the utterance is final
            except SpeechError as exc:  # a speech service gone mid-request: one line, no stack
                log.warning("the speculative decode failed (%s); decoding again", exc)
            except Exception:  # the model's own failure (CTranslate2): try once more below
                log.exception("the speculative decode failed; decoding again")
        try:
            return await self._transcriber.transcribe(utt.audio, speech_end_s=utt.voiced_end_s)
        except TranscriberBusy:
            await self._sink.publish(
                Told("Speech recognition is busy; please say that again.", "@error")
            )
        except SpeechError as exc:  # a speech service down or gone mid-request
            log.warning("no transcript: %s", exc)
            self._sink.emit(TurnDismissed())
            # The person is told which service, in one line (it was tried again first).
            service = exc.service
            why = f" ({service} is not answering)" if service else ""
            await self._sink.publish(
                Told(
                    f"Speech recognition is unavailable right now{why}; please say that again.",
                    "@error",
                )
            )
        return None

    async def _one_utterance(self, turn: TurnEnded) -> None:
        utt, timing, clock = turn.utterance, turn.timing, self._services.now
        transcript = await self._transcript(utt, turn.decode, timing)
        if transcript is None:
            self._done_one(timing)
            return
        timing.transcript = clock()
        timing.decode_s = transcript.decode_s
        timing.queued_s = transcript.queued_s
        text = strip_wake_phrase(transcript.text.strip(), turn.wake)
        if not text or (turn.wake is not None and is_stop(text, self.settings.stop_words)):
            if text:  # "stop" / "cancel": a command to the gateway, not words for the agents
                self._sink.emit(StopAgent())
                await self._sink.publish(Transcribed(text, command="stop"))
            self._sink.emit(TurnDismissed())
            await self._sink.publish(PartialText(""))
            self._done_one(timing)
            return
        if text != transcript.text.strip():
            transcript = replace(
                transcript, text=text, words=transcript.words[-len(text.split()) :]
            )
        clip = float_to_pcm16(utt.audio) if utt.audio.dtype != np.int16 else utt.audio
        start_wall = datetime.now(UTC) - timedelta(seconds=clock() - turn.started)
        if self.time_zone is not None:  # stamped in the person's zone: agents read its offset
            start_wall = start_wall.astimezone(self.time_zone)
        event_id = f"de:{uuid.uuid4()}"
        audio_url = None
        if self.settings.parts.audio == "url":
            audio_url = self._services.audio_url(event_id)
        de = speech_dialog_event(
            transcript,
            clip,
            speaker_uri=self.conversation.user.speaker_uri,
            started_at=start_wall,
            parts=self.settings.parts,
            audio_url=audio_url,
            previous_id=self._previous_id,
            event_id=event_id,
        )
        if self._recorder is not None:
            try:
                self._recorder.audio(self.conversation.id, de.id, wav_bytes(clip, SAMPLE_RATE))
            except RecordsError:  # records must never take the conversation down
                log.exception("could not keep the audio of %s", de.id)
        replaces = self._last_spoken if timing.continued else None
        if replaces is not None:
            part = self.transcripts.pop() if self.transcripts else ""
            # the whole request, not its first part and then it again; the record says so
            self._record_replaced(replaces, de.id, part)
        self._last_spoken = de.id
        self.transcripts.append(text)
        choice = self.choose(text)
        # A text-only recogniser (a stock Wyoming server) measured no confidence.
        confidence = round(transcript.confidence, 3) if transcript.detailed else None
        said = Transcribed(text, id=de.id, confidence=confidence, replaces=replaces)
        await self._sink.publish(with_choice(said, choice))
        self.timings.append(timing)
        timing.sent = clock()
        self._sink.emit(UtteranceSent(timing))
        await self.send(de, choice)
        self._sink.emit(UtteranceAnswered())
        self._done_one(timing)

    def _record_replaced(self, part: str, whole: str, text: str) -> None:
        """The record's note that ``whole`` replaced ``part`` (a continuation): OFP has no
        retraction, so both envelopes stay as sent, and a rejoin and the exports read this."""
        if self._recorder is None:
            return
        data = {"outcome": "replaced", "utterance": part, "by": whole, "text": text}
        try:
            self._recorder.heard(self.conversation.id, data=data, at=datetime.now(UTC))
        except RecordsError:  # records must never take the conversation down
            log.exception("could not record that %s replaced %s", whole, part)

    def _done_one(self, timing: Timing | None = None) -> None:
        self.busy = max(0, self.busy - 1)
        if timing is not None and timing.continued:
            self._sink.emit(ContinuationDone())

    async def say_text(self, text: str, *, to: str | None = None, private: bool = False) -> None:
        """A typed utterance (already stripped, not empty), for ``to`` (None: chosen as for
        speech); :class:`LookupError` when ``to`` is not an agent here."""
        choice = self.choose(text, to=to, private=private)
        self._sink.emit(StopAgent())
        de = text_event(
            self.conversation.user.speaker_uri,
            text,
            start_time=rfc3339_in(self.time_zone) if self.time_zone is not None else rfc3339(),
        )
        await self._sink.publish(with_choice(Transcribed(text, id=de.id, typed=True), choice))
        await self.send(de, choice)

    def choose(self, text: str, *, to: str | None = None, private: bool = False) -> Choice:
        """Whom ``text`` is for, among the agents on the floor now."""
        agents = candidates(self.conversation.agents())
        return self.addressing.choose(
            text, agents, to=to, private=private, routing=self.conversation.routing
        )

    async def send(self, de: DialogEvent, choice: Choice) -> None:
        """Say ``de`` on the floor, to whom ``choice`` names."""
        self._previous_id = de.id
        await self.conversation.say(
            [
                Event(
                    event_type=EventType.UTTERANCE,
                    to=choice.event_to(),
                    parameters=Parameters(dialog_event=de),
                )
            ],
            then=choice.then,
        )
