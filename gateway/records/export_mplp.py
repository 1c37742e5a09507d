"""Export a conversation as an MPLP Dialog object (MPLP v1.0 ``mplp-dialog.schema.json``).

The dialog is the whole conversation as the floor saw it: each utterance once (deliveries to
several recipients are the same message), floor and membership events as MPLP events. What the
mapping keeps and loses is written down in ``MAPPINGS.md`` beside this file.
"""

from __future__ import annotations

import json
from typing import Any

from gateway.ofp import Envelope, Event, EventType
from gateway.records.reading import (
    carries_inline_audio,
    clips_by_event,
    data_uri,
    derived_uuid,
    read_envelope,
    replaced,
    rfc3339,
    speaker_kind,
)
from gateway.records.store import Record, StoredConversation

#: The MPLP protocol and Dialog schema version written.
MPLP_VERSION = "1.0.0"
#: The ``source`` of every event: the conversation floor, where the gateway observed it.
SOURCE = "ofp.floor"

#: MPLP event names (dotted lower case) of the Open Floor event types.
EVENT_NAMES: dict[EventType, str] = {
    EventType.UTTERANCE: "ofp.utterance",
    EventType.INVITE: "ofp.invite",
    EventType.UNINVITE: "ofp.uninvite",
    EventType.ACCEPT_INVITE: "ofp.invite.accept",
    EventType.DECLINE_INVITE: "ofp.invite.decline",
    EventType.BYE: "ofp.bye",
    EventType.GET_MANIFESTS: "ofp.manifests.get",
    EventType.PUBLISH_MANIFESTS: "ofp.manifests.publish",
    EventType.REQUEST_FLOOR: "ofp.floor.request",
    EventType.GRANT_FLOOR: "ofp.floor.grant",
    EventType.REVOKE_FLOOR: "ofp.floor.revoke",
    EventType.YIELD_FLOOR: "ofp.floor.yield",
}
FLOOR_CHANGED = "ofp.floor.changed"
#: What the person heard when it was not what was sent (a reply stopped part-way, speech over
#: an agent that was not a turn): the gateway's observation, not an OFP event.
HEARD = "ofp.gateway.heard"
UNKNOWN_EVENT = "ofp.event.unknown"
UNREADABLE_ENVELOPE = "ofp.envelope.unreadable"

#: Conversation states MPLP names; an end for any other reason is reported as ``cancelled``.
_STATUSES = {"active", "paused", "completed", "cancelled"}


def _status(conversation: StoredConversation) -> str:
    info = conversation.info
    if info.ended_at is None:
        return "active"
    return info.status if info.status in _STATUSES else "cancelled"


