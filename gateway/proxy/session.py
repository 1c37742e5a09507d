"""The person's proxy for one voice session: speech in, utterances out, agents' replies spoken.

Data path, each part a unit of its own with one job, composed here::

    feed(16 kHz PCM) → bounded input queue → listening.py: VAD → turn_taker.py ─┬─ partials
                                                   (wake word, decodes, end-of-turn signals) │
                     uttering.py: STT → dialog event (utterance.py) → floor ◄── finished turn ┘
    floor delivers to the person → speaking.py: shown + render queue → TTS/SSML/audio → playout

The parts talk only through typed events (:mod:`gateway.proxy.events`) sent to one sink, this
session: :meth:`VoiceSession.emit` routes each kind to its handler, so every path between the
parts is in one place; what is for whoever shows the session goes on to ``on_event`` (the web
server maps it to page messages). The session owns the turn-taker (turn_taker.py: listening
drives it with the audio, the other parts' events tell it the rest), the services every part
uses (one :class:`~gateway.proxy.services.Services`: the clock, media fetching, clip URLs, wake
detectors on the network), the input queue and its one driver loop, which reads the clock once
per input item and hands that ``now`` to listening. The floor host reaches the session through
one :class:`~gateway.floor.outlet.PersonOutlet`.

Latency: the final decode starts speculatively when the person pauses (``speculate_ms``, 64 ms of
silence; ``idle_speculate_ms``, 32 ms, while no one else needs the model), and the end-of-turn
signals (prosody) are read from the audio alongside. If the transcript reads as a finished sentence
and the voice sounds finished, the utterance ends as soon as the pause reaches ``pause_ms``
(200 ms); the more the signals doubt it, the longer the wait (``SessionSettings.turn_rule``, at
most 2 s), so people are not cut off mid-sentence. Starting the decode before the pause is long
enough to act on hides its time (~170 ms) behind the pause.

Barge-in: while an agent is being played, ``barge_in_ms`` of voiced audio pauses playback at
once; fast decodes of the overlap then decide (gateway/proxy/overlap.py): a backchannel or a
noise resumes it, an interruption stops it (queued audio dropped, synthesis cancelled) and the
transport is told to flush its own buffer. The echo guard (gateway/audio/echo.py) keeps the
agent's own voice, played back into a microphone, from counting at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, tzinfo
from typing import TYPE_CHECKING, Literal

import numpy as np

from gateway.agents.errors import AgentError
from gateway.agents.streaming import ReplyStream
from gateway.audio import FRAME_MS
from gateway.audio.echo import EchoGuard
from gateway.audio.playout import Playout
from gateway.floor import Floor
from gateway.floor.host import FloorHost
from gateway.floor.notices import Notice
from gateway.floor.opening import Greetings
from gateway.ofp import Envelope, Event, EventType, To
from gateway.proxy.addressing import Addressing, Choice
from gateway.proxy.events import (
    AgentPlaying,
    ContinuationDone,
    Discovery,
    EventSink,
    FirstAudio,
    FloorChanged,
    Flushed,
    FoundAgent,
    OverlapJudged,
    Overlapped,
    PauseAgent,
    ProxyEvent,
    ResumeAgent,
    SessionEvent,
    StopAgent,
    Told,
    TurnContinued,
    TurnDismissed,
    TurnEnded,
    UtteranceAnswered,
    UtteranceSent,
)
from gateway.proxy.listening import Listener
from gateway.proxy.models import VoiceModels
from gateway.proxy.services import Services
from gateway.proxy.settings import SessionSettings, read_once, without_feedback
from gateway.proxy.speaking import Speaker
from gateway.proxy.timing import Timing
from gateway.proxy.turn_taker import TurnTaker
from gateway.proxy.uttering import Utterer
from gateway.records.errors import RecordsError
from gateway.render.decode import Fetch
from gateway.voice.semantic import SemanticSignal

if TYPE_CHECKING:
    from gateway.records.base import Recorder

__all__ = ["VoiceSession"]

log = logging.getLogger(__name__)


class _Around:
    """What listening asks of the rest of the session
    (:class:`gateway.proxy.listening.Surroundings`), answered from the other parts."""

    def __init__(self, session: VoiceSession) -> None:
        self._session = session

    @property
    def model_idle(self) -> bool:
        return self._session.models.idle_for(self._session)

    @property
    def agent_audible(self) -> bool:
        return self._session.speaker.audible

    @property
    def busy(self) -> bool:
        return self._session.utterer.busy > 0

    @property
    def agent_said(self) -> str | None:
        return self._session.speaker.agent_said

    @property
    def agent_heard(self) -> str:
        return self._session.speaker.heard_lately()

    @property
    def semantic(self) -> SemanticSignal | None:
        return self._session.models.semantic


class _Outlet:
    """What the floor host tells the person (:class:`gateway.floor.outlet.PersonOutlet`),
    taken by the session's parts: speaking shows and speaks deliveries, notices and streams; the
    floor's changes go out as :class:`FloorChanged`."""

    def __init__(self, session: VoiceSession) -> None:
        self._session = session

    async def delivered(self, envelope: Envelope) -> None:
        await self._session.speaker.heard(envelope)

    async def notified(self, notice: Notice) -> None:
        await self._session.speaker.noticed(notice)

    def floor_changed(self, floor: Floor) -> None:
        self._session._emit_soon(FloorChanged.of(floor))

    def person_said(self, envelope: Envelope) -> None:
        """Nothing: the session shows what it sent as its own ``Transcribed``."""

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        return self._session.speaker.open_stream(event_id, speaker_uri, speaker)


