"""The person's proxy for one voice session: speech in, utterances out, agents' replies spoken.

Data path (each stage a unit of its own, composed here)::

    feed(16 kHz PCM) → bounded input queue → VAD → endpointer ─┬─ partial transcripts (UI)
                                                                ├─ pause: speculative decode
                                                                └─ utterance → STT → dialog event
                                                                                → conversation.say
    conversation delivers to the person → UI events + render queue → TTS/SSML/audio → playout

Turn-taking is decided by :class:`gateway.proxy.turns.TurnTaker` (sans I/O: it is handed the
VAD's chunks and the time and returns actions); this class is its driver — it runs the decodes,
the end-of-turn signals, playback and the UI events the turn-taker asks for.

Latency: the final decode starts speculatively when the person pauses (``speculate_ms``, 64 ms of
silence; ``idle_speculate_ms``, 32 ms, while no one else needs the model), and the end-of-turn
signals (prosody) are read from the audio alongside. If the transcript reads as a finished sentence
and the voice sounds finished, the utterance ends as soon as the pause reaches ``pause_ms``
(200 ms); the more the signals doubt it, the longer the wait (``SessionSettings.turn_rule``, at
most 2 s), so people are not cut off mid-sentence. Starting the decode before the pause is long
enough to act on hides its time (~170 ms) behind the pause.

Barge-in: while an agent is being played, ``barge_in_ms`` of voiced audio stops playback at once
(queued audio dropped, synthesis cancelled) and the transport is told to flush its own buffer.

Streamed replies (an in-process agent generating its words, :mod:`gateway.agents.streaming`):
each sentence is synthesized as soon as the agent completes it and the page is shown the text
so far; a barge-in cancels the generation too. The reply's envelope, which follows with the
whole utterance under the same id, is shown but not spoken again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

import numpy as np

from gateway.agents.errors import AgentError
from gateway.agents.streaming import ReplyStream
from gateway.audio import FRAME_MS, SAMPLE_RATE, float_to_pcm16, wav_bytes
from gateway.audio.playout import Playout
from gateway.catalogue import ModelNotAvailable
from gateway.errors import SpeechError
from gateway.floor import Floor
from gateway.floor.host import FloorHost, Notice
from gateway.ofp import DialogEvent, Envelope, Event, EventType, text_event
from gateway.ofp.timestamps import rfc3339
from gateway.proxy.addressing import Addressing, Choice, candidates
from gateway.proxy.floor_events import TOLD, describe
from gateway.proxy.turns import (
    Action,
    CancelDecode,
    EndTurn,
    ShowPartial,
    Sleep,
    StartDecode,
    StartPartial,
    StateChanged,
    StopPlayback,
    TurnRule,
    TurnTaker,
    Verdict,
    looks_final,  # noqa: F401 (lived here; importers still use it)
)
from gateway.proxy.utterance import UtteranceParts, speech_dialog_event
from gateway.records.errors import RecordsError
from gateway.render.decode import Fetch
from gateway.render.reply import render_dialog_event, render_sentence
from gateway.render.tts import Synthesizer, TextToSpeech
from gateway.render.voices import VoiceBook
from gateway.server.messages import (
    AgentUtterance,
    FinalTranscript,
    FloorConversant,
    FloorUpdate,
    Flush,
    FoundManifest,
    FromGateway,
    Manifests,
    PageNotice,
    PartialTranscript,
    SessionState,
    StateUpdate,
    WakeHeard,
)
from gateway.voice.endpoint import EndpointSettings, Utterance
from gateway.voice.semantic import SemanticSignal, default_semantic
from gateway.voice.stt import SpeechToText, SttSettings, Transcriber, TranscriberBusy, Transcript
from gateway.voice.turn_signals import TurnSignal, default_signals
from gateway.voice.vad import SileroVad, shared_vad
from gateway.voice.wake import PHRASE_PREFIX, WakeDetection, WakeListener, make_detector
from gateway.voice.words import words

if TYPE_CHECKING:
    from gateway.records.base import Recorder
    from gateway.speech.link import ServiceLink
    from gateway.speech.services import SpeechServices

log = logging.getLogger(__name__)

#: What the session tells the page (gateway/server/messages.py).
UIEvent = FromGateway
EventSink = Callable[[UIEvent], Awaitable[None] | None]


def _command(text: str) -> str:
    return " ".join(words(text))


def _is_stop(text: str, stop_words: tuple[str, ...]) -> bool:
    """Whether ``text`` is only a stop command — said once or repeated ("Stop! Stop!": Whisper
    also hears one "Stop." that way)."""
    command = _command(text)
    said = command.split()
    return command in stop_words or (
        len(said) > 1 and len(set(said)) == 1 and said[0] in stop_words
    )


@dataclass(frozen=True)
class SessionSettings:
    """How one voice session behaves.

    Every silence that ends a turn is the turn rule's (``turn_rule``): the endpointer's own
    ``end_silence_ms`` is set from it, so ``endpoint`` holds only how speech is found.
    """

    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    parts: UtteranceParts = field(default_factory=UtteranceParts)
    #: Sample rate of the audio handed to the transport.
    out_rate: int = 48_000
    #: Release output in real time (False: as fast as consumed, for files).
    paced: bool = True
    #: Give silent frames while idle (a WebRTC track needs a continuous stream).
    fill_silence: bool = False
    #: Release output this far ahead of real time, for transports that buffer at the far end.
    playout_lead_ms: int = 0
    #: End an utterance at a pause when the speculative transcript looks finished.
    early_endpoint: bool = True
    #: How the end-of-turn signals at a pause become the silence waited before the turn ends.
    #: Chosen from ``scripts/bench_turns.py``'s trade-off (docs/performance.md): a finished-looking
    #: transcript ends the turn at 200 ms when the prosody says "finished" (P >= 0.6) and waits
    #: 1.5 s when it says "not finished" (P <= 0.5; between, in proportion); words that do not
    #: read as finished wait 900 ms; a one-word answer with finished prosody 500 ms. No turn
    #: waits more than ``max_wait_ms`` (2 s). ``TurnRule()`` is the transcript-only rule
    #: (200 ms / 700 ms) of before, which cut off 34 of 42 paused requests.
    #: The semantic signal (``gateway.voice.semantic``) settles the words when they are clear:
    #: P(finished) <= 0.005 waits at least 1.5 s whatever the punctuation and the voice say;
    #: P >= 0.02 takes a transcript as finished words even without its final mark or ending on
    #: "at", "on"… — the voice still sets the wait, as for any finished sentence. Chosen on the
    #: tuning set of ``bench_turns --set tuning --sweep-semantic`` (a plateau: low 0.002–0.02,
    #: high 0.01–0.03, any wait 1.2–2 s; these values sit in its middle), reported on the
    #: held-out set (docs/turn-taking.md).
    turn_rule: TurnRule = field(
        default_factory=lambda: TurnRule(
            signals=("prosody",),
            confident=0.6,
            doubtful=0.5,
            doubt_ms=1500,
            unfinished_ms=900,
            one_word_ms=500,
            max_wait_ms=2000,
            semantic_low=0.005,
            semantic_high=0.02,
            semantic_pause_ms=200,
            semantic_wait_ms=1500,
        )
    )
    #: Voiced audio that interrupts an agent being played (0 disables barge-in).
    barge_in_ms: int = 96
    #: Partial transcripts while speaking, at most this often (0 disables them).
    partial_interval_ms: int = 900
    #: Input audio queued before the oldest is dropped (a stalled session must not grow).
    max_input_ms: int = 2_000
    #: Agent utterances waiting to be spoken.
    max_replies: int = 16
    #: A reply's next sentence is asked for once less audio than this is left to play before
    #: it. The synthesizer serves the earliest deadline first, so asking early does not delay
    #: anyone's first sentence; it bounds how much synthesized audio a barge-in throws away.
    tts_lookahead_ms: int = 1500
    #: Wake word (``hey_jarvis``, ``okay_nabu``, ``alexa``, ``hey_mycroft``, ``phrase:TEXT``) or
    #: ``off``. With one, audio reaches nothing but the detector until the word is heard.
    wake: str = "off"
    #: After a reply has played, how long the person may answer without the wake word.
    follow_up_ms: int = 8_000
    #: After the wake word, how long to wait for speech to begin before going back to sleep.
    wake_listen_ms: int = 5_000
    #: In wake mode, an utterance that is only one of these stops playback and is not sent.
    stop_words: tuple[str, ...] = ("stop", "cancel", "stop it", "cancel that", "never mind")


def _score(signals: dict[str, TurnSignal], audio: np.ndarray, voiced_end: int) -> dict[str, float]:
    """Each signal's P(finished); a signal that cannot judge (too little voice) is left out."""
    scores = {}
    for name, signal in signals.items():
        try:
            p = signal.score(audio, voiced_end)
        except Exception:  # a model (onnxruntime, numpy): the turn still ends on the others
            log.exception("end-of-turn signal %s failed", name)
            continue
        if p is not None:
            scores[name] = p
    return scores


