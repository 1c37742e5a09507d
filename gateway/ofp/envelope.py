"""Conversation envelopes (Open Floor Inter-Agent Message Specification 1.1.0).

:func:`envelope_from_body` reads leniently: what real agents send (version "1.1", dialog events
without id, ``to`` as a URL string, unknown keys) becomes an :class:`Envelope`.
:meth:`Envelope.to_wire` writes strictly: the result validates against the official 1.1.0
envelope schema, and each embedded dialog event against dialog-event 1.0.2. The model knows no
other dialect: :func:`gateway.ofp.parse.parse_envelope` reads JSON in either form, with OVON 0.9
rewritten beside it (:mod:`gateway.ofp.ovon`).
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any

from pydantic import Field, ValidationError, field_validator, model_validator

from gateway.ofp._base import WireModel
from gateway.ofp.dialog import DialogEvent
from gateway.ofp.errors import EnvelopeError, Problem
from gateway.ofp.jsonio import MAX_DEPTH, dumps, loads_external
from gateway.ofp.manifest import Identification, Manifest

#: The envelope version this gateway emits.
VERSION = "1.1.0"
SCHEMA_URL = (
    "https://github.com/open-voice-interoperability/docs/tree/main/schemas/"
    "conversation-envelope/1.1.0/conversation-envelope-schema.json"
)

_REASON_TOKEN = re.compile(r"@[a-zA-Z0-9_]+")


class EventType(StrEnum):
    """The twelve Open Floor event types (§1.9)."""

    UTTERANCE = "utterance"
    INVITE = "invite"
    UNINVITE = "uninvite"
    ACCEPT_INVITE = "acceptInvite"
    DECLINE_INVITE = "declineInvite"
    BYE = "bye"
    GET_MANIFESTS = "getManifests"
    PUBLISH_MANIFESTS = "publishManifests"
    REQUEST_FLOOR = "requestFloor"
    GRANT_FLOOR = "grantFloor"
    REVOKE_FLOOR = "revokeFloor"
    YIELD_FLOOR = "yieldFloor"


#: Parameters each event type may carry on the wire (the schema forbids any other).
ALLOWED_PARAMETERS: dict[EventType, tuple[str, ...]] = {
    EventType.UTTERANCE: ("dialogEvent",),
    EventType.INVITE: ("dialogHistory",),
    EventType.GET_MANIFESTS: ("recommendScope",),
    EventType.PUBLISH_MANIFESTS: ("servicingManifests", "discoveryManifests"),
}


def reason_tokens(reason: str | None) -> list[str]:
    """The special ``@tokens`` in a reason string (§1.8), e.g. ``["@timedOut"]``."""
    return _REASON_TOKEN.findall(reason or "")


class To(WireModel):
    """Who an event is for: a speaker URI and/or a service URL, and whether it is private."""

    speaker_uri: str | None = None
    service_url: str | None = None
    private: bool | None = None

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if isinstance(data, str):  # OVON 0.9 wrote "to": "https://..."
            return {"serviceUrl": data}
        if isinstance(data, dict) and "url" in data and "serviceUrl" not in data:
            data = {**data, "serviceUrl": data["url"]}
            data.pop("url")
        return data

    @property
    def is_private(self) -> bool:
        """True only when ``private`` was set to true."""
        return bool(self.private)

    def to_wire(self) -> dict[str, Any]:
        """Strict output: only the three keys the schema describes."""
        return self.wire(include={"speaker_uri", "service_url", "private"})


class Parameters(WireModel):
    """Event parameters; which of them an event type uses is given by :data:`ALLOWED_PARAMETERS`."""

    dialog_event: DialogEvent | None = None
    dialog_history: list[DialogEvent] | None = None
    recommend_scope: str | None = None
    servicing_manifests: list[Manifest] | None = None
    discovery_manifests: list[Manifest] | None = None

    @field_validator("recommend_scope", mode="before")
    @classmethod
    def _scope_text(cls, v: Any) -> Any:
        return v if v is None or isinstance(v, str) else str(v)


class Event(WireModel):
    """One event in an envelope (§1.8): a type, an optional ``to``, ``reason`` and parameters."""

    event_type: EventType
    to: To | None = None
    reason: str | None = None
    parameters: Parameters = Field(default_factory=Parameters)

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if data.get("parameters") is None:
            data.pop("parameters", None)
        to = data.get("to")
        if isinstance(to, dict) and not any(to.get(k) for k in ("speakerUri", "serviceUrl", "url")):
            data.pop("to")  # an empty "to" addresses everyone, like no "to"
        elif to is None:
            data.pop("to", None)
        if data.get("reason") is not None and not isinstance(data["reason"], str):
            data["reason"] = str(data["reason"])
        return data

    @model_validator(mode="after")
    def _utterance_has_dialog_event(self) -> Event:
        if self.event_type is EventType.UTTERANCE and self.parameters.dialog_event is None:
            raise ValueError("an utterance event needs parameters.dialogEvent")
        return self

    @property
    def dialog_event(self) -> DialogEvent | None:
        """The dialog event of an utterance."""
        return self.parameters.dialog_event

    @property
    def is_private(self) -> bool:
        """Whether this is a private utterance (a whisper): ``to`` with ``private: true``."""
        return self.to is not None and self.to.is_private

    @property
    def reason_tokens(self) -> list[str]:
        """The ``@tokens`` of :attr:`reason`."""
        return reason_tokens(self.reason)

    def to_wire(self) -> dict[str, Any]:
        """Strict output: parameters limited to what the schema allows this event type."""
        out: dict[str, Any] = {"eventType": self.event_type.value}
        if self.to is not None:
            out["to"] = self.to.to_wire()
        if self.reason is not None:
            out["reason"] = self.reason
        params: dict[str, Any] = {}
        p = self.parameters
        allowed = ALLOWED_PARAMETERS.get(self.event_type, ())
        if "dialogEvent" in allowed and p.dialog_event is not None:
            params["dialogEvent"] = p.dialog_event.to_wire()
        if "dialogHistory" in allowed and p.dialog_history is not None:
            params["dialogHistory"] = [d.to_wire() for d in p.dialog_history]
        if "recommendScope" in allowed and p.recommend_scope is not None:
            params["recommendScope"] = p.recommend_scope
        if "servicingManifests" in allowed and p.servicing_manifests is not None:
            params["servicingManifests"] = [m.to_wire() for m in p.servicing_manifests]
        if "discoveryManifests" in allowed and p.discovery_manifests is not None:
            params["discoveryManifests"] = [m.to_wire() for m in p.discovery_manifests]
        if params:
            out["parameters"] = params
        return out


class Conversant(WireModel):
    """A party to the conversation, identified as in its manifest."""

    identification: Identification

    def to_wire(self) -> dict[str, Any]:
        """Strict output: ``identification`` with only the allowed keys."""
        return {"identification": self.identification.to_wire()}


class Conversation(WireModel):
    """The ``conversation`` section: the id, and the floor state the floor manager publishes."""

    id: str
    conversants: list[Conversant] | None = None
    assigned_floor_roles: dict[str, list[str]] | None = None
    floor_granted: list[str] | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) and not isinstance(v, bool) else v

    def to_wire(self) -> dict[str, Any]:
        """Strict output of the section."""
        out: dict[str, Any] = {"id": self.id}
        if self.conversants is not None:
            out["conversants"] = [c.to_wire() for c in self.conversants]
        if self.assigned_floor_roles is not None:
            out["assignedFloorRoles"] = {k: list(v) for k, v in self.assigned_floor_roles.items()}
        if self.floor_granted is not None:
            out["floorGranted"] = list(self.floor_granted)
        return out


class Sender(WireModel):
    """Who sent the envelope: a speaker URI and optionally the sender's service URL."""

    speaker_uri: str
    service_url: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("speakerUri") and data.get("serviceUrl"):
            data = {**data, "speakerUri": data["serviceUrl"]}
        return data

    def to_wire(self) -> dict[str, Any]:
        """Strict output of the section."""
        return self.wire(include={"speaker_uri", "service_url"})


