"""The page ↔ gateway messages on ``/ws``: their one definition.

Every JSON text frame on the WebSocket is one of the frozen dataclasses below, named by its
``type``. :data:`TO_GATEWAY` are what a client (the page, ``scripts/load.py``, the tests' ``Page``)
sends; :data:`FROM_GATEWAY` what the gateway sends back. ``docs/client-protocol.md`` explains them;
``web/protocol.js`` is generated from this module (``python -m gateway.server.messages --js``) and a
test keeps the two in step.

Fields are snake_case here and camelCase on the wire (``speaker_uri`` is ``speakerUri``). A field
declared with :func:`optional` is left out of the JSON while it is ``None``; every other field is
always sent (``None`` as ``null``). Reading is strict about types (a ``ptt`` message's ``down`` is a
boolean, not ``"yes"``) and ignores fields it does not know, so newer clients keep working; only
:class:`Hello` is lenient (see there).

Frozen dataclasses rather than pydantic models: these are built on the audio path (a ``state`` or
``partial`` message per turn change) and need no coercion, aliases or schema export, so plain
classes with one small reader cost less and keep this module free of a validation framework.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from gateway.errors import GatewayError
from gateway.ofp.errors import EnvelopeError
from gateway.ofp.jsonio import loads_external
from gateway.server.guard import clip_text

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


class ProtocolError(GatewayError, ValueError):
    """A message that does not fit its definition. Its text is meant for whoever sent it.
    (Also a ``ValueError``: the server answers it as a bad request.)"""


def optional(default: Any = None) -> Any:
    """A field left out of the JSON while it is ``None``."""
    return field(default=default, metadata={"omit_none": True})


M = TypeVar("M", bound="Message")
T = TypeVar("T")


@dataclass(frozen=True)
class Message:
    """One message on the WebSocket; subclasses name their wire ``type`` in :attr:`TYPE`."""

    TYPE: ClassVar[str] = ""
    #: Read a field that does not fit as its default instead of refusing the message.
    LENIENT: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, ``type`` first."""
        out: dict[str, Any] = {"type": self.TYPE} if self.TYPE else {}
        for f in _fields(cast(type, type(self))):
            value = getattr(self, f.name)
            if value is None and f.omit_none:
                continue
            out[f.wire] = _encode(value)
        return out

    def to_json(self) -> str:
        """The JSON text sent on the WebSocket.

        UTF-8 when it can be; a lone surrogate (which UTF-8 cannot carry) is sent as a ``\\ud800``
        escape, which ``JSON.parse`` takes. Raises ``ValueError`` for a non-finite number.
        """
        data = self.to_dict()
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, ensure_ascii=True, allow_nan=False)
        return text

    @classmethod
    def from_dict(cls: type[M], data: Mapping[str, Any]) -> M:
        """Read the message from decoded JSON; :class:`ProtocolError` if it does not fit."""
        if not isinstance(data, Mapping):
            raise ProtocolError(f"a {cls._name()} must be a JSON object")
        if cls.TYPE and data.get("type") != cls.TYPE:
            raise ProtocolError(f"expected a {cls.TYPE!r} message, not {_quote(data.get('type'))}")
        return _construct(cls, data, f"the {cls._name()}", lenient=cls.LENIENT)

    @classmethod
    def from_json(cls: type[M], text: str | bytes) -> M:
        """Read the message from JSON text (through the gateway's parse boundary)."""
        return cls.from_dict(_object(text))

    @classmethod
    def _name(cls) -> str:
        return f"{cls.TYPE!r} message" if cls.TYPE else cls.__name__


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
    ``resumed`` or ``stopped``; ``ignored`` when it was the agent's own echo. ``why``:
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
    #: verdict arrived (gateway/proxy/turns.py's ``EndTurn``).
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
        return _construct(cls, ms, "the turn's timing")


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


def read(data: Any, registry: Mapping[str, type[M]]) -> M:
    """The message ``data`` (decoded JSON) is, looked up by its ``type`` in ``registry``.

    :class:`ProtocolError` when it is not an object, its type is not in ``registry``, or its
    fields do not fit.
    """
    if not isinstance(data, Mapping):
        raise ProtocolError("messages are JSON objects")
    kind = data.get("type")
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown or misplaced message {_quote(kind)}")
    return cls.from_dict(data)


def read_json(text: str | bytes, registry: Mapping[str, type[M]]) -> M:
    """:func:`read` from JSON text (through the gateway's parse boundary)."""
    return read(_object(text), registry)