class VoiceModels:
    """One loaded copy of each model per process, shared by every session."""

    def __init__(
        self,
        stt: SttSettings | None = None,
        *,
        voices: VoiceBook | None = None,
        synthesizer: TextToSpeech | None = None,
        services: SpeechServices | None = None,
    ) -> None:
        # Speech on the network (--stt/--tts/--wake-service): those parts are Wyoming clients
        # behind the same interfaces, and the in-process models they replace are not loaded.
        from gateway.speech.services import build_remote

        remote = build_remote(services) if services is not None else None
        self.transcriber: SpeechToText = (
            remote.transcriber if remote and remote.transcriber else Transcriber(stt)
        )
        self.synthesizer: TextToSpeech = synthesizer or (
            remote.synthesizer if remote and remote.synthesizer else Synthesizer()
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
        self.semantic: SemanticSignal | None = default_semantic()
        #: The sessions using these models, for :meth:`idle_for`.
        self.sessions: weakref.WeakSet[VoiceSession] = weakref.WeakSet()

    def idle_for(self, session: VoiceSession) -> bool:
        """Whether nothing but ``session`` needs the speech model soon: no decode running or
        queued, and no other session in the middle of an utterance (whose end would want the
        model). A decode that ``session`` starts early and then wastes delays nobody then."""
        if self.transcriber.pending:
            return False
        return not any(s.turns.active for s in self.sessions if s is not session)

    async def warm_up(self) -> None:
        """Load everything and run each model once, so the first person is not kept waiting."""
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
        if self.semantic is not None:
            # Loads the model (0.4 s) and puts the prompt's fixed prefix in its cache.
            try:
                await asyncio.to_thread(self.semantic.warm_up)
            except ModelNotAvailable as exc:  # a broken install: turns go without the signal
                log.warning("no semantic end-of-turn signal: %s", exc)
                self.semantic = None


@dataclass
class Timing:
    """Monotonic times of one utterance's way through the gateway."""

    last_voiced: float
    endpoint: float = 0.0
    transcript: float = 0.0
    sent: float = 0.0
    reply: float | None = None
    first_audio: float | None = None
    speculative: bool = False
    early_end: bool = False
    decode_s: float = 0.0
    queued_s: float = 0.0
    #: The turn-taker's decision (see :class:`EndTurn`): why the turn ended, the silence the
    #: rule chose, and the silence at which the verdict arrived.
    end_reason: str = "end silence"
    wait_ms: int | None = None
    verdict_ms: int | None = None
    #: The semantic signal's P(finished) at the pause that ended the turn, and what its call
    #: cost (None: not consulted, or no answer in time).
    semantic: float | None = None
    semantic_ms: float | None = None

    def as_ms(self) -> dict[str, float | bool | None]:
        """The stages in milliseconds (``None`` where that stage never happened)."""

        def ms(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else round((b - a) * 1000, 1)

        return {
            "endpoint": ms(self.last_voiced, self.endpoint),
            "stt": ms(self.endpoint, self.transcript),
            "agent": ms(self.sent, self.reply),
            "ttsFirstAudio": ms(self.reply, self.first_audio),
            "total": ms(self.last_voiced, self.first_audio),
            "decode": round(self.decode_s * 1000, 1),
            "queued": round(self.queued_s * 1000, 1),
            "speculative": self.speculative,
            "earlyEnd": self.early_end,
            "endReason": self.end_reason,
            "waitMs": self.wait_ms,
            "verdictMs": self.verdict_ms,
            "semantic": None if self.semantic is None else round(self.semantic, 4),
            "semanticMs": None if self.semantic_ms is None else round(self.semantic_ms, 1),
        }


def _transcript(message: FinalTranscript, choice: Choice) -> FinalTranscript:
    """The transcript as the page shows it: with whom it went to, and why."""
    return replace(
        message,
        to=choice.to.speaker_uri if choice.to else None,
        to_name=choice.to.name if choice.to else None,
        why=choice.why,
        private=True if choice.private and choice.to else None,
    )


def _floor_view(floor: Floor) -> FloorUpdate:
    return FloorUpdate(
        tuple(
            FloorConversant(i.speaker_uri, i.service_url, i.display_name, i.role)
            for i in floor.conversants
        ),
        floor_granted=tuple(floor.floor_granted),
        convener=floor.convener,
    )


class VoiceSession:
    """One person's voice, attached to a :class:`FloorHost`.

    ``on_event`` receives the page's messages (:mod:`gateway.server.messages`); the
    transport plays :attr:`playout`. ``fetch`` fetches media URLs under the address policy.
    ``audio_url(event_id)`` is where the gateway serves a clip, for the ``url`` audio mode.
    """

    def __init__(
        self,
        conversation: FloorHost,
        models: VoiceModels,
        *,
        on_event: EventSink,
        fetch: Fetch,
        settings: SessionSettings | None = None,
        recorder: Recorder | None = None,
        audio_url: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = s = settings or SessionSettings()
        self.conversation = conversation
        self.models = models
        models.sessions.add(self)
        self._on_event = on_event
        self._fetch = fetch
        self._recorder = recorder
        self._audio_url = audio_url
        self.playout = Playout(
            s.out_rate,
            paced=s.paced,
            fill_silence=s.fill_silence,
            lead_ms=s.playout_lead_ms,
            on_state=self._on_playing,
        )
        #: False mutes rendering (``talk`` keeps greetings out of the reply it measures).
        self.speak_replies = True
        #: Called with each utterance's :class:`Timing` once its reply starts to play.
        self.on_timing: Callable[[Timing], None] | None = None
        self.timings: deque[Timing] = deque(maxlen=256)
        #: What the person said, newest last (bounded: a session may last for hours).
        self.transcripts: deque[str] = deque(maxlen=256)
        self.dropped_input = 0
        #: Whom the person's utterances are for (gateway/proxy/addressing.py).
        self.addressing = Addressing()
        #: Conversants' names as last seen (an agent that left is still named when told).
        self._names: dict[str, str] = {}

        self._input: asyncio.Queue[tuple[np.ndarray, float]] = asyncio.Queue(
            max(1, s.max_input_ms // FRAME_MS)
        )
        self._vad = models.vad.stream()
        #: The rules of turn-taking; this session carries out what it decides.
        self.turns = TurnTaker(s)
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=1024)
        #: Speculative decodes by the turn-taker's id (a new one starts at each pause).
        self._decodes: dict[int, asyncio.Task[Transcript]] = {}
        self._partial: asyncio.Task[None] | None = None
        self._utterances: asyncio.Queue[
            tuple[Utterance, asyncio.Task[Transcript] | None, Timing]
        ] = asyncio.Queue(4)
        self._replies: asyncio.Queue[DialogEvent | ReplyStream] = asyncio.Queue(s.max_replies)
        #: The ids of replies spoken as they streamed (their envelope is not spoken again).
        self._streamed: deque[str] = deque(maxlen=64)
        self._stream: ReplyStream | None = None
        self._speaking: asyncio.Task[None] | None = None
        self._awaiting: Timing | None = None
        self._previous_id: str | None = None
        #: What an agent said last: the semantic signal reads the person's words after it.
        self._agent_said: str | None = None
        #: The semantic signal's score and cost by decode id (bounded like ``_decodes``).
        self._semantic: dict[int, tuple[float | None, float]] = {}
        self._busy = 0  # utterances between endpoint and the end of their reply
        self._background: set[asyncio.Future[None]] = set()
        self._wake: WakeListener | None = None
        self._wake_pos = 0  # samples the wake detector has heard
        self._lookback: deque[np.ndarray] = deque()
        self._lookback_samples = 0
        self.set_wake(s.wake)

        if not getattr(models.transcriber, "detailed", True):
            # A stock Wyoming server (docs/speech-services.md): said once, on the page.
            self._emit_soon(
                PageNotice(
                    "Speech recognition here gives text only: no word timings, confidence or "
                    "live captions reach the agents or this page.",
                    "@speech-service",
                )
            )
        conversation.on_user = self._heard
        conversation.on_notice = self._noticed
        conversation.on_stream = self._open_stream
        conversation.on_floor = lambda floor: self._emit_soon(_floor_view(floor))
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name="session-listen"),
            loop.create_task(self._utter(), name="session-utter"),
            loop.create_task(self._render(), name="session-render"),
            loop.create_task(self._watch_gaps(), name="session-gaps"),
        ]

    # ------------------------------------------------------------------ input from the transport
    def feed(self, pcm: np.ndarray) -> None:
        """Hand over 16 kHz mono int16 audio (any length). Never blocks: when the session is
        behind by ``max_input_ms``, the oldest audio is dropped."""
        item = (pcm, time.monotonic())
        try:
            self._input.put_nowait(item)
        except asyncio.QueueFull:
            with contextlib.suppress(asyncio.QueueEmpty):
                self._input.get_nowait()
            self.dropped_input += 1
            self._input.put_nowait(item)

    async def say_text(self, text: str, *, to: str | None = None, private: bool = False) -> None:
        """A typed utterance (the page's text box), for ``to`` (an agent's speaker URI; None:
        chosen as for speech). :class:`LookupError` when ``to`` is not an agent here."""
        text = text.strip()
        if not text:
            return
        choice = self.choose(text, to=to, private=private)
        self.stop_speaking()
        de = text_event(
            self.conversation.user.speaker_uri,
            text,
            start_time=rfc3339(),
        )
        await self._emit(_transcript(FinalTranscript(text, id=de.id, typed=True), choice))
        await self._send(de, choice)

    def choose(self, text: str, *, to: str | None = None, private: bool = False) -> Choice:
        """Whom ``text`` is for, among the agents on the floor now."""
        agents = candidates(self.conversation.agents())
        return self.addressing.choose(text, agents, to=to, private=private)

    def set_address(
        self, to: str | None, *, private: bool = False, sticky: bool | None = None
    ) -> None:
        """The page's standing choice of addressee (None: the gateway chooses again);
        :class:`LookupError` when ``to`` is not an agent here."""
        if to is not None and to not in {i.speaker_uri for i, _ in self.conversation.agents()}:
            raise LookupError(f"{to!r} is not an agent in this conversation")
        self.addressing.set_page_choice(to, private=private)
        if sticky is not None:
            self.addressing.sticky = sticky

    async def invite(self, url: str) -> None:
        """Invite an agent by service URL (``builtin:NAME`` or https), by name once its
        manifest is known (asked for first, for at most ``Limits.manifest_timeout_s``)."""
        known = await self.conversation.learn_manifest(url)
        # By the serviceUrl the agent calls itself (agents compare it as a plain string).
        to = known.service_url if known is not None else url
        await self.conversation.say([Event(event_type=EventType.INVITE, to={"serviceUrl": to})])

    async def discover(self, url: str) -> Manifests:
        """What the agent at ``url`` offers, for the page to show before the person invites:
        its manifest(s) and, from a discovery agent such as the concierge, its
        recommendations."""
        try:
            found = await self.conversation.discover(url)
        except (AgentError, TimeoutError) as err:
            return Manifests(url, error=str(err) or "it did not answer in time")
        return Manifests(
            url,
            tuple(
                FoundManifest(
                    m.identification.service_url,
                    m.identification.speaker_uri,
                    m.identification.display_name,
                    m.identification.synopsis,
                    tuple(k for c in m.capabilities for k in c.keyphrases)[:12],
                    m.score,
                    recommended,
                )
                for m, recommended in found
            ),
            error=None if found else "it published no manifest",
        )

    async def uninvite(self, speaker_uri: str) -> None:
        """Remove an agent from the conversation."""
        await self.conversation.say(
            [
                Event(
                    event_type=EventType.UNINVITE,
                    to={"speakerUri": speaker_uri},
                    reason="the person removed this agent",
                )
            ]
        )

    @property
    def state(self) -> str:
        """``idle`` (asleep), ``listening``, ``hearing``, ``thinking`` or ``speaking``."""
        return self.turns.state

    @property
    def mode(self) -> Literal["handsfree", "ptt"]:
        """Hands-free, or push-to-talk."""
        return self.turns.mode

    @mode.setter
    def mode(self, mode: Literal["handsfree", "ptt"]) -> None:
        self.turns.set_mode(mode)

    def set_ptt(self, down: bool) -> None:
        """Push-to-talk: speech counts only while held; letting go ends the utterance."""
        self._apply(self.turns.set_ptt(down, time.monotonic()))

    def stop_speaking(self) -> None:
        """Barge-in: stop the agent being played and drop what is queued, here and in the
        transport (which gets a ``flush`` event)."""
        had = self.playout.speaking or self._speaking is not None or not self._replies.empty()
        while not self._replies.empty():
            dropped = self._replies.get_nowait()
            if isinstance(dropped, ReplyStream):
                dropped.cancel()  # its generation stops too
        if self._stream is not None:
            self._stream.cancel()
        if self._speaking is not None:
            self._speaking.cancel()
        self.playout.flush()
        if had:
            self._emit_soon(Flush())

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no utterance is being handled, the conversation is idle and nothing is
        playing; False if ``timeout`` s passed first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if (
                self._input.empty()
                and self._utterances.empty()
                and self._busy == 0
                and self._replies.empty()
                and self._speaking is None
                and not self.turns.active
                and not self.playout.speaking
                and await self.conversation.wait_idle(max(0.0, deadline - time.monotonic()))
            ):
                await asyncio.sleep(0.05)
                if self._replies.empty() and self._speaking is None and not self.playout.speaking:
                    return True
        return False

    async def close(self) -> None:
        """Stop the session's tasks; the conversation lives on (a reload may rejoin it)."""
        for t in self._tasks:
            t.cancel()
        for t in (self._speaking, self._partial):
            if t is not None:
                t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.playout.close()
        if self._wake is not None and hasattr(self._wake, "close"):
            self._wake.close()  # a remote detector's stream
        self.models.sessions.discard(self)

    # ------------------------------------------------------------------ listening
    async def _listen(self) -> None:
        while True:
            pcm, arrived = await self._input.get()
            now = time.monotonic()
            if self.mode == "ptt" and not self.turns.ptt_down:
                continue
            if self._wake is not None:
                detections = await self._wake.listen(pcm)
                self._remember(pcm)
                self._wake_pos += len(pcm)
                if detections:
                    await self._woke(detections[-1], arrived)
                    continue
                busy = self._busy > 0
                self._apply(self.turns.check_awake(now, busy=busy))
                if not self.turns.awake(now, busy=busy):
                    continue  # asleep: this audio goes nowhere but the detector
            await self._hear(pcm, arrived)

    async def _watch_gaps(self) -> None:
        """Tell the turn-taker the time while a turn is under way and no audio is waiting: a
        client that stops sending (a muted microphone, a stalled connection) would otherwise
        hold its turn open, since the turn-taker only counts silence it hears
        (``TurnRule.gap_ms``)."""
        period = self.turns.rule.gap_ms / 4000
        while True:
            await asyncio.sleep(period)
            if self.turns.active and self._input.empty():
                now = time.monotonic()
                position = self.turns.position
                actions = self.turns.no_audio(now)
                if self.turns.position > position:
                    self._arrivals.append((self.turns.position, now))
                self._apply(actions)

    async def _hear(self, pcm: np.ndarray, arrived: float) -> None:
        chunks, probs = self._vad.process(pcm)
        for chunk, p in zip(chunks, probs, strict=True):
            self._arrivals.append((self.turns.position + len(chunk), arrived))
            audible = self.playout.speaking or self._speaking is not None
            idle = self.models.idle_for(self)
            self._apply(
                self.turns.hear(
                    chunk, float(p), time.monotonic(), agent_audible=audible, model_idle=idle
                )
            )

    def _apply(self, actions: list[Action]) -> None:
        """Carry out what the turn-taker decided."""
        for a in actions:
            if isinstance(a, StartDecode):
                self._start_decode(a)
            elif isinstance(a, CancelDecode):
                task = self._decodes.pop(a.id, None)
                if task is not None:
                    # Its audio is outdated: a decode still queued leaves the queue for others.
                    task.cancel()
            elif isinstance(a, EndTurn):
                self._end_turn(a)
            elif isinstance(a, StopPlayback):
                self.stop_speaking()
            elif isinstance(a, StateChanged):
                self._emit_soon(StateUpdate(SessionState(a.state)))
            elif isinstance(a, Sleep):
                self._vad.reset()
            elif isinstance(a, StartPartial):
                self._partial = asyncio.get_running_loop().create_task(self._run_partial(a.audio))
            elif isinstance(a, ShowPartial):
                self._emit_soon(PartialTranscript(a.text))

    def _start_decode(self, a: StartDecode) -> None:
        task = asyncio.get_running_loop().create_task(
            self.models.transcriber.transcribe(a.audio, speech_end_s=a.speech_end_s)
        )
        self._decodes[a.id] = task
        while len(self._decodes) > 4:  # bounded: only the newest pause's decode matters
            self._decodes.pop(next(iter(self._decodes))).cancel()
        self._emit_task(self._judge(a, task))

    async def _judge(self, a: StartDecode, task: asyncio.Task[Transcript]) -> None:
        """The audio signals (off the event loop) while the decode runs; then the verdict."""
        rule = self.settings.turn_rule
        signals = {n: self.models.turn_signals[n] for n in rule.signals}
        scores: dict[str, float] = {}
        if signals:
            scores = await asyncio.to_thread(_score, signals, a.audio, a.voiced_end)
        await asyncio.wait([task])
        text = None
        if not task.cancelled() and task.exception() is None:
            text = task.result().text
        if text is not None and rule.semantic and self.turns.awaiting(a.id):
            p = await self._semantic_score(a.id, text)
            if p is not None:
                scores = {**scores, "semantic": p}
        verdict = None if text is None else Verdict(text, scores)
        self._apply(self.turns.judged(a.id, verdict, time.monotonic()))

    async def _semantic_score(self, decode_id: int, text: str) -> float | None:
        """The semantic signal's P(finished) for ``text``, off the event loop, given up after
        its ``timeout_ms`` (the turn is then judged without it). Run only while the pause can
        still end the turn (speech not resumed); if speech resumes during the call, the
        turn-taker ignores the verdict it is part of."""
        semantic = self.models.semantic
        if semantic is None:
            return None
        t = time.monotonic()
        try:
            p = await asyncio.wait_for(
                asyncio.to_thread(semantic.score, text, self._agent_said),
                semantic.settings.timeout_ms / 1000,
            )
        except TimeoutError:
            p = None
        except Exception:  # the model would not load (llama.cpp): judge the turn without it
            log.exception("the semantic end-of-turn signal failed")
            p = None
        self._semantic[decode_id] = (p, (time.monotonic() - t) * 1000)
        while len(self._semantic) > 8:
            self._semantic.pop(next(iter(self._semantic)))
        return p

    def _end_turn(self, a: EndTurn) -> None:
        task = self._decodes.pop(a.decode, None) if a.decode is not None else None
        for other in self._decodes.values():
            other.cancel()
        self._decodes.clear()
        timing = Timing(
            last_voiced=self._arrival(a.offset + a.utterance.voiced_end - 1),
            endpoint=time.monotonic(),
            early_end=a.early,
            end_reason=a.reason,
            wait_ms=a.wait_ms,
            verdict_ms=a.verdict_ms,
        )
        if a.decode is not None and a.decode in self._semantic:
            timing.semantic, timing.semantic_ms = self._semantic.pop(a.decode)
        self._busy += 1
        try:
            self._utterances.put_nowait((a.utterance, task, timing))
        except asyncio.QueueFull:
            self._busy -= 1
            self._emit_soon(
                PageNotice("Too many utterances at once; that one was dropped.", "@error")
            )

    # ------------------------------------------------------------------ wake word
    def set_wake(self, name: str) -> None:
        """Choose the wake word (or ``off``); the session falls asleep until it is heard."""
        name = (name or "off").strip()
        if self._wake is not None and hasattr(self._wake, "close"):
            self._wake.close()  # a remote detector's stream
        factory = self.models.wake_factory
        if name == "off":
            self._wake = None
        elif factory is not None and not name.startswith(PHRASE_PREFIX):
            self._wake = factory(name)
        else:
            self._wake = make_detector(name, transcriber=self.models.transcriber)
        self.wake_name = name
        self._lookback.clear()
        self._lookback_samples = 0
        self._apply(self.turns.set_wake(self._wake is not None, time.monotonic()))

    def _remember(self, pcm: np.ndarray) -> None:
        """Keep just enough recent audio to start an utterance right after the wake phrase."""
        assert self._wake is not None
        self._lookback.append(pcm)
        self._lookback_samples += len(pcm)
        while (
            self._lookback
            and self._lookback_samples - len(self._lookback[0]) >= self._wake.max_lookback
        ):
            self._lookback_samples -= len(self._lookback.popleft())

    async def _woke(self, detection: WakeDetection, arrived: float) -> None:
        self._vad.reset()
        self._apply(self.turns.woke(time.monotonic()))  # the wake word is a barge-in
        self._emit_soon(WakeHeard(detection.model))
        # The utterance starts where the phrase ended: feed what came after it, drop the rest.
        buffered = np.concatenate(list(self._lookback)) if self._lookback else np.zeros(0, np.int16)
        self._lookback.clear()
        self._lookback_samples = 0
        after = self._wake_pos - detection.end
        if 0 < after <= len(buffered):
            await self._hear(buffered[-after:], arrived)

    def _arrival(self, sample: int) -> float:
        """When the chunk holding ``sample`` arrived (monotonic); the oldest known if older."""
        arrived = time.monotonic()
        for end, t in reversed(self._arrivals):
            if end <= sample:
                break
            arrived = t
        return arrived

    async def _run_partial(self, audio: np.ndarray) -> None:
        text: str | None = None
        try:
            text = await self.models.transcriber.transcribe_partial(audio)
        except TranscriberBusy:
            pass  # partials are a nicety; the final transcript has priority
        finally:
            self._apply(self.turns.partial_done(text))

    # ------------------------------------------------------------------ utterances out
    async def _utter(self) -> None:
        while True:
            utt, spec, timing = await self._utterances.get()
            try:
                await self._one_utterance(utt, spec, timing)
            except Exception:  # the task must not die: one utterance lost, the next ones heard
                log.exception("utterance failed")
                self._done_one()

    async def _one_utterance(
        self, utt: Utterance, spec: asyncio.Task[Transcript] | None, timing: Timing
    ) -> None:
        transcript: Transcript | None = None
        if spec is not None:
            try:
                transcript = await spec
                timing.speculative = True
            except TranscriberBusy:
                pass  # decoded again below, now that the utterance is final
            except Exception:  # the model's own failure (CTranslate2): try once more below
                log.exception("the speculative decode failed; decoding again")
        if transcript is None:
            try:
                transcript = await self.models.transcriber.transcribe(
                    utt.audio, speech_end_s=utt.voiced_end_s
                )
            except TranscriberBusy:
                await self._emit(
                    PageNotice("Speech recognition is busy; please say that again.", "@error")
                )
                self._done_one()
                return
            except SpeechError as exc:  # a speech service down or gone mid-request
                log.warning("no transcript: %s", exc)
                self._apply(self.turns.dismissed(time.monotonic()))
                await self._emit(
                    PageNotice(
                        "Speech recognition is unavailable right now; please say that again.",
                        "@error",
                    )
                )
                self._done_one()
                return
        timing.transcript = time.monotonic()
        timing.decode_s = transcript.decode_s
        timing.queued_s = transcript.queued_s
        text = self._strip_wake_phrase(transcript.text.strip())
        if not text or (self._wake is not None and _is_stop(text, self.settings.stop_words)):
            if text:  # "stop" / "cancel": a command to the gateway, not words for the agents
                self.stop_speaking()
                await self._emit(FinalTranscript(text, command="stop"))
            self._apply(self.turns.dismissed(time.monotonic()))
            await self._emit(PartialTranscript(""))
            self._done_one()
            return
        if text != transcript.text.strip():
            transcript = replace(
                transcript, text=text, words=transcript.words[-len(text.split()) :]
            )
        clip = float_to_pcm16(utt.audio) if utt.audio.dtype != np.int16 else utt.audio
        start_wall = datetime.now(UTC) - timedelta(
            seconds=time.monotonic() - self._arrival(utt.start)
        )
        event_id = f"de:{uuid.uuid4()}"
        audio_url = None
        if self.settings.parts.audio == "url" and self._audio_url is not None:
            audio_url = self._audio_url(event_id)
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
        self.transcripts.append(text)
        choice = self.choose(text)
        await self._emit(
            _transcript(
                FinalTranscript(
                    text,
                    id=de.id,
                    # A text-only recogniser (a stock Wyoming server) measured no confidence.
                    confidence=round(transcript.confidence, 3) if transcript.detailed else None,
                ),
                choice,
            )
        )
        self.timings.append(timing)
        self._awaiting = timing
        timing.sent = time.monotonic()
        self._apply(self.turns.sent(time.monotonic()))
        await self._send(de, choice)
        self._apply(self.turns.replied(time.monotonic()))
        self._done_one()

    def _done_one(self) -> None:
        self._busy = max(0, self._busy - 1)

    async def _send(self, de: DialogEvent, choice: Choice) -> None:
        self._previous_id = de.id
        await self.conversation.say(
            [
                Event(
                    event_type=EventType.UTTERANCE,
                    to=choice.event_to(),
                    parameters={"dialog_event": de},
                )
            ]
        )

    # ------------------------------------------------------------------ agents' replies
    async def _heard(self, envelope: Envelope) -> None:
        names = {
            c.identification.speaker_uri: c.identification.display_name
            for c in envelope.conversation.conversants or []
        }
        self._names.update(names)
        while len(self._names) > 256:  # bounded: agents come and go in a long session
            self._names.pop(next(iter(self._names)))
        for ev in envelope.events:
            if ev.event_type in TOLD:
                await self._tell(envelope, ev)
                continue
            de = ev.dialog_event
            if ev.event_type is not EventType.UTTERANCE or de is None:
                continue
            if self._awaiting is not None and self._awaiting.reply is None:
                self._awaiting.reply = time.monotonic()
            speaker = names.get(de.speaker_uri, de.speaker_uri)
            self._agent_said = de.text() or self._agent_said
            await self._emit(AgentUtterance.of(de, speaker=speaker, private=ev.is_private))
            if de.id in self._streamed:
                continue  # spoken as it streamed
            if self.speak_replies:
                try:
                    self._replies.put_nowait(de)
                except asyncio.QueueFull:
                    log.warning("reply queue full; not speaking %s", de.id)

    async def _tell(self, envelope: Envelope, event: Event) -> None:
        """A floor event (an agent left, yielded, removed another…): shown with its reason and,
        with voice on, spoken briefly. The floor manager's own (a timeout's uninvite) come as
        notices from the host instead."""
        sender = envelope.sender.speaker_uri
        if sender == self.conversation.floor.manager.speaker_uri:
            return
        me = self.conversation.user.speaker_uri

        def name_of(uri: str | None) -> str:
            return "you" if uri == me else self._names.get(uri or "", "someone")

        text = describe(event, self._names.get(sender, "An agent"), name_of)
        if text is None:
            return
        await self._emit(PageNotice(text, event.reason or "", agent=sender))
        if self.speak_replies:
            spoken = text_event(self.conversation.floor.manager.speaker_uri, text)
            with contextlib.suppress(asyncio.QueueFull):
                self._replies.put_nowait(spoken)

    def _open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        """An in-process agent starts a reply that streams: it is spoken in its turn among
        the replies, each sentence as it comes (None: not speaking, or too many replies)."""
        if not self.speak_replies:
            return None
        stream = ReplyStream(event_id, speaker_uri, speaker)
        try:
            self._replies.put_nowait(stream)
        except asyncio.QueueFull:
            log.warning("reply queue full; not streaming %s", event_id)
            return None
        self._streamed.append(event_id)
        return stream

    async def _noticed(self, notice: Notice) -> None:
        await self._emit(PageNotice(notice.text, notice.reason, agent=notice.agent))
        if notice.reason == "@wait" and self.speak_replies:  # "One moment…": heard too
            spoken = text_event(self.conversation.floor.manager.speaker_uri, notice.text)
            with contextlib.suppress(asyncio.QueueFull):
                self._replies.put_nowait(spoken)

    async def _render(self) -> None:
        while True:
            de = await self._replies.get()
            if isinstance(de, ReplyStream):
                self._stream = de
                speech = self._speak_stream(de)
            else:
                speech = self._speak(de)
            self._speaking = asyncio.get_running_loop().create_task(speech)
            try:
                await self._speaking
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():  # type: ignore[union-attr]
                    raise
            except SpeechError as exc:  # a speech service down or gone mid-reply
                log.warning("could not speak %s: %s", de.id, exc)
                await self._emit(
                    PageNotice(
                        "Speech synthesis is unavailable right now; the reply is shown as text.",
                        "@error",
                    )
                )
            except Exception:  # the task must not die: one reply unspoken, the next ones heard
                log.exception("could not speak %s", de.id)
            finally:
                self._speaking = None
                if isinstance(de, ReplyStream):
                    de.cancel()  # spoken, failed or cut off: nothing more is listened to
                    self._stream = None

    async def _speak(self, de: DialogEvent) -> None:
        voice = self.models.voices.settings_for(de.speaker_uri)
        # The floor's own words ("One moment…", an agent left) are not the answer being timed.
        floor_said = de.speaker_uri == self.conversation.floor.manager.speaker_uri
        timing = None if floor_said else self._awaiting
        # Each sentence is due when what is queued before it has played (earliest first).
        synth = self.models.synthesizer.paced_by(lambda: self.playout.queued_ms / 1000)
        async for chunk in render_dialog_event(
            de, synth, voice, self._fetch, rate=self.settings.out_rate
        ):
            if timing is not None and timing.first_audio is None:
                timing.first_audio = time.monotonic()
                self._awaiting = None
                if self.on_timing is not None:
                    self.on_timing(timing)
            await self.playout.put(chunk)
            await self._until_needed()
        await self.playout.finish()

    async def _speak_stream(self, stream: ReplyStream) -> None:
        """Speak a streamed reply sentence by sentence, showing the page the text so far."""
        voice = self.models.voices.settings_for(stream.speaker_uri)
        synth = self.models.synthesizer.paced_by(lambda: self.playout.queued_ms / 1000)
        first = True
        async for sentence in stream.sentences():
            timing = self._awaiting
            if timing is not None and timing.reply is None:
                timing.reply = time.monotonic()  # the agent's first sentence is complete
            await self._emit(
                AgentUtterance(stream.event_id, stream.speaker_uri, stream.speaker, stream.text)
            )
            rate = self.settings.out_rate
            async for chunk in render_sentence(sentence, synth, voice, rate=rate, first=first):
                if timing is not None and timing.first_audio is None:
                    timing.first_audio = time.monotonic()
                    self._awaiting = None
                    if self.on_timing is not None:
                        self.on_timing(timing)
                await self.playout.put(chunk)
                await self._until_needed()
            first = False
        await self.playout.finish()

    async def _until_needed(self) -> None:
        """Hold back the request for the next sentence until the audio queued before it is
        nearly played (``tts_lookahead_ms``), so a long reply is not synthesized ahead of need
        only to be dropped by a barge-in."""
        if not self.settings.paced:
            return
        while self.playout.queued_ms > self.settings.tts_lookahead_ms:
            await asyncio.sleep(FRAME_MS / 1000)

    # ------------------------------------------------------------------ UI
    def _strip_wake_phrase(self, text: str) -> str:
        """Drop a wake phrase Whisper still heard at the start (the cut is never exact)."""
        if self._wake is None:
            return text
        phrase = words(self._wake.name.split(":")[-1].replace("_", " "))
        said = text.split()
        head = ["".join(words(w)) for w in said[: len(phrase)]]
        if phrase and head == phrase:
            return " ".join(said[len(phrase) :]).lstrip(",.;: ").strip()
        return text

    def _on_playing(self, speaking: bool) -> None:
        self._apply(self.turns.playing(speaking, time.monotonic()))

    async def _emit(self, event: UIEvent) -> None:
        try:
            result = self._on_event(event)
            if asyncio.iscoroutine(result):
                await result
        except Exception:  # the caller's callback: its bug must not stop the session
            log.exception("UI event listener failed")

    def _emit_soon(self, event: UIEvent) -> None:
        self._emit_task(self._emit(event))

    def _emit_task(self, coro: Awaitable[None]) -> None:
        # Kept referenced until done: the loop holds only weak references to tasks.
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