class _Builder:
    """Walks the records once, collecting messages and events with ids derived from their place."""

    def __init__(self, conversation: StoredConversation) -> None:
        self.info = conversation.info
        self.clips = clips_by_event(conversation.records)
        # Whoever sent an envelope to the floor is a source; what the floor delivered onwards
        # from them repeats it. Envelopes sent out under any other name are the floor's own.
        self.in_peers = {
            r.peer for r in conversation.records if r.kind == "envelope" and r.direction == "in"
        }
        # Continuations: the first part of a request and what answered it stay (they were sent),
        # marked as taken back by the whole request.
        self.replaced = replaced(conversation.records, self.info.user_speaker_uri)
        self.seen_utterances: set[str] = set()
        self.seen_own: set[str] = set()
        self.messages: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    def event(self, key: str, name: str, at: str, data: dict[str, Any]) -> dict[str, Any]:
        return {
            "event_id": derived_uuid(self.info.id, key),
            "event_type": name,
            "source": SOURCE,
            "timestamp": at,
            "data": data,
        }

    def add(self, index: int, record: Record) -> None:
        at = rfc3339(record.at)
        if record.kind == "floor":
            self.events.append(self.event(f"record:{index}", FLOOR_CHANGED, at, dict(record.data)))
            return
        if record.kind == "heard":
            self.events.append(self.event(f"record:{index}", HEARD, at, dict(record.data)))
            return
        if record.kind != "envelope":
            return  # clips are attached to their utterance's message
        envelope = read_envelope(record)
        if envelope is None:
            if record.direction == "in":
                data = {"from": record.peer, "envelope": record.data}
                self.events.append(self.event(f"record:{index}", UNREADABLE_ENVELOPE, at, data))
            return
        if not self._is_source(record, envelope):
            return
        sender = envelope.sender.speaker_uri
        for n, ev in enumerate(envelope.events):
            key = f"record:{index}:{n}"
            if ev.event_type is EventType.UTTERANCE:
                self._utterance(key, at, ev, sender)
            else:
                self.events.append(
                    self.event(key, EVENT_NAMES[ev.event_type], at, _data(ev, sender))
                )
        for n, raw in enumerate(envelope.ignored):
            data = {"sender": sender, "event": raw}
            self.events.append(self.event(f"record:{index}:x{n}", UNKNOWN_EVENT, at, data))

    def _is_source(self, record: Record, envelope: Envelope) -> bool:
        if record.direction == "in":
            return True
        if envelope.sender.speaker_uri in self.in_peers:
            return False
        # The floor's own envelope goes to every recipient alike: keep the first copy.
        key = json.dumps(
            [envelope.sender.speaker_uri, [e.to_wire() for e in envelope.events]],
            sort_keys=True,
            allow_nan=False,
        )
        if key in self.seen_own:
            return False
        self.seen_own.add(key)
        return True

    def _utterance(self, key: str, at: str, event: Event, sender: str) -> None:
        de = event.dialog_event
        if de is None or de.id in self.seen_utterances:
            return
        self.seen_utterances.add(de.id)
        speaker = de.speaker_uri or sender
        data: dict[str, Any] = {
            "speakerUri": speaker,
            "dialogEventId": de.id,
            "private": event.is_private,
            "span": de.span.wire(),
        }
        if name := self.info.conversants.get(speaker):
            data["conversationalName"] = name
        if event.to is not None:
            data["to"] = event.to.to_wire()
        if de.previous_id is not None:
            data["previousId"] = de.previous_id
        # Every feature in its wire form, text included: MPLP's ``content`` is plain text only,
        # and the text feature's confidence, span, alternates and lang, the words annotation
        # and the other features have nowhere else to go.
        if de.features:
            data["features"] = {k: f.wire() for k, f in de.features.items()}
        if de.id in self.replaced.by:
            data["replacedBy"] = self.replaced.by[de.id]
        elif de.id in self.replaced.answers:
            data["answersReplaced"] = self.replaced.answers[de.id]
        clip = self.clips.get(de.id)
        if clip is not None and not carries_inline_audio(de):
            data["recordedAudio"] = {"mediaType": "audio/wav", "uri": data_uri("audio/wav", clip)}
        kind = speaker_kind(self.info, speaker)
        self.messages.append(
            {
                "role": kind,
                "content": de.text(),
                "timestamp": at,
                "event": self.event(key, EVENT_NAMES[EventType.UTTERANCE], at, data),
            }
        )


def _data(event: Event, sender: str) -> dict[str, Any]:
    data: dict[str, Any] = {"sender": sender}
    wire = event.to_wire()
    for key in ("to", "reason", "parameters"):
        if key in wire:
            data[key] = wire[key]
    return data


def to_mplp_dialog(conversation: StoredConversation) -> dict[str, Any]:
    """The conversation as an MPLP Dialog object, with ids that are the same on every export."""
    info = conversation.info
    builder = _Builder(conversation)
    for index, record in enumerate(conversation.records):
        builder.add(index, record)
    dialog: dict[str, Any] = {
        "meta": {
            "protocol_version": MPLP_VERSION,
            "schema_version": MPLP_VERSION,
            "created_at": rfc3339(info.started_at),
            "created_by": "ofp-gateway",
            "updated_at": rfc3339(info.updated_at),
        },
        "dialog_id": derived_uuid(info.id, "dialog"),
        "context_id": derived_uuid(info.id, "context"),
        "status": _status(conversation),
        "messages": builder.messages,
        "started_at": rfc3339(info.started_at),
    }
    if info.ended_at is not None:
        dialog["ended_at"] = rfc3339(info.ended_at)
    dialog["events"] = builder.events
    return dialog
