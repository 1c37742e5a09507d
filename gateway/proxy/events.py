"""The typed events of a person's proxy: what it tells whoever shows the session, and what its
parts tell each other.

The parts of a session (listening, uttering, speaking) emit both kinds to one :class:`Sink`, the
session (gateway/proxy/session.py, ``VoiceSession.emit``), which routes each kind to its handler
in one place, as pipecat's frames go upstream and downstream:

- :data:`ProxyEvent` goes out: the web server maps it to the page's wire messages
  (gateway/server/page_events.py), ``talk`` ignores it, and tests assert on it. The proxy knows
  nothing of the page's protocol: an arrow from here to ``gateway/server/`` would run from a
  lower layer up to the web page's wire format.
- :data:`PartEvent` stays inside the session: a finished turn for uttering, a barge-in for
  speaking, an utterance sent for the turn-taker…
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from gateway.floor import Floor
from gateway.ofp import DialogEvent

if TYPE_CHECKING:
    from gateway.proxy.overlap import OverlapDecision
    from gateway.proxy.timing import Timing
    from gateway.voice.endpoint import Utterance
    from gateway.voice.stt import Transcript


@dataclass(frozen=True)
class StateShown:
    """The session's state changed: ``idle`` (asleep), ``listening``, ``hearing``,
    ``thinking`` or ``speaking`` (:data:`gateway.proxy.turn_taker.State`)."""

    state: str


@dataclass(frozen=True)
class PartialText:
    """The live transcript while the person speaks (empty: cleared)."""

    text: str


@dataclass(frozen=True)
class Transcribed:
    """The person's final utterance as sent to the floor (spoken or ``typed``), or a spoken
    command to the gateway (``command``, e.g. ``"stop"``: not sent, no ``id``). ``to``/
    ``to_name``: the agent it went to (None: the whole room), ``why`` that one, ``private``
    whether only that agent received it."""

    text: str
    id: str | None = None
    #: Speech recognition's confidence (spoken utterances only; None: none was measured).
    confidence: float | None = None
    typed: bool | None = None
    command: str | None = None
    to: str | None = None
    to_name: str | None = None
    why: str | None = None
    private: bool | None = None
    #: The id of the person's utterance this one takes the place of: they went on speaking
    #: before its answer was heard, and this is the whole request, transcribed as one.
    replaces: str | None = None


@dataclass(frozen=True)
class AgentSaid:
    """An agent's utterance reached the person: a whole ``dialog_event``, or the text so far
    of a reply still streaming (``dialog_event`` None)."""

    id: str
    speaker_uri: str
    speaker: str
    text: str
    private: bool = False
    dialog_event: DialogEvent | None = None


@dataclass(frozen=True)
class Seat:
    """One conversant on the floor."""

    speaker_uri: str
    service_url: str
    name: str
    role: str | None = None


@dataclass(frozen=True)
class FloorChanged:
    """The floor after a change: who is on it, who holds it, the convener. A snapshot (the
    floor itself goes on changing before the event is shown)."""

    conversants: tuple[Seat, ...]
    floor_granted: tuple[str, ...] = ()
    convener: str | None = None

    @classmethod
    def of(cls, floor: Floor) -> FloorChanged:
        """The floor as it is now."""
        return cls(
            tuple(
                Seat(i.speaker_uri, i.service_url, i.display_name, i.role)
                for i in floor.conversants
            ),
            floor_granted=tuple(floor.floor_granted),
            convener=floor.convener,
        )


@dataclass(frozen=True)
class Flushed:
    """Barge-in: the transport drops the agent audio it still buffers."""


@dataclass(frozen=True)
class Overlapped:
    """The person's voice over an agent's reply (``reply``: its event id, None: not known):
    ``paused`` at once, then ``resumed`` (a ``backchannel`` or a ``noise``: no turn; with no
    ``why``, before the decision: the words so far were backchannels) or ``stopped`` (an
    ``interruption``: the words are the next turn); ``ignored`` when the voice was the agent's
    own ``echo``. ``heard``: the words that decided it; ``played_ms``: how much of the reply had
    played; ``said``: its words the person heard by then (stopped: what of the reply reached
    them)."""

    outcome: str
    why: str | None = None
    heard: str = ""
    reply: str | None = None
    played_ms: int | None = None
    said: str | None = None


@dataclass(frozen=True)
class Told:
    """Something the gateway itself tells the person (an agent left or timed out, speech
    recognition is busy…); ``reason`` as the floor gives it (``@error``, ``@wait``…)."""

    text: str
    reason: str
    agent: str | None = None


@dataclass(frozen=True)
class WakeWordHeard:
    """The wake word was heard (``model``: the detector's name)."""

    model: str


ProxyEvent = (
    StateShown
    | PartialText
    | Transcribed
    | AgentSaid
    | FloorChanged
    | Flushed
    | Overlapped
    | Told
    | WakeWordHeard
)
#: Where a session's events go (a coroutine function or a plain one).
EventSink = Callable[[ProxyEvent], Awaitable[None] | None]


# ---------------------------------------------------------------------- between the parts
@dataclass(frozen=True)
class TurnEnded:
    """Listening → uttering: the person's turn is over. ``decode``: the speculative decode of
    exactly its audio (None: none ran); ``started``: when its first chunk arrived (on the
    session's clock); ``wake``: the wake word in use (its phrase is dropped from the start of
    the transcript; None: none)."""

    utterance: Utterance
    decode: asyncio.Task[Transcript] | None
    timing: Timing
    started: float
    wake: str | None = None


@dataclass(frozen=True)
class StopAgent:
    """→ speaking: stop the agent being played and drop what is queued (a barge-in, a spoken
    "stop", a typed utterance)."""


@dataclass(frozen=True)
class PauseAgent:
    """Listening → speaking: speech over the agent; it goes quiet at once, keeping its place,
    while the overlap is decided."""


@dataclass(frozen=True)
class ResumeAgent:
    """Listening → speaking: the speech over the agent was no interruption; it goes on.
    ``heard`` (not None): it goes on before the decision, on these words so far (all
    backchannels); the decision follows."""

    heard: str | None = None


@dataclass(frozen=True)
class OverlapJudged:
    """Listening → the session: what the speech over an agent was (``decode_ms``: the time its
    decodes took, for the decision's log line)."""

    decision: OverlapDecision
    decode_ms: float = 0.0


@dataclass(frozen=True)
class TurnContinued:
    """Listening → speaking: the person went on with the turn just ended; its answers are not
    theirs to hear (the whole request follows)."""


@dataclass(frozen=True)
class TurnDismissed:
    """Uttering → the turn-taker: the turn came to nothing (no words, a command, no speech
    recognition)."""


@dataclass(frozen=True)
class UtteranceSent:
    """Uttering → speaking and the turn-taker: the utterance goes to the floor; its reply is
    now awaited (``timing`` is filled in as it comes)."""

    timing: Timing


@dataclass(frozen=True)
class UtteranceAnswered:
    """Uttering → the turn-taker: the floor has handled the utterance."""


@dataclass(frozen=True)
class ContinuationDone:
    """Uttering → speaking: the continued turn was sent, or came to nothing: agents are heard
    again."""


@dataclass(frozen=True)
class FirstAudio:
    """Speaking → the session: the reply to the utterance ``timing`` times started to play (its
    timing is complete)."""

    timing: Timing


@dataclass(frozen=True)
class AgentPlaying:
    """Speaking → listening: agent audio started (True) or stopped playing (barge-in needs
    it)."""

    speaking: bool


PartEvent = (
    TurnEnded
    | StopAgent
    | PauseAgent
    | ResumeAgent
    | OverlapJudged
    | TurnContinued
    | TurnDismissed
    | UtteranceSent
    | UtteranceAnswered
    | ContinuationDone
    | FirstAudio
    | AgentPlaying
)
SessionEvent = ProxyEvent | PartEvent


class Sink(Protocol):
    """Where a session's parts send their events: the session, which routes each kind to its
    handler (``VoiceSession.emit``)."""

    def emit(self, event: SessionEvent) -> None:
        """Handle ``event`` now (between the parts), or send it out soon (a
        :data:`ProxyEvent`)."""

    async def publish(self, event: ProxyEvent) -> None:
        """Send ``event`` out and wait until whoever shows the session has taken it."""


@dataclass(frozen=True)
class FoundAgent:
    """One manifest an agent published, as :meth:`VoiceSession.discover` found it."""

    service_url: str
    speaker_uri: str
    name: str
    synopsis: str = ""
    keyphrases: tuple[str, ...] = ()
    score: float | None = None
    recommended: bool = False


@dataclass(frozen=True)
class Discovery:
    """What the agent at ``url`` published (``error``: why nothing)."""

    url: str
    found: tuple[FoundAgent, ...] = ()
    error: str | None = None
