"""Export one agent's view of a conversation as Microsoft agent-framework durable agent state.

From the agent's point of view, each envelope the floor delivered to it is a ``request`` entry and
each envelope it sent is a ``response`` entry; every event becomes one chat message. What the
mapping keeps and loses is written down in ``MAPPINGS.md`` beside this file.
"""

from __future__ import annotations

from typing import Any

from gateway.ofp import DialogEvent, Envelope, Event, EventType
from gateway.records.errors import RecordsError
from gateway.records.reading import (
    carries_inline_audio,
    clips_by_event,
    data_uri,
    derived_uuid,
    read_envelope,
    rfc3339,
    speaker_kind,
)
from gateway.records.store import ConversationInfo, Record, StoredConversation

#: The durable agent state schema version written (the current one in agent-framework).
SCHEMA_VERSION = "1.1.0"


def dialog_contents(event: DialogEvent, clip: bytes | None = None) -> list[dict[str, Any]]:
    """The typed contents of an utterance: the plain text as ``text``, other inline features as
    ``data`` (a data: URI), features given by ``valueUrl`` as ``uri`` with their media type.

    A ``text/plain`` feature with a ``tokenSchema`` (the gateway's ``words``: one token per word)
    annotates the text rather than saying something more, so it is not a second ``text``
    content: a reader would see every sentence twice. Durable agent state has no place for its
    per-word confidence and timing (``MAPPINGS.md`` lists it as lost).

    ``clip`` (the recorded audio of the utterance) is added as ``data`` unless the event itself
    carries its audio inline.
    """
    contents: list[dict[str, Any]] = []
    for feature in event.features.values():
        mime = feature.mime_type
        if mime == "text/plain":
            if feature.token_schema is None:
                contents.append({"$type": "text", "text": feature.text()})
            continue
        for token in feature.tokens:
            if token.value_url is not None:
                contents.append({"$type": "uri", "uri": token.value_url, "mediaType": mime})
            else:
                uri = data_uri(mime, token.value)
                contents.append({"$type": "data", "uri": uri, "mediaType": mime})
    if clip is not None and not carries_inline_audio(event):
        contents.append(
            {"$type": "data", "uri": data_uri("audio/wav", clip), "mediaType": "audio/wav"}
        )
    return contents


def _unknown(content: Any) -> list[dict[str, Any]]:
    return [{"$type": "unknown", "content": content}]


def _message(role: str, author: str, at: str, contents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "authorName": author, "contents": contents, "createdAt": at}


def _event_message(
    info: ConversationInfo,
    envelope: Envelope,
    event: Event,
    *,
    response: bool,
    at: str,
    clips: dict[str, bytes],
) -> dict[str, Any]:
    de = event.dialog_event
    if event.event_type is EventType.UTTERANCE and de is not None:
        speaker = de.speaker_uri or envelope.sender.speaker_uri
        role = "assistant" if response else _request_role(info, speaker)
        return _message(role, info.name_of(speaker), at, dialog_contents(de, clips.get(de.id)))
    # Floor and membership events have no chat equivalent: kept whole, as the agent saw them.
    role = "assistant" if response else "system"
    return _message(role, info.name_of(envelope.sender.speaker_uri), at, _unknown(event.to_wire()))


def _request_role(info: ConversationInfo, speaker: str) -> str:
    # Everyone else in the conversation speaks to the agent as a "user"; the floor manager's
    # own announcements are "system".
    return "system" if speaker_kind(info, speaker) == "system" else "user"


def _messages(
    info: ConversationInfo, record: Record, *, response: bool, clips: dict[str, bytes]
) -> list[dict[str, Any]]:
    at = rfc3339(record.at)
    envelope = read_envelope(record)
    if envelope is None:
        role = "assistant" if response else "system"
        return [_message(role, info.name_of(record.peer or ""), at, _unknown(record.data))]
    out = [
        _event_message(info, envelope, ev, response=response, at=at, clips=clips)
        for ev in envelope.events
    ]
    role = "assistant" if response else "system"
    author = info.name_of(envelope.sender.speaker_uri)
    out.extend(_message(role, author, at, _unknown(raw)) for raw in envelope.ignored)
    return out


def to_durable_agent_state(conversation: StoredConversation, agent: str) -> dict[str, Any]:
    """The durable agent state of ``agent`` (a speaker URI) in this conversation.

    A response's ``correlationId`` is that of the request it followed, as agent-framework pairs
    them. Raises :class:`RecordsError` if ``agent`` never took part.
    """
    info = conversation.info
    if agent not in info.conversants:
        known = ", ".join(info.agents) or "none"
        raise RecordsError(
            f"{agent!r} took no part in conversation {info.id!r}; its agents are: {known}"
        )
    clips = clips_by_event(conversation.records)
    history: list[dict[str, Any]] = []
    correlation: str | None = None
    for index, record in enumerate(conversation.records):
        if record.kind != "envelope" or record.peer != agent:
            continue
        response = record.direction == "in"  # received by the floor = sent by the agent
        if not response or correlation is None:
            correlation = derived_uuid(info.id, f"exchange:{index}")
        messages = _messages(info, record, response=response, clips=clips)
        if not messages:
            continue
        # "$type" first: .NET's System.Text.Json reads the discriminator only when it leads.
        history.append(
            {
                "$type": "response" if response else "request",
                "correlationId": correlation,
                "createdAt": rfc3339(record.at),
                "messages": messages,
            }
        )
    return {"schemaVersion": SCHEMA_VERSION, "data": {"conversationHistory": history}}
