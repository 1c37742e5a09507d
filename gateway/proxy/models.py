"""The models every voice session shares: one loaded copy of each per process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.catalogue import ModelNotAvailable
from gateway.errors import SpeechError
from gateway.render.speech_cache import SpeechCacheSettings
from gateway.render.tts import Synthesizer, TextToSpeech
from gateway.render.voices import VoiceBook
from gateway.voice.feedback import FeedbackReader, default_feedback
from gateway.voice.semantic import SemanticSignal, default_semantic
from gateway.voice.stt import SpeechToText, SttSettings, Transcriber
from gateway.voice.turn_signals import TurnSignal, default_signals
from gateway.voice.vad import SileroVad, shared_vad
from gateway.voice.wake import WakeListener

if TYPE_CHECKING:
    from gateway.proxy.turn_taker import TurnTaker
    from gateway.speech.link import ServiceLink
    from gateway.speech.services import SpeechServices

log = logging.getLogger(__name__)


class Listening(Protocol):
    """A session as the shared models see it: whether its person is mid-utterance."""

    @property
    def turns(self) -> TurnTaker: ...


class VoiceModels:
    """One loaded copy of each model per process, shared by every session."""

    def __init__(
        self,
        stt: SttSettings | None = None,
        *,
        second_stt_model: str = "",
        voices: VoiceBook | None = None,
        synthesizer: TextToSpeech | None = None,
        services: SpeechServices | None = None,
        semantic: bool = True,
        feedback: bool = True,
        tts_cache: SpeechCacheSettings | None = None,
    ) -> None:
        # Speech on the network (--stt/--tts/--wake-service): those parts are Wyoming clients
        # behind the same interfaces, and the in-process models they replace are not loaded.
        from gateway.speech.services import build_remote

        remote = build_remote(services) if services is not None else None
        self.transcriber: SpeechToText = (
            remote.transcriber if remote and remote.transcriber else Transcriber(stt)
        )
        #: Reads again speech over an agent whose words would stop it (``second_stt_model``;
        #: None: none named, not installed, speech on the network, or the same model).
        self.second_reader: SpeechToText | None = (
            None
            if remote and remote.transcriber
            else second_reader(stt or SttSettings(), second_stt_model)
        )
        self.synthesizer: TextToSpeech = synthesizer or (
            remote.synthesizer if remote and remote.synthesizer else Synthesizer(cache=tts_cache)
        )
        #: Builds a session's wake detector from a wake word's name (remote: a Wyoming stream).
        self.wake_factory: Callable[[str], WakeListener] | None = remote.wake if remote else None
        #: The speech services on the network, for /readyz and /metrics (empty: all in process).
        self.services: list[ServiceLink] = remote.links if remote else []
        self.voices = voices or VoiceBook.default()
        self.vad: SileroVad = shared_vad()
        #: End-of-turn signals read from the audio, by name (see ``gateway.voice.turn_signals``).
        self.turn_signals: dict[str, TurnSignal] = default_signals()
        #: The semantic end-of-turn signal, read from the words (None: its model is not
        #: installed, and turn rules go without it). Its own llama.cpp server, apart from any
        #: assistant's, so a long generation never delays a turn's verdict.
        self.semantic: SemanticSignal | None = default_semantic() if semantic else None
        #: Reads speech over an agent as a listener's feedback or a request
        #: (``OverlapSettings.feedback_p``; None: turned off, its model not installed, or people
        #: speaking another language than English, the phrases it was fitted on).
        english = (stt or SttSettings()).language in (None, "en")
        self.feedback: FeedbackReader | None = (
            default_feedback() if feedback and english else None
        )
        #: The sessions using these models, for :meth:`idle_for`.
        self.sessions: weakref.WeakSet[Listening] = weakref.WeakSet()

    def idle_for(self, session: Listening) -> bool:
        """Whether nothing but ``session`` needs the speech model soon: no decode running or
        queued, and no other session in the middle of an utterance (whose end would want the
        model). A decode that ``session`` starts early and then wastes delays nobody then."""
        if self.transcriber.pending:
            return False
        return not any(s.turns.active for s in self.sessions if s is not session)

    async def warm_up(self) -> None:
        """Load everything and run each model once, so the first person is not kept waiting."""
        if self.second_reader is not None:
            # It makes partial decodes only: warming a full window too took base 3 s and 28 MB
            # more (0.16 s this way).
            tone = np.sin(np.linspace(0, 2 * np.pi * 220, SAMPLE_RATE)).astype(np.float32) / 10
            await self.second_reader.transcribe_partial(tone)
        for part in (self.transcriber, self.synthesizer):
            try:
                await part.warm_up()
            except SpeechError as exc:  # a remote service not there yet: /readyz says so, and
                log.warning("%s", exc)  # its link keeps trying (gateway.speech.link)
        for link in self.services:
            if link.kind == "wake":
                with contextlib.suppress(SpeechError):
                    await link.describe()
            link.watch()
        if self.feedback is not None:
            try:  # loads its model (0.4 s) and reads one phrase
                await asyncio.to_thread(self.feedback.warm_up)
            except ModelNotAvailable as exc:  # a broken install: the rules decide without it
                log.warning("no feedback reader: %s", exc)
                self.feedback = None
        if self.semantic is not None:
            # Loads the model (0.4 s) and puts the prompt's fixed prefix in its cache.
            try:
                await asyncio.to_thread(self.semantic.warm_up)
            except ModelNotAvailable as exc:  # a broken install: turns go without the signal
                log.warning("no semantic end-of-turn signal: %s", exc)
                self.semantic = None


def second_reader(stt: SttSettings, name: str) -> Transcriber | None:
    """The second recogniser ``name``, loaded, beside the first (``stt``); None when ``name`` is
    empty, the first's model, or not installed (said once in the log: speech over an agent is
    then decided on the first recogniser's words alone), or when people speak another language
    than English (the backchannels it reads are English). It decodes English, on one thread of
    its own."""
    if not name or name == stt.model or stt.language not in (None, "en"):
        return None
    settings = SttSettings(
        model=name,
        compute_type=stt.compute_type,
        cpu_threads=1,
        workers=1,
        max_pending=stt.max_pending,
        language="en",
    )
    try:
        reader = Transcriber(settings)
    except ModelNotAvailable as exc:  # one line at start-up: what is missing, and the command
        log.warning("speech over an agent is read by one recogniser: %s", exc)
        return None
    log.info("speech over an agent that %s hears as a request is read again by %s", stt.model, name)
    return reader
