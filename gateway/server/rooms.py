"""Conversations (rooms): opened, kept for a rejoin, ended, and taken up by any node.

A :class:`Room` is one conversation this node holds, with or without a page attached. When its
page goes, the room waits ``rejoin_s`` for the same page (conversation id + token) to come back;
:func:`expired` and :func:`beyond_limit` decide which rooms to end, on a time they are given (the
gateway's monotonic clock), so they are tested without waiting.

Across nodes: a node that opens a conversation stores the SHA-256 of its rejoin token and its own
name as the holder (:meth:`Recorder.hold`). When a page rejoins a conversation this node does not
hold — its node died or was drained, and the balancer sent the page here — :func:`resume` checks
the token against the digest and rebuilds the conversation from its records: the person, the
conversants with their manifests' identities, floor grants and convener from the last floor
record, and the page's history from the envelopes the person sent and received. The node then
holds it; the node that held it before, if alive, finds it is no longer the holder and lets its
copy go without ending it.

The built-in agents run inside each node and remember the last utterances of a conversation
(the concierge passes them on as dialog history): the new node's built-ins are replayed the last
envelopes the records say were delivered to them, their answers discarded, so they remember what
they had heard. Remote agents keep their own state, by conversation id.

What a node failure loses: audio being spoken or heard at that moment (the utterance not yet
ended, a reply being played), deliveries in flight (an agent reply not yet received is not asked
for again), and notices shown on the page (they are not records).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from gateway.agents.builtin.base import BuiltinAgent
from gateway.agents.errors import AgentError, UnknownAgent
from gateway.agents.urls import BUILTIN_SCHEME
from gateway.floor.host import FloorHost, FloorState, limits, user_identity
from gateway.floor.inbound import InboundDesk
from gateway.ofp import Identification
from gateway.records.base import token_digest
from gateway.records.errors import RecordsError
from gateway.records.model import Holder, StoredConversation
from gateway.records.reading import read_envelope, replaced
from gateway.server import access
from gateway.server.messages import (
    AgentUtterance,
    FinalTranscript,
    FloorUpdate,
    FromGateway,
    HistoryEvent,
    PageNotice,
)
from gateway.server.metrics import Metrics
from gateway.server.settings import GatewaySettings

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection

    from gateway.agents.directory import AgentDirectory
    from gateway.records.kept import KeptRecords
    from gateway.server.clips import VoiceRecords

log = logging.getLogger(__name__)


class Page(Protocol):
    """What a room knows of the page attached to it (a
    :class:`~gateway.server.connection.PageConnection`): its WebSocket, and how to let it go."""

    ws: ServerConnection

    async def detach(self) -> None:
        """Stop the page's session; the room waits for a rejoin."""


class RoomServices(Protocol):
    """What the rooms need of the node they run on (the :class:`~gateway.server.app.Gateway`
    gives it): a handle, so this module does not import the server above it."""

    settings: GatewaySettings
    directory: AgentDirectory
    #: The store, wrapped so that its failing costs no record (records/kept.py).
    @property
    def recorder(self) -> KeptRecords | None: ...

    voice_records: VoiceRecords | None
    metrics: Metrics
    node: str
    #: Agents' inbound URLs (gateway/floor/inbound.py).
    inbound: InboundDesk


#: UI events kept per conversation to re-draw a reloaded page.
HISTORY_EVENTS = 300


