"""The page ↔ gateway messages on ``/ws``: their one definition.

Every JSON text frame on the WebSocket is one of the frozen dataclasses below, named by its
``type``. :data:`TO_GATEWAY` are what a client (the page, ``scripts/load.py``, the tests' ``Page``)
sends; :data:`FROM_GATEWAY` what the gateway sends back. ``docs/client-protocol.md`` explains them;
``web/protocol.js`` is generated from this module (``python -m gateway.server.messages --js``) and a
test keeps the two in step.

How they read and write as JSON (camelCase on the wire, :func:`optional` fields, strict types)
is :mod:`gateway.server.message_codec`'s job; the page's copy of the names is rendered by
:mod:`gateway.server.protocol_js`. Only :class:`Hello` is read leniently (see there).

Frozen dataclasses rather than pydantic models: these are built on the audio path (a ``state`` or
``partial`` message per turn change) and need no coercion, aliases or schema export, so plain
classes with one small reader cost less and keep this module free of a validation framework.
"""

from __future__ import annotations

import argparse
import enum
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from gateway.server.message_codec import Message, construct, optional
from gateway.server.protocol_js import render_js

if TYPE_CHECKING:
    from gateway.ofp import DialogEvent

#: Feature MIME types shown as an agent's html (beside a feature named ``html``).
HTML_TYPES = ("text/html", "application/xhtml+xml")


class SessionState(enum.StrEnum):
    """What a voice session is doing, as the page shows it (``state`` messages)."""

    #: Waiting for the wake word: audio reaches nothing but the detector.
    IDLE = "idle"
    LISTENING = "listening"
    #: The person is speaking (an utterance is under way).
    HEARING = "hearing"
    #: The utterance was sent; waiting for the agents.
    THINKING = "thinking"
    #: An agent's reply is being played.
    SPEAKING = "speaking"


# ---------------------------------------------------------------------------- page → gateway
#: How a page's audio travels: WebRTC, PCM on the WebSocket, or none (text only).
Transport = Literal["webrtc", "ws", "none"]


@dataclass(frozen=True)
class Hello(Message):
    """The first message of every connection.

    Lenient: a hello is never refused for its fields. A field that does not fit is read as absent,
    and the gateway decides (a new conversation, the server's wake word, text only), so an older
    or odd client still gets a ``welcome``.
    """

    TYPE = "hello"
    LENIENT = True

    transport: Transport = "none"
    conversation_id: str | None = optional()
    token: str | None = optional()
    mode: Literal["ptt", "handsfree"] | None = optional()
    wake: str | None = optional()
    #: The page's IANA time zone ("Europe/Paris"): the person's utterances are stamped in it, so
    #: agents tell the time where the person is. Unknown or absent: UTC.
    time_zone: str | None = optional()


@dataclass(frozen=True)
class SayText(Message):
    """A typed utterance."""

    TYPE = "text"
    text: str = ""
    #: The agent (a conversant's speakerUri) this utterance is for; absent: the gateway chooses
    #: (a name said in it, the page's ``address`` choice, the agent best placed to answer).
    to: str | None = optional()
    #: With ``to``: only that agent receives it (OFP §1.8 ``private``).
    private: bool | None = optional()


@dataclass(frozen=True)
class Address(Message):
    """Whom the person's next utterances, spoken or typed, are for (the page's choice).

    ``to`` a conversant's speakerUri, or null to let the gateway choose again; ``private``: only
    that agent receives them; ``sticky`` (when given): whether an utterance that names nobody
    goes to the agent last named."""

    TYPE = "address"
    to: str | None = None
    private: bool = False
    sticky: bool | None = optional()


@dataclass(frozen=True)
class Invite(Message):
    """Invite an agent by service URL (``builtin:NAME`` for a built-in)."""

    TYPE = "invite"
    url: str = ""


@dataclass(frozen=True)
class Discover(Message):
    """Ask the agent at ``url`` for its manifests (``getManifests``, scope ``all``) before
    inviting it: answered with ``manifests``."""

    TYPE = "discover"
    url: str = ""


@dataclass(frozen=True)
class Uninvite(Message):
    """Remove an agent from the conversation."""

    TYPE = "uninvite"
    speaker_uri: str = ""


@dataclass(frozen=True)
class SetMode(Message):
    """Push-to-talk or hands-free."""

    TYPE = "mode"
    mode: Literal["ptt", "handsfree"]


@dataclass(frozen=True)
class PushToTalk(Message):
    """The push-to-talk button pressed (``down``) or released."""

    TYPE = "ptt"
    down: bool = False


@dataclass(frozen=True)
class SetWake(Message):
    """Change the wake word (a name, ``phrase:TEXT`` or ``off``)."""

    TYPE = "wake"
    wake: str


@dataclass(frozen=True)
class StopSpeaking(Message):
    """Stop the agent that is speaking."""

    TYPE = "stop"