class Envelope(WireModel):
    """A conversation envelope.

    ``version`` is the schema version it arrived with (``"1.1.0"`` for ones made here);
    ``dialect`` is ``"ovon"`` when it came in the OVON 0.9 form, so a reply can match it;
    ``ignored`` holds events of types this version does not know, which are never routed.
    """

    conversation: Conversation
    sender: Sender
    events: list[Event] = Field(default_factory=list)
    version: str = VERSION
    dialect: str = "openFloor"
    ignored: list[Any] = Field(default_factory=list)

    def to_wire(self) -> dict[str, Any]:
        """Strict output: validates against the official 1.1.0 envelope schema."""
        return {
            "openFloor": {
                "schema": {"version": VERSION, "url": SCHEMA_URL},
                "conversation": self.conversation.to_wire(),
                "sender": self.sender.to_wire(),
                "events": [e.to_wire() for e in self.events],
            }
        }

    def to_json(self) -> str:
        """:meth:`to_wire` as compact JSON text."""
        return dumps(self.to_wire(), compact=True)


def _depth_ok(value: Any, limit: int = MAX_DEPTH) -> bool:
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


def _json_path(loc: tuple[Any, ...], prefix: str) -> str:
    path = prefix
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


_HINTS = {
    "missing": "add it; the 1.1.0 specification makes it mandatory",
    "enum": "eventType must be one of: " + ", ".join(e.value for e in EventType),
    "string_type": "use a JSON string",
    "bool_type": "use true or false",
    "list_type": "use a JSON array",
    "dict_type": "use a JSON object",
    "model_type": "use a JSON object",
}


def problems_from(err: ValidationError, prefix: str) -> list[Problem]:
    """Turn a pydantic error into :class:`Problem` records with JSON paths and hints."""
    out = []
    for e in err.errors(include_url=False):
        loc = tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        out.append(Problem(_json_path(loc, prefix), e["msg"], _HINTS.get(e["type"], "")))
    return out