@dataclass
class Room:
    """One conversation held by this gateway, with or without a page attached."""

    conversation: FloorHost
    token: str
    #: What a reloaded page is sent to re-draw the conversation (its ``welcome``'s history).
    history: deque[HistoryEvent] = field(default_factory=lambda: deque(maxlen=HISTORY_EVENTS))
    #: The last floor sent, sent again to a page that rejoins.
    floor: FloorUpdate | None = None
    connection: Page | None = None
    #: When (the gateway's monotonic clock) its page went; None while one is attached.
    detached_at: float | None = None
    #: Taken up from the records after the node that held it stopped: the page that rejoins
    #: is told so, once (server/connection.py).
    taken_up: bool = False

    def remember(self, message: FromGateway) -> None:
        """Keep what a rejoining page needs of a message sent to this room's page."""
        if isinstance(message, FinalTranscript) and message.replaces:
            self._replace(message.replaces)
        if isinstance(message, HistoryEvent):
            self.history.append(message)
        elif isinstance(message, FloorUpdate):
            self.floor = message

    def _replace(self, part: str) -> None:
        """The person went on with ``part`` (a continuation): a reloaded page gets one bubble,
        the whole request, and not what answered the part (as the page itself drops them:
        web/state.js ``replaced``). Notices stay."""
        kept = list(self.history)
        at = next(
            (i for i, m in enumerate(kept) if isinstance(m, FinalTranscript) and m.id == part),
            None,
        )
        if at is None:
            return
        self.history = deque(
            (m for i, m in enumerate(kept) if i < at or (i > at and isinstance(m, PageNotice))),
            maxlen=HISTORY_EVENTS,
        )

    def attach(self, connection: Page) -> None:
        """``connection`` is now this room's page."""
        self.connection = connection
        self.detached_at = None

    def detach(self, connection: Page, now: float) -> None:
        """``connection`` went at ``now``; the room waits for a rejoin (unless another page
        has taken it meanwhile)."""
        if self.connection is connection:
            self.connection = None
            self.detached_at = now


def expired(rooms: Mapping[str, Room], now: float, rejoin_s: float) -> list[str]:
    """The rooms whose page went more than ``rejoin_s`` before ``now``: not coming back."""
    return [
        room_id
        for room_id, room in rooms.items()
        if room.connection is None
        and room.detached_at is not None
        and now - room.detached_at > rejoin_s
    ]


def beyond_limit(rooms: Mapping[str, Room], max_detached: int) -> list[str]:
    """The rooms to end so that at most ``max_detached`` wait for a rejoin: those detached
    longest, so visitors coming and going cannot pile conversations up."""
    detached = sorted(
        (room.detached_at, room_id)
        for room_id, room in rooms.items()
        if room.connection is None and room.detached_at is not None
    )
    return [room_id for _, room_id in detached[: max(0, len(detached) - max_detached)]]


