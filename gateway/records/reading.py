"""Reading stored records back as Open Floor objects: what both exports share."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from gateway.ofp import DialogEvent, Envelope, EnvelopeError, parse_envelope
from gateway.ofp.timestamps import rfc3339 as rfc3339  # the exports' time format is OFP's
from gateway.records.store import ConversationInfo, Record

SpeakerKind = Literal["user", "agent", "system"]


def derived_uuid(conversation_id: str, name: str) -> str:
    """A lowercase UUID v4 that is always the same for this conversation and ``name``.

    A hash, not uuid5, because the exports' consumers check the version nibble is 4.
    """
    digest = hashlib.sha256(f"{conversation_id}\0{name}".encode("utf-8", "surrogatepass"))
    return str(uuid.UUID(bytes=digest.digest()[:16], version=4))


def read_envelope(record: Record) -> Envelope | None:
    """The envelope of an ``envelope`` record, or None if what was recorded cannot be read."""
    try:
        return parse_envelope(record.data)
    except EnvelopeError:
        return None


def speaker_kind(info: ConversationInfo, speaker_uri: str) -> SpeakerKind:
    """``user`` for the person, ``agent`` for any other conversant, ``system`` for anyone else
    (in practice the floor manager speaking for itself)."""
    if speaker_uri and speaker_uri == info.user_speaker_uri:
        return "user"
    return "agent" if speaker_uri in info.conversants else "system"


def clips_by_event(records: list[Record]) -> dict[str, bytes]:
    """The recorded clips that were read, by dialog event id (the last one wins)."""
    return {
        str(r.data["dialogEventId"]): r.audio
        for r in records
        if r.kind == "audio" and r.audio is not None
    }


def carries_inline_audio(event: DialogEvent) -> bool:
    """Whether the event holds audio inline; if so a recorded clip of it would be a duplicate."""
    return any(
        f.mime_type.startswith("audio/") and any(t.value is not None for t in f.tokens)
        for f in event.features.values()
    )


def _textual(media_type: str) -> bool:
    return media_type.startswith("text/") or media_type.endswith(("xml", "json"))


def data_uri(media_type: str, value: Any) -> str:
    """A ``data:`` URI for an inline token value of this media type.

    Binary media travel in JSON as base64 text, so a valid base64 string is used as it is; text
    media and anything else are encoded from their UTF-8 (JSON for non-strings).
    """
    if isinstance(value, bytes):
        return f"data:{media_type};base64,{base64.b64encode(value).decode('ascii')}"
    if isinstance(value, str) and value.startswith("data:"):
        return value
    if isinstance(value, str) and not _textual(media_type):
        compact = "".join(value.split())
        try:
            base64.b64decode(compact, validate=True)
        except (binascii.Error, ValueError):
            pass
        else:
            return f"data:{media_type};base64,{compact}"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, allow_nan=False)
    return data_uri(media_type, text.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Replaced:
    """What continuations took back (docs/turn-taking.md, "Continuations"): the person went on
    with a request after its first part was sent, and the whole request, sent next, takes the
    first part's place. OFP has no retraction, so the envelopes stay as sent; the ``heard``
    record ``{"outcome": "replaced", "utterance", "by"}`` says which utterance replaced which.

    ``by`` maps each replaced utterance (its dialog event id) to the one that replaced it;
    ``answers`` maps each utterance that answered a replaced one (an agent's, recorded between
    the first part and the whole request: unplayed, and not shown once the whole came) to the
    replaced utterance it answered.
    """

    by: dict[str, str]
    answers: dict[str, str]

    def hidden(self, dialog_event_id: str) -> bool:
        """Whether the page does not show this utterance (a replaced part or its answer)."""
        return dialog_event_id in self.by or dialog_event_id in self.answers


def replaced(records: list[Record], person: str) -> Replaced:
    """Which of the person's utterances were replaced by a continuation, and what answered them,
    from a conversation's records (``person``: the person's speaker URI)."""
    by = {
        str(r.data["utterance"]): str(r.data["by"])
        for r in records
        if r.kind == "heard"
        and r.data.get("outcome") == "replaced"
        and isinstance(r.data.get("utterance"), str)
        and isinstance(r.data.get("by"), str)
    }
    answers: dict[str, str] = {}
    if not by:
        return Replaced(by, answers)
    wholes = {whole: part for part, whole in by.items()}
    open_part: str | None = None  # the replaced part whose whole request is not yet sent
    for record in records:
        if record.kind != "envelope":
            continue
        envelope = read_envelope(record)
        if envelope is None:
            continue
        for event in envelope.events:
            de = event.dialog_event
            if de is None or event.event_type.value != "utterance":
                continue
            if de.speaker_uri == person:
                if de.id in by:
                    open_part = de.id
                elif de.id in wholes and open_part == wholes[de.id]:
                    open_part = None
            elif open_part is not None:
                answers.setdefault(de.id, open_part)
    return Replaced(by, answers)