def load_json(
    data: bytes | str | dict[str, Any],
    *,
    notes: list[Problem] | None = None,
    source: str = "",
) -> dict[str, Any]:
    """Decode JSON text into a dict, refusing non-objects and absurd nesting.

    Text goes through :func:`~gateway.ofp.jsonio.loads_external` (unpaired surrogates become
    U+FFFD, non-finite numbers are refused, duplicate keys are reported in ``notes`` and logged
    with ``source``); a dict is taken to come from inside the gateway and only has its depth
    checked.
    """
    if isinstance(data, bytes | bytearray | str):
        data = loads_external(data, notes=notes, source=source)
    if not isinstance(data, dict):
        raise EnvelopeError(Problem("$", "not a JSON object", 'wrap it as {"openFloor": {...}}'))
    if not _depth_ok(data):
        raise EnvelopeError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return data


def envelope_from_body(
    body: dict[str, Any],
    dialect: str,
    prefix: str,
    sender: Sender | None,
    conversation_id: str | None,
) -> Envelope:
    """Build an :class:`Envelope` from a 1.x body (what is under ``openFloor``, or an OVON 0.9
    body already rewritten by :func:`gateway.ofp.ovon.from_ovon`), filling in ``sender`` and
    ``conversation_id`` where the body leaves them out. ``prefix`` is the body's JSON path in the
    problems reported; raises :class:`EnvelopeError` listing every problem found."""
    problems: list[Problem] = []
    schema = body.get("schema")
    version = VERSION
    if isinstance(schema, dict) and schema.get("version") is not None:
        version = str(schema["version"])
    elif dialect == "openFloor":
        problems.append(
            Problem(f"{prefix}.schema.version", "missing", 'add "schema": {"version": "1.1.0"}')
        )

    conv = body.get("conversation")
    if not isinstance(conv, dict) or conv.get("id") in (None, ""):
        if conversation_id is None:
            problems.append(
                Problem(
                    f"{prefix}.conversation.id", "missing", "every envelope names its conversation"
                )
            )
        conv = {**(conv if isinstance(conv, dict) else {}), "id": conversation_id}

    snd = body.get("sender")
    if not isinstance(snd, dict) or not (snd.get("speakerUri") or snd.get("serviceUrl")):
        if sender is None:
            problems.append(
                Problem(f"{prefix}.sender.speakerUri", "missing", "say who sent the envelope")
            )
        else:
            snd = sender.wire()

    raw_events = body.get("events")
    if raw_events is None:
        raw_events = []
        problems.append(Problem(f"{prefix}.events", "missing", 'send "events": [] to acknowledge'))
    if not isinstance(raw_events, list):
        problems.append(Problem(f"{prefix}.events", "not an array", "use a JSON array of events"))
        raw_events = []
    known = {e.value for e in EventType}
    events_in: list[tuple[int, Any]] = []
    ignored: list[Any] = []
    for i, ev in enumerate(raw_events):
        if (
            isinstance(ev, dict)
            and isinstance(ev.get("eventType"), str)
            and ev["eventType"] not in known
        ):
            ignored.append(ev)
        else:
            events_in.append((i, ev))

    events: list[Event] = []
    for i, ev in events_in:
        try:
            events.append(Event.model_validate(ev))
        except ValidationError as err:
            problems.extend(problems_from(err, f"{prefix}.events[{i}]"))
    try:
        conversation = Conversation.model_validate(conv)
    except ValidationError as err:
        if conv.get("id") is None:
            raise EnvelopeError(problems) from None  # the missing id is reported already
        # The floor rewrites everything but the id, so a garbled floor state from an agent is
        # dropped rather than refused.
        try:
            conversation = Conversation.model_validate({"id": conv.get("id")})
        except ValidationError:
            problems.extend(problems_from(err, f"{prefix}.conversation"))
    try:
        sender_obj = Sender.model_validate(snd)
    except ValidationError as err:
        if isinstance(snd, dict) and (snd.get("speakerUri") or snd.get("serviceUrl")):
            problems.extend(problems_from(err, f"{prefix}.sender"))
    if problems:
        raise EnvelopeError(problems)

    # A dialog event with no speaker is taken to be the sender's (common in real agents).
    fixed = []
    for ev in events:
        de = ev.parameters.dialog_event
        if de is not None and not de.speaker_uri:
            de = de.model_copy(update={"speaker_uri": sender_obj.speaker_uri})
            ev = ev.model_copy(
                update={"parameters": ev.parameters.model_copy(update={"dialog_event": de})}
            )
        fixed.append(ev)
    return Envelope(
        conversation=conversation,
        sender=sender_obj,
        events=fixed,
        version=version,
        dialect=dialect,
        ignored=ignored,
    )


def parse_manifest(data: bytes | str | dict[str, Any]) -> Manifest:
    """Read an assistant manifest leniently; raises :class:`EnvelopeError` on bad input."""
    doc = load_json(data)
    try:
        return Manifest.model_validate(doc)
    except ValidationError as err:
        raise EnvelopeError(problems_from(err, "$")) from None