# ---------------------------------------------------------------------------- reading, writing
@dataclass(frozen=True)
class _Field:
    name: str
    wire: str
    hint: Any
    omit_none: bool
    has_default: bool


@cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = get_type_hints(cls)
    return tuple(
        _Field(
            f.name,
            _camel(f.name),
            hints[f.name],
            bool(f.metadata.get("omit_none")),
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _encode(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.wire: _encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value: Any, hint: Any, where: str) -> Any:
    """``value`` read as ``hint`` says, or :class:`ProtocolError` naming ``where``."""
    origin = get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        messages = {o.TYPE: o for o in options if isinstance(o, type) and issubclass(o, Message)}
        if messages and isinstance(value, Mapping) and value.get("type") in messages:
            return messages[value["type"]].from_dict(value)
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(value, option, where)
            except ProtocolError:
                pass
        raise ProtocolError(f"{where} must be {_describe(hint)}")
    if origin is Literal:
        if any(value == v and type(value) is type(v) for v in get_args(hint)):
            return value
        raise ProtocolError(f"{where} must be {_describe(hint)}, not {_quote(value)}")
    if origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ProtocolError(f"{where} must be an object")
        item = get_args(hint)[1]
        return {k: _decode(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise ProtocolError(f"{where} must be a list")
        item = get_args(hint)[0]
        items = [_decode(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise ProtocolError(f"{where} must be {_describe(hint)}, not {_quote(value)}") from None
    if isinstance(hint, type) and issubclass(hint, Message):
        return hint.from_dict(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ProtocolError(f"{where} must be an object")
        return _construct(hint, value, where)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if (
        isinstance(hint, type)
        and isinstance(value, hint)
        and not (isinstance(value, bool) and hint is not bool)
    ):
        return value
    raise ProtocolError(f"{where} must be {_describe(hint)}")


def _construct(cls: type[T], data: Mapping[str, Any], where: str, *, lenient: bool = False) -> T:
    """An instance of the dataclass ``cls`` from its wire fields (unknown ones ignored)."""
    values: dict[str, Any] = {}
    for f in _fields(cast(type, cls)):
        if f.wire not in data:
            if not f.has_default:
                raise ProtocolError(f"{where} needs {f.wire!r}")
            continue
        try:
            values[f.name] = _decode(data[f.wire], f.hint, f"{where}'s {f.wire!r}")
        except ProtocolError:
            if not (lenient and f.has_default):
                raise
    return cls(**values)


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin is Literal or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        values = get_args(hint) if origin is Literal else [m.value for m in hint]
        return "one of " + ", ".join(repr(v) for v in values)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(o) for o in get_args(hint))
    names = {str: "a string", bool: "true or false", int: "an integer", float: "a number"}
    if hint is type(None):
        return "null"
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _quote(value: Any) -> str:
    """``value`` as an error message quotes it: at most ECHO_CHARS of it (server/guard.py)."""
    return clip_text(repr(value))


def _object(text: str | bytes) -> Any:
    try:
        data = loads_external(text, source="the WebSocket")
    except (EnvelopeError, RecursionError):
        raise ProtocolError("messages are JSON objects (not too deep)") from None
    if not isinstance(data, dict):
        raise ProtocolError("messages are JSON objects (not too deep)")
    return data


# ---------------------------------------------------------------------------- the page's copy
def render_js() -> str:
    """``web/protocol.js``: the message and state names as frozen objects the page imports."""

    def frozen(name: str, doc: str, names: list[str]) -> str:
        body = "".join(f"  {n}: {json.dumps(n)},\n" for n in names)
        return f"/** {doc} */\nexport const {name} = Object.freeze({{\n{body}}});\n"

    return "\n".join(
        [
            "// The page <-> gateway message names (docs/client-protocol.md). Generated from\n"
            "// gateway/server/messages.py by `python -m gateway.server.messages --js`: do not\n"
            "// edit; tests/server/test_messages.py fails when this file is out of date.\n",
            frozen("TO_GATEWAY", "Message types the page sends.", list(TO_GATEWAY)),
            frozen("FROM_GATEWAY", "Message types the gateway sends.", list(FROM_GATEWAY)),
            frozen(
                "STATES", "Session states in `state` messages.", [s.value for s in SessionState]
            ),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    """``python -m gateway.server.messages --js``: print ``web/protocol.js``."""
    parser = argparse.ArgumentParser(prog="python -m gateway.server.messages", description=__doc__)
    parser.add_argument("--js", action="store_true", help="print web/protocol.js")
    args = parser.parse_args(argv)
    if not args.js:
        parser.print_help()
        return 2
    sys.stdout.write(render_js())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
