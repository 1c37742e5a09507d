"""Conversations any node can take up: rejoin tokens and state kept in the records.

A node that opens a conversation stores the SHA-256 of its rejoin token and its own name as the
holder (:meth:`Recorder.hold`). When a page rejoins a conversation this node does not hold — its
node died or was drained, and the balancer sent the page here — :func:`resume` checks the token
against the digest and rebuilds the conversation from its records: the person, the conversants with
their manifests' identities, floor grants and convener from the last floor record, and the page's
history from the envelopes the person sent and received. The node then holds it; the node that held
it before, if alive, finds it is no longer the holder and lets its copy go without ending it.

The built-in agents run inside each node and remember the last utterances of a conversation
(the concierge passes them on as dialog history): the new node's built-ins are replayed the last
envelopes the records say were delivered to them, their answers discarded, so they remember what
they had heard. Remote agents keep their own state, by conversation id.

What a node failure loses: audio being spoken or heard at that moment (the utterance not yet
ended, a reply being played), deliveries in flight (an agent reply not yet received is not asked
for again), and notices shown on the page (they are not records).
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from gateway.agents.errors import UnknownAgent
from gateway.agents.urls import BUILTIN_SCHEME
from gateway.floor.host import FloorHost, FloorState, Limits
from gateway.ofp import Identification
from gateway.records.base import token_digest
from gateway.records.errors import RecordsError
from gateway.records.model import StoredConversation
from gateway.records.reading import read_envelope
from gateway.server import access

if TYPE_CHECKING:
    from gateway.server.app import Gateway, Room

log = logging.getLogger(__name__)

#: Envelopes replayed to a built-in agent on taking a conversation up: enough to refill its
#: memory (the last 8 utterances) with room for the floor events between them.
RECALL_ENVELOPES = 64


def hold(gateway: Gateway, conversation_id: str, token: str | None = None) -> None:
    """Record that this node holds the conversation (with its token's digest when new)."""
    if gateway.recorder is None:
        return
    try:
        gateway.recorder.hold(
            conversation_id,
            node=gateway.node,
            token_digest=token_digest(token) if token is not None else None,
        )
    except RecordsError:  # the conversation goes on; only taking it up elsewhere would fail
        log.exception("conversation %s: could not record its holder", conversation_id)


def held_elsewhere(gateway: Gateway, conversation_id: str) -> bool:
    """Whether the records say another node has taken this conversation up."""
    if gateway.recorder is None:
        return False
    try:
        holder = gateway.recorder.holder(conversation_id)
    except RecordsError:
        log.exception("conversation %s: could not read its holder", conversation_id)
        return False
    return holder is not None and bool(holder.node) and holder.node != gateway.node


def token_ok(gateway: Gateway, conversation_id: str, token: Any) -> bool:
    """Whether ``token`` opens the conversation: held here, or by its stored digest."""
    if not isinstance(token, str) or not token:
        return False
    room = gateway.rooms.get(conversation_id)
    if room is not None:
        return access.same_secret(token, room.token)  # any text: non-ASCII is refused, not a 500
    if gateway.recorder is None:
        return False
    try:
        holder = gateway.recorder.holder(conversation_id)
    except RecordsError:
        log.exception("conversation %s: could not read its holder", conversation_id)
        return False
    return (
        holder is not None
        and bool(holder.token_digest)
        and secrets.compare_digest(holder.token_digest, token_digest(token))
    )


async def find_or_resume(gateway: Gateway, conversation_id: Any, token: Any) -> Room | None:
    """The room a rejoining page asks for: this node's, else taken up from the records."""
    if not isinstance(conversation_id, str) or not isinstance(token, str):
        return None
    room = gateway.find_room(conversation_id, token)
    if room is not None and not held_elsewhere(gateway, conversation_id):
        return room
    if room is not None:
        # Another node took it up while this one still had it (the page was sent elsewhere and
        # back): that copy is stale. Let it go without ending the conversation.
        await gateway.drop_room(conversation_id)
    return await resume(gateway, conversation_id, token)


async def resume(gateway: Gateway, conversation_id: str, token: str) -> Room | None:
    """Rebuild a conversation from the records, if the token opens it and it may go on."""
    from gateway.server.app import Room

    recorder = gateway.recorder
    if recorder is None:
        return None
    if conversation_id in gateway.rooms:  # taken up meanwhile (two rejoins racing)
        return gateway.find_room(conversation_id, token)
    try:
        holder = recorder.holder(conversation_id)
        if holder is None or not holder.token_digest or holder.ended_at is not None:
            return None
        if not secrets.compare_digest(holder.token_digest, token_digest(token)):
            return None
        # As a held room is ended rejoin_s after its page went, one nobody touched for that
        # long is over.
        if datetime.now(UTC) - holder.updated_at > timedelta(seconds=gateway.settings.rejoin_s):
            return None
        stored = recorder.get_conversation(conversation_id)
    except RecordsError:
        log.exception("conversation %s: could not read it back", conversation_id)
        return None
    state = floor_state(stored)
    user = next(
        (i for i in state.conversants if i.speaker_uri == stored.info.user_speaker_uri), None
    )
    if user is None:
        log.warning("conversation %s: the person is not on its recorded floor", conversation_id)
        return None
    conversation = FloorHost(
        conversation_id,
        user=user,
        resolve=gateway.directory.resolve,
        on_user=lambda e: None,
        # Through the same wrapper as a new room: the person's voice is kept only if told.
        recorder=gateway.voice_records,
        limits=Limits(),
        restore=state,
    )
    recall_builtins(gateway, stored, state)
    room = Room(conversation, token)
    room.history.extend(page_history(stored))
    gateway.rooms[conversation_id] = room
    gateway.metrics.conversations.set(len(gateway.rooms))
    hold(gateway, conversation_id)
    log.info(
        "conversation %s taken up from the records (%d records, %d conversants)",
        conversation_id,
        len(stored.records),
        len(state.conversants),
    )
    return room


def recall_builtins(gateway: Gateway, stored: StoredConversation, state: FloorState) -> int:
    """Replay to each built-in conversant the last :data:`RECALL_ENVELOPES` envelopes delivered to
    it, discarding its answers, so its memory of the conversation is as on the node that died.
    Returns how many envelopes were replayed."""
    replayed = 0
    for ident in state.conversants:
        if not ident.service_url.startswith(BUILTIN_SCHEME):
            continue
        try:
            agent = gateway.directory.resolve(ident.service_url)
        except UnknownAgent:  # a built-in this node does not serve
            continue
        respond = getattr(agent, "respond", None)
        if respond is None:
            continue
        delivered = [
            r
            for r in stored.records
            if r.kind == "envelope" and r.direction == "out" and r.peer == ident.speaker_uri
        ][-RECALL_ENVELOPES:]
        for record in delivered:
            envelope = read_envelope(record)
            if envelope is None:
                continue
            try:
                respond(envelope)  # what it would say was said already, on the other node
            except Exception:  # a built-in's bug on one old envelope must not stop the take-up
                log.exception("%s could not replay a recorded envelope", ident.service_url)
            replayed += 1
    return replayed


def floor_state(stored: StoredConversation) -> FloorState:
    """The floor as last recorded: conversants (their manifests' identities), grants, convener."""
    last = next((r for r in reversed(stored.records) if r.kind == "floor"), None)
    if last is None:
        return FloorState([], [], None)
    conversants = []
    for wire in last.data.get("conversants", []):
        try:
            conversants.append(Identification.model_validate(wire))
        except ValueError:
            log.warning("conversation %s: unreadable conversant skipped", stored.info.id)
    granted = [u for u in last.data.get("floorGranted", []) if isinstance(u, str)]
    convener = last.data.get("convener")
    return FloorState(conversants, granted, convener if isinstance(convener, str) else None)


def page_history(stored: StoredConversation, limit: int | None = None) -> list[dict[str, Any]]:
    """The page's history (``transcript`` and ``utterance`` UI events, as the session sends them)
    from the envelopes the person sent to the floor and those the floor delivered to them."""
    from gateway.server.app import HISTORY_EVENTS

    person = stored.info.user_speaker_uri
    events: deque[dict[str, Any]] = deque(maxlen=limit or HISTORY_EVENTS)
    for record in stored.records:
        if record.kind != "envelope" or record.peer != person:
            continue
        envelope = read_envelope(record)
        if envelope is None:
            continue
        names = {
            c.identification.speaker_uri: c.identification.display_name
            for c in envelope.conversation.conversants or []
        }
        for event in envelope.events:
            de = event.dialog_event
            if de is None or event.event_type.value != "utterance":
                continue
            if record.direction == "in":
                transcript: dict[str, Any] = {"type": "transcript", "text": de.text(), "id": de.id}
                text = de.features.get("text")
                confidence = text.tokens[0].confidence if text and text.tokens else None
                if set(de.features) == {"text"} and confidence is None:
                    transcript["typed"] = True  # speech carries its confidence, words, audio
                elif confidence is not None:
                    transcript["confidence"] = round(confidence, 3)
                events.append(transcript)
                continue
            html = [
                str(t.value)
                for name, f in de.features.items()
                if f.mime_type in ("text/html", "application/xhtml+xml") or name == "html"
                for t in f.tokens
                if isinstance(t.value, str)
            ]
            events.append(
                {
                    "type": "utterance",
                    "id": de.id,
                    "speakerUri": de.speaker_uri,
                    "speaker": names.get(de.speaker_uri, de.speaker_uri),
                    "text": de.text(),
                    "html": html,
                    "private": event.is_private,
                }
            )
    return list(events)