class VoiceSession:
    """One person's voice, attached to a :class:`FloorHost`.

    ``on_event`` receives the session's events (:mod:`gateway.proxy.events`); the transport
    plays :attr:`playout`. ``fetch`` fetches media URLs under the address policy.
    ``audio_url(event_id)`` is where the gateway serves a clip, for the ``url`` audio mode.
    ``clock`` is the one every part reads (a test's may be fake). The session bundles these
    into one :class:`~gateway.proxy.services.Services` for its parts. ``on_timing`` gets each
    turn's :class:`Timing` once its reply starts to play (the server's metrics and the page).
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
        clock: Callable[[], float] = time.monotonic,
        on_timing: Callable[[Timing], None] | None = None,
    ) -> None:
        self.settings = s = settings or SessionSettings()
        if models.second_reader is None:
            self.settings = s = read_once(s)
        if models.feedback is None:
            self.settings = s = without_feedback(s)
        self.clock = clock
        #: What the parts use from outside the session, built once: they are handed this and
        #: the session as their event sink, and no functions.
        self.services = Services(
            clock=clock, fetcher=fetch, clips=audio_url, wakes=models.wake_factory
        )
        #: Called with each utterance's :class:`Timing` once its reply starts to play (given at
        #: construction, like ``on_event``: nothing rewires a session after it is built).
        self._on_timing = on_timing
        self.conversation = conversation
        self._recorder = recorder
        self.models = models
        self._on_event = on_event
        self._background: set[asyncio.Future[None]] = set()
        self.dropped_input = 0
        self._input: asyncio.Queue[tuple[np.ndarray, float]] = asyncio.Queue(
            max(1, s.max_input_ms // FRAME_MS)
        )
        #: What the agents played, to refuse their echo in the microphone (None: off).
        self.echo = EchoGuard(s.out_rate) if s.echo_guard else None
        #: The rules of turn-taking: listening drives them with the audio, and the other parts'
        #: events (sent, answered, dismissed) reach them through :meth:`emit`.
        self.turns = TurnTaker(s)
        self.speaker = Speaker(
            s,
            synthesizer=models.synthesizer,
            voices=models.voices,
            user_uri=conversation.user.speaker_uri,
            manager_uri=conversation.floor.manager.speaker_uri,
            sink=self,
            services=self.services,
            echo=self.echo,
        )
        self.listener = Listener(
            s,
            turns=self.turns,
            vad=models.vad.stream(),
            transcriber=models.transcriber,
            second_reader=models.second_reader,
            feedback_reader=models.feedback,
            signals=models.turn_signals,
            sink=self,
            around=_Around(self),
            services=self.services,
            echo=self.echo,
        )
        self.utterer = Utterer(
            s,
            conversation=conversation,
            transcriber=models.transcriber,
            sink=self,
            services=self.services,
            recorder=recorder,
        )
        models.sessions.add(self)
        self.set_wake(s.wake)

        if not models.transcriber.detailed:
            # A stock Wyoming server (docs/speech-services.md): said once, on the page.
            self._emit_soon(
                Told(
                    "Speech recognition here gives text only: no word timings, confidence or "
                    "live captions reach the agents or this page.",
                    "@speech-service",
                )
            )
        conversation.attach(_Outlet(self))
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._listen(), name="session-listen"),
            loop.create_task(self.utterer.run(), name="session-utter"),
            loop.create_task(self.speaker.run(), name="session-render"),
            loop.create_task(self._watch_gaps(), name="session-gaps"),
        ]

    # ------------------------------------------------------------------ the parts' state
    @property
    def playout(self) -> Playout:
        """The agents' audio for the transport to play."""
        return self.speaker.playout

    @property
    def speak_replies(self) -> bool:
        """False mutes rendering (``talk`` keeps greetings out of the reply it measures)."""
        return self.speaker.speak_replies

    @speak_replies.setter
    def speak_replies(self, on: bool) -> None:
        self.speaker.speak_replies = on

    @property
    def time_zone(self) -> tzinfo | None:
        """The person's zone: their utterances are stamped in it (None: the machine's clock in
        UTC), so agents read the offset where the person is."""
        return self.utterer.time_zone

    @time_zone.setter
    def time_zone(self, zone: tzinfo | None) -> None:
        self.utterer.time_zone = zone

    @property
    def timings(self) -> deque[Timing]:
        """The utterances' timings, newest last (bounded)."""
        return self.utterer.timings

    @property
    def transcripts(self) -> deque[str]:
        """What the person said, newest last (bounded: a session may last for hours)."""
        return self.utterer.transcripts

    @property
    def addressing(self) -> Addressing:
        """Whom the person's utterances are for (gateway/proxy/addressing.py)."""
        return self.utterer.addressing

    @property
    def wake_name(self) -> str:
        """The wake word in use (``off``: none)."""
        return self.listener.wake_name

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

    # ------------------------------------------------------------------ input from the transport
    def feed(self, pcm: np.ndarray) -> None:
        """Hand over 16 kHz mono int16 audio (any length). Never blocks: when the session is
        behind by ``max_input_ms``, the oldest audio is dropped."""
        item = (pcm, self.clock())
        try:
            self._input.put_nowait(item)
        except asyncio.QueueFull:
            with contextlib.suppress(asyncio.QueueEmpty):
                self._input.get_nowait()
            self.dropped_input += 1
            self._input.put_nowait(item)

    async def _listen(self) -> None:
        while True:
            pcm, arrived = await self._input.get()
            await self.listener.hear(pcm, arrived, self.clock())  # one `now` per item

    async def _watch_gaps(self) -> None:
        """Tell listening the time while a turn is under way and no audio is waiting (a
        client that stops sending must not hold its turn open: ``TurnRule.gap_ms``)."""
        period = self.turns.rule.gap_ms / 4000
        while True:
            await asyncio.sleep(period)
            if self._input.empty():
                self.listener.no_audio(self.clock())

    # ------------------------------------------------------------------ the page's requests
    async def say_text(self, text: str, *, to: str | None = None, private: bool = False) -> None:
        """A typed utterance (the page's text box), for ``to`` (an agent's speaker URI; None:
        chosen as for speech). :class:`LookupError` when ``to`` is not an agent here."""
        text = text.strip()
        if text:
            await self.utterer.say_text(text, to=to, private=private)

    def choose(self, text: str, *, to: str | None = None, private: bool = False) -> Choice:
        """Whom ``text`` is for, among the agents on the floor now."""
        return self.utterer.choose(text, to=to, private=private)

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

    async def open_with(self, urls: Sequence[str], *, timeout: float = 10.0) -> None:
        """Invite the agents a conversation opens with; with several, the person hears one
        welcome naming them once they have all greeted (or those that did, ``timeout`` s after
        the invites; the person can speak meanwhile), not each greeting
        (gateway/floor/opening.py)."""
        self.speaker.greetings = Greetings(len(urls))
        for url in urls:
            await self.invite(url)
        self._tasks.append(
            asyncio.get_running_loop().create_task(self._welcome(timeout), name="session-welcome")
        )

    async def _welcome(self, timeout: float) -> None:
        await self.conversation.wait_idle(timeout)
        welcome = self.speaker.greetings.opened()  # None: said already, all having greeted
        if welcome is not None:
            await self.speaker.announce(welcome, Greetings.WELCOME)

    async def invite(self, url: str) -> None:
        """Invite an agent by service URL (``builtin:NAME`` or https), by name once its
        manifest is known (asked for first, for at most ``Limits.manifest_timeout_s``)."""
        known = await self.conversation.learn_manifest(url)
        # By the serviceUrl the agent calls itself (agents compare it as a plain string).
        to = known.service_url if known is not None else url
        await self.conversation.say([Event(event_type=EventType.INVITE, to=To(service_url=to))])

    async def discover(self, url: str) -> Discovery:
        """What the agent at ``url`` offers, for the page to show before the person invites:
        its manifest(s) and, from a discovery agent such as the concierge, its
        recommendations."""
        try:
            found = await self.conversation.discover(url)
        except (AgentError, TimeoutError) as err:
            return Discovery(url, error=str(err) or "it did not answer in time")
        return Discovery(
            url,
            tuple(
                FoundAgent(
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
                    to=To(speaker_uri=speaker_uri),
                    reason="the person removed this agent",
                )
            ]
        )

    def set_ptt(self, down: bool) -> None:
        """Push-to-talk: speech counts only while held; letting go ends the utterance."""
        self.listener.set_ptt(down, self.clock())

    def set_wake(self, name: str) -> None:
        """Choose the wake word (or ``off``); the session falls asleep until it is heard."""
        self.listener.set_wake(name, self.clock())

    def stop_speaking(self) -> None:
        """Barge-in: stop the agent being played and drop what is queued, here and in the
        transport (which gets a :class:`~gateway.proxy.events.Flushed` event)."""
        if self.speaker.stop():
            self._emit_soon(Flushed())

    def _pause_speaking(self) -> None:
        """Speech over the agent: it goes quiet at once, keeping its place, while the overlap
        is decided."""
        self.speaker.pause()
        reply, played = self.speaker.playing_now()
        self._emit_soon(Overlapped("paused", reply=reply, played_ms=played))

    def _resume_speaking(self, heard: str | None) -> None:
        """The agent goes on; before the overlap is decided (``heard``: its words so far), the
        page is told at once, as the page holds its own audio while paused."""
        self.speaker.resume()
        if heard is not None:
            reply, played = self.speaker.playing_now()
            self._emit_soon(Overlapped("resumed", heard=heard, reply=reply, played_ms=played))

    def _continued(self) -> None:
        """The person went on with the turn just ended: its answer is not theirs to hear (the
        whole request follows), so what plays of it stops and what comes of it is dropped."""
        self.speaker.drop_answers = True
        self.stop_speaking()

    def _overlap_decided(self, judged: OverlapJudged) -> None:
        decision, decode_ms = judged.decision, judged.decode_ms
        reply, played = self.speaker.playing_now()
        outcome = {"echo": "ignored", "interruption": "stopped"}.get(decision.kind, "resumed")
        said = self.speaker.heard_text(reply, played) if outcome == "stopped" else None
        # scripts/bench_interruptions.py reads this line: each decision, its signal, its cost.
        log.info(
            "overlap: %s by %s on %r after %d ms of voice, %d ms after it began, decodes %.0f ms%s",
            decision.kind,
            decision.why,
            decision.text,
            decision.voiced_ms,
            decision.decided_ms,
            decode_ms,
            "; joined" if decision.joined else "",
        )
        self._emit_soon(Overlapped(outcome, decision.kind, decision.text, reply, played, said))
        heard: dict[str, object] = {"outcome": "stopped" if outcome == "stopped" else decision.kind}
        heard |= {"reply": reply, "playedMs": played}
        heard |= {"said": said or ""} if outcome == "stopped" else {"text": decision.text}
        self._record_heard(heard)

    def _record_heard(self, data: dict[str, object]) -> None:
        """What the person heard, when it was not what was sent, in the conversation's record."""
        if self._recorder is None:
            return
        try:
            self._recorder.heard(self.conversation.id, data=data, at=datetime.now(UTC))
        except RecordsError:  # records must never take the conversation down
            log.exception("could not record what was heard")

    async def wait_quiet(self, timeout: float) -> bool:
        """Wait until no utterance is being handled, the conversation is idle and nothing is
        playing; False if ``timeout`` s passed first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            await asyncio.sleep(0.05)
            if (
                self._input.empty()
                and self.utterer.idle
                and self.speaker.quiet
                and not self.turns.active
                and await self.conversation.wait_idle(max(0.0, deadline - time.monotonic()))
            ):
                await asyncio.sleep(0.05)
                if self.speaker.quiet:
                    return True
        return False

    async def close(self) -> None:
        """Stop the session's tasks; the conversation lives on (a reload may rejoin it)."""
        for t in self._tasks:
            t.cancel()
        self.listener.close()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self.speaker.close()
        self.models.sessions.discard(self)

    # ------------------------------------------------------------------ wiring
    def emit(self, event: SessionEvent) -> None:
        """The parts' one sink (:class:`gateway.proxy.events.Sink`): every path between them,
        in one place. Handled at once, in the caller's step; what is for whoever shows the
        session goes out soon."""
        match event:
            case TurnEnded():  # listening → uttering
                self.utterer.take(event)
            case StopAgent():  # a barge-in, a spoken "stop", a typed utterance → speaking
                self.stop_speaking()
            case PauseAgent():  # listening → speaking
                self._pause_speaking()
            case ResumeAgent(heard=heard):  # listening → speaking
                self._resume_speaking(heard)
            case OverlapJudged():  # listening → speaking, the page, the record
                self._overlap_decided(event)
            case TurnContinued():  # listening → speaking
                self._continued()
            case TurnDismissed():  # uttering → the turn-taker
                now = self.clock()
                self.listener.apply(self.turns.dismissed(now), now)
            case UtteranceSent():  # uttering → speaking and the turn-taker
                self.speaker.awaiting = event.timing
                if event.timing.continued:  # the whole request is out: its answers are heard
                    self.speaker.drop_answers = False
                now = self.clock()
                self.listener.apply(self.turns.sent(now), now)
            case UtteranceAnswered():  # uttering → the turn-taker
                now = self.clock()
                self.listener.apply(self.turns.replied(now), now)
            case ContinuationDone():  # uttering → speaking: agents are heard again
                self.speaker.drop_answers = False
            case FirstAudio():  # speaking → whoever times the turns
                if self._on_timing is not None:
                    self._on_timing(event.timing)
            case AgentPlaying():  # speaking → listening (barge-in needs it)
                self.listener.playing(event.speaking, self.clock())
            case _:  # out, to whoever shows the session
                # Only ProxyEvents are left here: a PartEvent with no case above fails mypy.
                self._emit_soon(event)

    async def publish(self, event: ProxyEvent) -> None:
        """Send ``event`` to ``on_event`` and wait for it (its failure is logged: the caller's
        bug must not stop the session)."""
        await self._emit(event)

    async def _emit(self, event: ProxyEvent) -> None:
        try:
            result = self._on_event(event)
            if asyncio.iscoroutine(result):
                await result
        except Exception:  # the caller's callback: its bug must not stop the session
            log.exception("event listener failed")

    def _emit_soon(self, event: ProxyEvent) -> None:
        self._emit_task(self._emit(event))

    def _emit_task(self, coro: Awaitable[None]) -> None:
        # Kept referenced until done: the loop holds only weak references to tasks.
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