class RoomRegistry(Mapping[str, Room]):
    """This node's rooms by conversation id, and their lifecycle: opened, found for a rejoin or
    taken up from the records, let go, ended. Read like a mapping (``len``, ``get``, ``in``);
    only its methods add or remove a room."""

    def __init__(self, services: RoomServices) -> None:
        self.services = services
        self._rooms: dict[str, Room] = {}

    def __getitem__(self, room_id: str) -> Room:
        return self._rooms[room_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rooms)

    def __len__(self) -> int:
        return len(self._rooms)

    def expired(self, now: float, rejoin_s: float) -> list[str]:
        """:func:`expired` of this node's rooms."""
        return expired(self._rooms, now, rejoin_s)

    def beyond_limit(self, max_detached: int) -> list[str]:
        """:func:`beyond_limit` of this node's rooms."""
        return beyond_limit(self._rooms, max_detached)

    async def open(self) -> tuple[str, Room]:
        """A new conversation with the configured agents invited."""
        conv_id = f"conv:{uuid.uuid4()}"
        user = user_identity(
            f"user:{conv_id[5:13]}", name="You", service_url=self.services.settings.base_url
        )
        conv = FloorHost(
            conv_id,
            user=user,
            resolve=self.services.directory.resolve,
            recorder=self.services.voice_records if self.services.recorder is not None else None,
            limits=limits(
                self.services.settings.max_agent_exchanges, self.services.settings.slow_notice_s
            ),
            inbound=self.services.inbound,
        )
        conv.history_keeps_audio = self.services.settings.keep_audio  # the voice in history too
        room = Room(conv, secrets.token_urlsafe(18))
        self._rooms[conv_id] = room
        self.services.metrics.conversations.set(len(self._rooms))
        if self.services.recorder is not None:
            try:
                self.services.recorder.conversation_started(
                    conv_id, at=datetime.now(UTC), title="", user_speaker_uri=user.speaker_uri
                )
            except RecordsError:  # records must never take the conversation down (nor stop it)
                log.exception("conversation %s: could not record its start", conv_id)
        self.hold(conv_id, room.token)  # so any node can take it up
        for url in self.services.settings.agents:
            with contextlib.suppress(AgentError):  # the invite reports what is wrong with it
                conv.know(self.services.directory.resolve(url).manifest.identification)
        return conv_id, room

    def find(self, conv_id: Any, token: Any) -> Room | None:
        """This node's room for a rejoin, if the id and token match."""
        room = self._rooms.get(conv_id) if isinstance(conv_id, str) else None
        if room is None or not isinstance(token, str) or not access.same_secret(token, room.token):
            return None
        return room

    async def drop(self, room_id: str) -> None:
        """Let a conversation go without ending it (another node holds or will hold it)."""
        room = self._rooms.pop(room_id, None)
        if room is None:
            return
        if room.connection is not None:
            await room.connection.detach()
        await room.conversation.close()
        self.services.metrics.conversations.set(len(self._rooms))

    async def end(self, room_id: str, status: str) -> None:
        """End a conversation: its agents get a bye, its record its end (``status``)."""
        if self.held_elsewhere(room_id):
            # Another node took it up: the conversation goes on there, so no bye and no end.
            await self.drop(room_id)
            return
        room = self._rooms.pop(room_id, None)
        if room is None:
            return
        try:
            # The agents are told: a bye from the person, waited for Limits.bye_timeout_s.
            if not await room.conversation.end():
                log.warning(
                    "conversation %s: an agent did not take its bye within %g s; ended anyway",
                    room_id,
                    room.conversation.limits.bye_timeout_s,
                )
        except Exception:  # one room's bug must not keep the others (or the server) from ending
            log.exception("conversation %s: could not say bye", room_id)
        await room.conversation.close()
        self.services.metrics.conversations.set(len(self._rooms))
        if self.services.recorder is not None:
            try:
                self.services.recorder.conversation_ended(
                    room_id, at=datetime.now(UTC), status=status
                )
            except RecordsError:
                log.exception("conversation %s: could not record its end", room_id)

    # ------------------------------------------------------------------ across nodes
    def hold(self, conversation_id: str, token: str | None = None) -> None:
        """Record that this node holds the conversation (with its token's digest when new)."""
        if self.services.recorder is None:
            return
        try:
            self.services.recorder.hold(
                conversation_id,
                node=self.services.node,
                token_digest=token_digest(token) if token is not None else None,
            )
        except RecordsError:  # the conversation goes on; only taking it up elsewhere would fail
            log.exception("conversation %s: could not record its holder", conversation_id)

    def held_elsewhere(self, conversation_id: str) -> bool:
        """Whether the records say another node has taken this conversation up."""
        holder = self._holder(conversation_id)
        return holder is not None and bool(holder.node) and holder.node != self.services.node

    def _holder(self, conversation_id: str) -> Holder | None:
        """Who the records say holds a conversation (None: nobody, no records, or unreadable)."""
        if self.services.recorder is None:
            return None
        try:
            return self.services.recorder.holder(conversation_id)
        except RecordsError:
            log.exception("conversation %s: could not read its holder", conversation_id)
            return None

    def token_ok(self, conversation_id: str, token: Any) -> bool:
        """Whether ``token`` opens the conversation: held here, or by its stored digest."""
        if not isinstance(token, str) or not token:
            return False
        room = self._rooms.get(conversation_id)
        if room is not None:
            return access.same_secret(
                token, room.token
            )  # any text: non-ASCII is refused, not a 500
        holder = self._holder(conversation_id)
        return (
            holder is not None
            and bool(holder.token_digest)
            and secrets.compare_digest(holder.token_digest, token_digest(token))
        )

    async def find_or_resume(self, conversation_id: Any, token: Any) -> Room | None:
        """The room a rejoining page asks for: this node's, else taken up from the records."""
        if not isinstance(conversation_id, str) or not isinstance(token, str):
            return None
        room = self.find(conversation_id, token)
        if room is not None and not self.held_elsewhere(conversation_id):
            return room
        if room is not None:
            # Another node took it up while this one still had it (the page was sent elsewhere and
            # back): that copy is stale. Let it go without ending the conversation.
            await self.drop(conversation_id)
        return await self.resume(conversation_id, token)

    async def resume(self, conversation_id: str, token: str) -> Room | None:
        """Rebuild a conversation from the records, if the token opens it and it may go on."""
        recorder = self.services.recorder
        if recorder is None:
            return None
        if conversation_id in self._rooms:  # taken up meanwhile (two rejoins racing)
            return self.find(conversation_id, token)
        try:
            holder = recorder.holder(conversation_id)
            if holder is None or not holder.token_digest or holder.ended_at is not None:
                return None
            if not secrets.compare_digest(holder.token_digest, token_digest(token)):
                return None
            # As a held room is ended rejoin_s after its page went, one nobody touched for that
            # long is over.
            if datetime.now(UTC) - holder.updated_at > timedelta(
                seconds=self.services.settings.rejoin_s
            ):
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
            resolve=self.services.directory.resolve,
            # Through the same wrapper as a new room: the person's voice is kept only if told.
            recorder=self.services.voice_records,
            limits=limits(
                self.services.settings.max_agent_exchanges, self.services.settings.slow_notice_s
            ),
            restore=state,
            inbound=self.services.inbound,
        )
        conversation.history_keeps_audio = self.services.settings.keep_audio
        recall_builtins(self.services, stored, state)
        room = Room(conversation, token, taken_up=True)
        room.history.extend(page_history(stored))
        self._rooms[conversation_id] = room
        self.services.metrics.conversations.set(len(self._rooms))
        self.hold(conversation_id)
        log.info(
            "conversation %s taken up from the records (%d records, %d conversants)",
            conversation_id,
            len(stored.records),
            len(state.conversants),
        )
        return room