@dataclass(frozen=True)
class Ping(Message):
    """Answered with :class:`Pong` (the page's heartbeat)."""

    TYPE = "ping"


@dataclass(frozen=True)
class SdpOffer(Message):
    """A WebRTC offer (ICE gathered, not trickled); only on a ``webrtc`` connection."""

    TYPE = "offer"
    sdp: str


# ---------------------------------------------------------------------------- gateway → page
@dataclass(frozen=True)
class WelcomeUser:
    """The person, as the conversation knows them."""

    speaker_uri: str
    name: str


@dataclass(frozen=True)
class AudioRates:
    """Sample rates of the WebSocket PCM: what the client sends, what it is sent."""

    in_rate: int
    out_rate: int


@dataclass(frozen=True)
class StateUpdate(Message):
    """The session's state changed."""

    TYPE = "state"
    state: SessionState


@dataclass(frozen=True)
class PartialTranscript(Message):
    """The live transcript while the person speaks (empty: cleared)."""

    TYPE = "partial"
    text: str


@dataclass(frozen=True)
class FinalTranscript(Message):
    """The person's final utterance as sent to the floor, or a spoken command (``stop``)."""

    TYPE = "transcript"
    text: str
    id: str | None = optional()
    #: Speech recognition's confidence (spoken utterances only).
    confidence: float | None = optional()
    #: True for typed text (sent only then).
    typed: bool | None = optional()
    #: A command to the gateway, not words for the agents (``"stop"``); it has no id.
    command: str | None = optional()
    #: Whom it was sent to (the agent's speakerUri and name; absent: the whole room), how that
    #: was decided (``why``: "you named Clock", "best placed to answer: its keyphrase …"), and
    #: whether only that agent received it.
    to: str | None = optional()
    to_name: str | None = optional()
    why: str | None = optional()
    private: bool | None = optional()
    #: The id of the transcript this one takes the place of (the person went on speaking
    #: before its answer was heard: this is the whole request): show this one instead.
    replaces: str | None = optional()


@dataclass(frozen=True)
class AgentUtterance(Message):
    """An agent's utterance; ``html`` is the agent's, unsanitised (the page sanitises it)."""

    TYPE = "utterance"
    id: str
    speaker_uri: str
    speaker: str
    text: str
    html: tuple[str, ...] = ()
    private: bool = False
    #: Why ``html`` was left out (over the bounds of server/guard.py): show ``text`` instead.
    html_omitted: str | None = optional()

    @classmethod
    def of(cls, de: DialogEvent, *, speaker: str, private: bool) -> AgentUtterance:
        """An agent's dialog event as the page shows it: its text, and its html features."""
        html = tuple(
            str(t.value)
            for name, f in de.features.items()
            if f.mime_type in HTML_TYPES or name == "html"
            for t in f.tokens
            if isinstance(t.value, str)
        )
        return cls(de.id, de.speaker_uri, speaker, de.text(), html=html, private=private)


@dataclass(frozen=True)
class FloorConversant:
    """One conversant on the floor."""

    speaker_uri: str
    service_url: str
    name: str
    role: str | None = None


@dataclass(frozen=True)
class FloorUpdate(Message):
    """The floor after any change."""

    TYPE = "floor"
    conversants: tuple[FloorConversant, ...]
    floor_granted: tuple[str, ...] = ()
    convener: str | None = None


@dataclass(frozen=True)
class FoundManifest:
    """One manifest an agent published: who it is, what it does, and whether it was recommended
    (a discovery agent's pick, with its ``score``) or is the agent itself."""

    service_url: str
    speaker_uri: str
    name: str
    synopsis: str = ""
    keyphrases: tuple[str, ...] = ()
    score: float | None = None
    recommended: bool = False


@dataclass(frozen=True)
class Manifests(Message):
    """The answer to ``discover``: what the agent at ``url`` published (``error``: why none)."""

    TYPE = "manifests"
    url: str
    manifests: tuple[FoundManifest, ...] = ()
    error: str | None = optional()


@dataclass(frozen=True)
class PageNotice(Message):
    """Something the gateway itself tells the person (an agent timed out, a turn was lost)."""

    TYPE = "notice"
    text: str
    reason: str
    agent: str | None = optional()


#: What a ``welcome`` replays to a reloaded page (the room's history).
HistoryEvent = FinalTranscript | AgentUtterance | PageNotice


@dataclass(frozen=True)
class Welcome(Message):
    """The answer to ``hello``: the conversation, how to rejoin it, and what to draw."""

    TYPE = "welcome"
    conversation_id: str
    token: str
    rejoined: bool
    user: WelcomeUser
    audio: AudioRates
    history: tuple[HistoryEvent, ...] = ()
    builtins: tuple[str, ...] = ()
    wake: str = "off"
    wake_words: tuple[str, ...] = ()
    #: Whether the person's voice is stored with the record (``serve --keep-audio``).
    keep_audio: bool = False


