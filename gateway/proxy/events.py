"""What the person's proxy tells whoever shows the session (typed, in the proxy's own terms).

The parts of a session (listening, uttering, speaking) emit these; the web server maps them to
the page's wire messages (gateway/server/page_events.py), ``talk`` ignores them, and tests
assert on them. The proxy knows nothing of the page's protocol: an arrow from here to
``gateway/server/`` would run from a lower layer up to the web page's wire format.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gateway.floor import Floor
from gateway.ofp import DialogEvent


@dataclass(frozen=True)
class StateShown:
    """The session's state changed: ``idle`` (asleep), ``listening``, ``hearing``,
    ``thinking`` or ``speaking`` (:data:`gateway.proxy.turns.State`)."""

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
    ``paused`` at once, then ``resumed`` (a ``backchannel`` or a ``noise``: no turn) or
    ``stopped`` (an ``interruption``: the words are the next turn); ``ignored`` when the
    voice was the agent's own ``echo``. ``heard``: the words that decided it; ``played_ms``:
    how much of the reply had played; ``said``: its words the person heard by then (stopped:
    what of the reply reached them)."""

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