#: Envelopes replayed to a built-in agent on taking a conversation up: enough to refill its
#: memory (the last 8 utterances) with room for the floor events between them.
RECALL_ENVELOPES = 64


def recall_builtins(services: RoomServices, stored: StoredConversation, state: FloorState) -> int:
    """Replay to each built-in conversant the last :data:`RECALL_ENVELOPES` envelopes delivered to
    it, discarding its answers, so its memory of the conversation is as on the node that died.
    Returns how many envelopes were replayed."""
    replayed = 0
    for ident in state.conversants:
        if not ident.service_url.startswith(BUILTIN_SCHEME):
            continue
        try:
            agent = services.directory.resolve(ident.service_url)
        except UnknownAgent:  # a built-in this node does not serve
            continue
        if not isinstance(agent, BuiltinAgent):
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
                agent.respond(envelope)  # what it would say was said already, on the other node
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


def page_history(stored: StoredConversation, limit: int | None = None) -> list[HistoryEvent]:
    """The page's history (``transcript`` and ``utterance`` messages, as the session sends them)
    from the envelopes the person sent to the floor and those the floor delivered to them.

    As the page showed it: a request the person went on with (a continuation) is one bubble,
    the whole request, and what answered its first part is not shown (:func:`replaced`)."""
    person = stored.info.user_speaker_uri
    gone = replaced(stored.records, person)
    replaces = {whole: part for part, whole in gone.by.items()}
    events: deque[HistoryEvent] = deque(maxlen=limit or HISTORY_EVENTS)
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
            if de is None or event.event_type.value != "utterance" or gone.hidden(de.id):
                continue
            if record.direction == "in":
                text = de.features.get("text")
                confidence = text.tokens[0].confidence if text and text.tokens else None
                # Speech carries its confidence (and words, audio); typed text only its text.
                typed = set(de.features) == {"text"} and confidence is None
                events.append(
                    FinalTranscript(
                        de.text(),
                        id=de.id,
                        confidence=round(confidence, 3) if confidence is not None else None,
                        typed=True if typed else None,
                        replaces=replaces.get(de.id),
                    )
                )
                continue
            speaker = names.get(de.speaker_uri, de.speaker_uri)
            events.append(AgentUtterance.of(de, speaker=speaker, private=event.is_private))
    return list(events)