@dataclass(frozen=True)
class WakeHeard(Message):
    """The wake word was heard (the page plays a chime)."""

    TYPE = "wake"
    model: str


@dataclass(frozen=True)
class Flush(Message):
    """Barge-in: drop buffered agent audio."""

    TYPE = "flush"


@dataclass(frozen=True)
class Playback(Message):
    """The person's voice over an agent's reply (``reply``: its id): ``paused`` at once, then
    ``resumed`` or ``stopped`` (``resumed`` with no ``why`` comes before the decision, when the
    words so far are backchannels; the decision follows); ``ignored`` when it was the agent's
    own echo. ``why``:
    ``backchannel``, ``noise``, ``echo`` or ``interruption``; ``heard`` the words that decided
    it; ``playedMs`` how much of the reply had played; ``said`` (stopped) its words the person
    heard by then."""

    TYPE = "playback"
    outcome: str
    why: str | None = optional()
    heard: str = ""
    reply: str | None = optional()
    played_ms: int | None = optional()
    said: str | None = optional()


@dataclass(frozen=True)
class SdpAnswer(Message):
    """The gateway's WebRTC answer to :class:`SdpOffer`."""

    TYPE = "answer"
    sdp: str


@dataclass(frozen=True)
class Pong(Message):
    """The answer to :class:`Ping`."""

    TYPE = "pong"


@dataclass(frozen=True)
class TurnStages:
    """One spoken turn's way through the gateway, in milliseconds (``None``: that stage did not
    happen), as ``gateway.proxy.session.Timing.as_ms`` gives them."""

    #: The last voiced audio's arrival → the end of the turn.
    endpoint: float | None
    #: The end of the turn → the final transcript.
    stt: float | None
    #: The utterance sent → the agent's reply.
    agent: float | None
    #: The reply → its first synthesised audio.
    tts_first_audio: float | None
    #: The last voiced audio's arrival → the reply's first audio.
    total: float | None
    decode: float = 0.0
    queued: float = 0.0
    speculative: bool = False
    early_end: bool = False
    #: Why the turn ended, the silence the turn rule chose, and the silence at which its
    #: verdict arrived (gateway/proxy/turn_taker.py's ``EndTurn``).
    end_reason: str = "end silence"
    wait_ms: int | None = None
    verdict_ms: int | None = None
    #: The semantic end-of-turn signal's P(finished) at the pause that ended the turn, and the
    #: milliseconds its call took (None: not consulted, or no answer in time).
    semantic: float | None = None
    semantic_ms: float | None = None
    #: The turn went on from the one before it: one request, transcribed as one.
    continued: bool = False

    @classmethod
    def from_ms(cls, ms: Mapping[str, float | bool | str | None]) -> TurnStages:
        """The stages from ``Timing.as_ms``, whose keys are these fields' wire names."""
        return construct(cls, ms, "the turn's timing")


@dataclass(frozen=True)
class TurnTiming(Message):
    """Where a spoken turn's time went, sent when its reply's first audio is ready.

    ``since_last_voiced_ms`` is how long before this message the person's last voiced audio
    reached the gateway: a client subtracts it from the message's arrival to place the stages
    on its own clock (the WebSocket's own delay is then counted as the gateway's)."""

    TYPE = "timing"
    stages_ms: TurnStages
    since_last_voiced_ms: float


@dataclass(frozen=True)
class RequestError(Message):
    """A request could not be done; the connection stays open."""

    TYPE = "error"
    message: str


ToGateway = (
    Hello | SayText | Address | Invite | Discover | Uninvite | SetMode | PushToTalk | SetWake
    | StopSpeaking | Ping | SdpOffer
)  # fmt: skip
FromGateway = (
    Welcome | StateUpdate | PartialTranscript | FinalTranscript | AgentUtterance | FloorUpdate
    | PageNotice | Manifests | WakeHeard | Flush | Playback | SdpAnswer | Pong | TurnTiming
    | RequestError
)  # fmt: skip

#: Message classes by ``type``, per direction (``wake`` is in both: different messages).
TO_GATEWAY: Mapping[str, type[ToGateway]] = types.MappingProxyType(
    {c.TYPE: c for c in get_args(ToGateway)}
)
FROM_GATEWAY: Mapping[str, type[FromGateway]] = types.MappingProxyType(
    {c.TYPE: c for c in get_args(FromGateway)}
)


def main(argv: list[str] | None = None) -> int:
    """``python -m gateway.server.messages --js``: print ``web/protocol.js``."""
    parser = argparse.ArgumentParser(prog="python -m gateway.server.messages", description=__doc__)
    parser.add_argument("--js", action="store_true", help="print web/protocol.js")
    args = parser.parse_args(argv)
    if not args.js:
        parser.print_help()
        return 2
    sys.stdout.write(render_js(TO_GATEWAY, FROM_GATEWAY, SessionState))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
