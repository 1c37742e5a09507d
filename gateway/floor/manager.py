"""The floor manager of one conversation, as a sans-I/O state machine.

Like the ``Protocol`` of python-websockets, :class:`Floor` never touches a socket or a clock: it is
handed envelopes and returns :class:`Delivery` objects saying what to send to whom. The async host
(:mod:`gateway.floor.host`) does the sending and feeds replies back in.

What it implements, from OFP 1.1.0 §2.2 with the 1.1.1 draft's utterance row:

* **Curation** of ``conversants`` (added when an invite is sent to them; removed on
  ``declineInvite`` or ``bye`` from them, or an ``uninvite`` sent to them) and ``floorGranted``
  (granted on joining; lost on ``yieldFloor`` from them, ``revokeFloor`` to them, or removal;
  restored by ``grantFloor`` to them; ``requestFloor`` changes nothing by itself).
* **Routing**: pass-through events go to every conversant but their sender; a private utterance goes
  only to its ``to``. With a convener, the events of :data:`DELEGATED` (and utterances from a sender
  without the floor) are delegated: sent alone, in their own envelope, to the convener, whose
  reply's events are inserted at the head of the remaining list. Without a convener,
  ``requestFloor`` is answered with ``grantFloor`` and an utterance from a sender without the
  floor is ignored.
* **Order**: envelopes are processed in arrival order and events in listed order; while a delegated
  event awaits the convener, later envelopes wait in a bounded queue.
* The ``conversation`` section of every envelope sent is rewritten with the current state.

Events sent by the convener itself, or by the floor manager (:meth:`Floor.inject`), are never
delegated: they are the authority the table delegates to, and delegating them would loop.

The minimal convener (§0.4.2, this gateway's policy; docs/floor.md):

* A **protected** conversant (the person, :meth:`Floor.protect`) cannot be uninvited, nor have
  its floor revoked, by anyone but the floor manager — not by an agent, not by the convener. The
  event is not applied nor passed on; it is kept in :attr:`Floor.refused` for the host to report.
* An utterance from a protected conversant addressed (``to``) to a conversant that yielded or lost
  the floor first sends that conversant a ``grantFloor`` from the floor manager: §2.1 lets an agent
  speak again when an utterance is directed to it, and the floor must then pass what it says.
* A ``requestFloor`` whose ``to`` names another conversant (not the floor manager nor the
  convener) asks the floor for that conversant (§0.4.3); without a convener it is granted to them.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum

from gateway.agents.urls import normalize_service_url
from gateway.errors import Busy
from gateway.ofp import (
    VERSION,
    Conversant,
    Conversation,
    Envelope,
    Event,
    EventType,
    Identification,
    Sender,
    To,
)

#: Events that go to the convener when there is one (§2.2 table, "Delegate to Convener").
DELEGATED = frozenset(
    {
        EventType.INVITE,
        EventType.UNINVITE,
        EventType.REQUEST_FLOOR,
        EventType.GRANT_FLOOR,
        EventType.REVOKE_FLOOR,
    }
)


class Route(Enum):
    """What the floor does with one event."""

    PASS = "pass-through"
    DELEGATE = "delegate"
    IGNORE = "ignore"
    GRANT = "send grantFloor"


def route_for(event_type: EventType, *, has_convener: bool, sender_has_floor: bool) -> Route:
    """The §2.2 table (1.1.1 utterance row) for an event from an ordinary conversant."""
    if event_type is EventType.UTTERANCE:
        if sender_has_floor:
            return Route.PASS
        return Route.DELEGATE if has_convener else Route.IGNORE
    if event_type in DELEGATED:
        if has_convener:
            return Route.DELEGATE
        return Route.GRANT if event_type is EventType.REQUEST_FLOOR else Route.PASS
    return Route.PASS


@dataclass(frozen=True, slots=True)
class Refused:
    """An event the floor did not apply: ``sender`` tried it against a protected conversant."""

    sender: Sender
    event: Event
    target: Identification


class FloorBusy(Busy):
    """Too many envelopes are waiting while the convener decides; the new one was not queued."""


@dataclass(frozen=True, slots=True)
class Delivery:
    """One envelope for one recipient.

    ``awaits_reply`` marks a delegation: the host must pass the convener's reply (or ``None`` if
    it failed) to :meth:`Floor.convener_replied` before anything else of this conversation moves.
    """

    recipient: Identification
    envelope: Envelope
    awaits_reply: bool = False


@dataclass(slots=True)
class _Pending:
    """An envelope whose events are being processed."""

    sender: Sender
    events: deque[Event]
    authority: bool  # sent by the convener or the floor manager: never delegated


def _provisional(speaker_uri: str | None, service_url: str | None) -> Identification:
    """An identity for an agent known only by address, until it tells us more."""
    uri = speaker_uri or service_url or ""
    url = service_url or ""
    host = url.split("://", 1)[-1].split("/", 1)[0] if url else uri
    return Identification(
        speaker_uri=uri, service_url=url, organization=host, conversational_name=host, synopsis=""
    )


class Floor:
    """The floor of one conversation.

    ``manager`` is the floor manager's own identity: the sender of events it originates (the
    ``grantFloor`` answering a ``requestFloor`` without convener, the host's ``uninvite``\\ s).
    ``max_queued`` bounds the envelopes waiting while a delegation is outstanding.
    """

    def __init__(
        self, conversation_id: str, *, manager: Identification, max_queued: int = 256
    ) -> None:
        self.conversation_id = conversation_id
        self.manager = manager
        self.max_queued = max_queued
        self._conversants: dict[str, Identification] = {}
        self._granted: dict[str, None] = {}  # ordered set
        self._convener: str | None = None
        # Identities known ahead, by normalised serviceUrl (gateway.agents.urls).
        self._directory: dict[str, Identification] = {}
        self._queue: deque[_Pending] = deque()
        self._current: _Pending | None = None
        self._awaiting: Identification | None = None
        self._delegated: Event | None = None
        self._snapshot: Conversation | None = None
        self._out: list[Delivery] = []
        self._batch: dict[str, tuple[Identification, list[Event]]] = {}
        self._batch_sender: Sender | None = None
        self._protected: set[str] = set()
        # Other service URLs a conversant is reached by (the person's inbound URLs), normalised.
        self._aliases: dict[str, str] = {}
        #: Events refused since the host last took them (:meth:`take_refused`).
        self.refused: list[Refused] = []

    # ------------------------------------------------------------------ state, read-only views
    @property
    def conversants(self) -> list[Identification]:
        """Everyone in the conversation, in the order they joined."""
        return list(self._conversants.values())

    @property
    def floor_granted(self) -> list[str]:
        """Speaker URIs of conversants who currently hold floor rights."""
        return list(self._granted)

    @property
    def convener(self) -> str | None:
        """The speaker URI of the convener, if one is assigned."""
        return self._convener

    @property
    def awaiting_convener(self) -> bool:
        """True while a delegated event waits for the convener's answer."""
        return self._awaiting is not None

    @property
    def queued(self) -> int:
        """Envelopes received but not yet processed."""
        return len(self._queue)

    def conversant(self, speaker_uri: str) -> Identification | None:
        """The conversant with this speaker URI, if present."""
        return self._conversants.get(speaker_uri)

    def find(
        self, *, speaker_uri: str | None = None, service_url: str | None = None
    ) -> Identification | None:
        """A conversant by speaker URI, else by service URL."""
        if speaker_uri and speaker_uri in self._conversants:
            return self._conversants[speaker_uri]
        if service_url:
            key = normalize_service_url(service_url)
            for ident in self._conversants.values():
                if ident.service_url and normalize_service_url(ident.service_url) == key:
                    return ident
            alias = self._aliases.get(key)
            if alias is not None:
                return self._conversants.get(alias)
        return None

    def alias(self, service_url: str, speaker_uri: str) -> None:
        """Know ``service_url`` as another address of the conversant ``speaker_uri`` (an agent
        that answers the person at the inbound URL it was given means the person)."""
        self._aliases[normalize_service_url(service_url)] = speaker_uri

    def conversation(self) -> Conversation:
        """The ``conversation`` section as the floor publishes it now."""
        if self._snapshot is None:
            self._snapshot = Conversation.model_construct(
                id=self.conversation_id,
                conversants=[
                    Conversant.model_construct(identification=i) for i in self._conversants.values()
                ],
                assigned_floor_roles={"convener": [self._convener] if self._convener else []},
                floor_granted=list(self._granted),
            )
        return self._snapshot

    # ------------------------------------------------------------------ set-up by the host
    def know(self, identification: Identification) -> None:
        """Register an agent's identity (its manifest) so an invite by URL gets its real name."""
        if identification.service_url:
            self._directory[normalize_service_url(identification.service_url)] = identification

    def join(self, identification: Identification, *, convener: bool = False) -> None:
        """Add a conversant directly (the person's proxy at the start, or a convener the manager
        chose); it joins with the floor, as §2.2 says for every new conversant."""
        self._add(identification)
        if convener:
            self.assign_convener(identification.speaker_uri)

    def protect(self, speaker_uri: str) -> None:
        """Nobody but the floor manager may uninvite this conversant or revoke its floor (the
        person: an agent must not be able to shut them out of their own conversation)."""
        self._protected.add(speaker_uri)

    def take_refused(self) -> list[Refused]:
        """The events refused since the last call (and forget them)."""
        out, self.refused = self.refused, []
        return out

    def restore(
        self, conversants: list[Identification], floor_granted: list[str], convener: str | None
    ) -> None:
        """Take up a conversation another floor held (its node died or was drained) in the state
        it last recorded. Only an idle floor can: nothing may be queued or awaited."""
        if self._current is not None or self._awaiting is not None or self._queue:
            raise RuntimeError("restore() on a floor that is processing envelopes")
        self._conversants = {i.speaker_uri: i for i in conversants}
        self._granted = {u: None for u in floor_granted if u in self._conversants}
        self._convener = convener if convener in self._conversants else None
        self._changed()

    def update_identity(self, identification: Identification) -> bool:
        """Take a conversant's names from its manifest (found by service URL), keeping the
        speaker URI it is known by on this floor. Returns whether anything changed."""
        current = self.find(service_url=identification.service_url)
        if current is None:
            return False
        updated = identification.model_copy(update={"speaker_uri": current.speaker_uri})
        if updated == current:
            return False
        self._conversants[current.speaker_uri] = updated
        self._changed()
        return True

    def assign_convener(self, speaker_uri: str | None) -> None:
        """Make a conversant the convener (at most one), or clear the role with ``None``."""
        if speaker_uri is not None and speaker_uri not in self._conversants:
            raise ValueError(
                f"{speaker_uri} is not a conversant; invite it before making it convener"
            )
        self._convener = speaker_uri
        self._changed()

    # ------------------------------------------------------------------ input
    def receive(self, envelope: Envelope, *, origin: str | None = None) -> list[Delivery]:
        """Process an envelope from a conversant (or a would-be one); return what to send.

        ``origin`` is the service URL the transport got it from, when known: an agent first
        known only by URL is renamed to the speaker URI it now reports.
        """
        if origin:
            self._learn_name(origin, envelope.sender)
        sender = envelope.sender.speaker_uri
        authority = sender == self._convener or sender == self.manager.speaker_uri
        return self._enqueue(_Pending(envelope.sender, deque(envelope.events), authority))

    def inject(self, events: list[Event]) -> list[Delivery]:
        """Process events originated by the floor manager itself (never delegated)."""
        sender = Sender(
            speaker_uri=self.manager.speaker_uri, service_url=self.manager.service_url or None
        )
        return self._enqueue(_Pending(sender, deque(events), True))

    def convener_replied(self, reply: Envelope | None, *, fallback: bool = False) -> list[Delivery]:
        """Resume after a delegation with the convener's reply. Its events go at the head of the
        remaining list. ``None``: it failed or timed out — the delegated event is dropped, or,
        with ``fallback``, the convener loses its role and the event is handled by the floor as
        the minimal convener (the table's "if no convener" column)."""
        if self._awaiting is None or self._current is None:
            raise RuntimeError("convener_replied() without an outstanding delegation")
        self._awaiting = None
        if reply is None and fallback:
            self._convener = None
            self._changed()
            if self._delegated is not None:
                self._current.events.appendleft(self._delegated)
            self._delegated = None
            return self._run()
        self._delegated = None
        if reply is not None and reply.events:
            convener_sender = reply.sender
            # The convener's events run first, under its authority, then the rest of the envelope.
            rest = self._current
            self._queue.appendleft(rest)
            self._current = _Pending(convener_sender, deque(reply.events), True)
        return self._run()

    # ------------------------------------------------------------------ processing
    def _enqueue(self, pending: _Pending) -> list[Delivery]:
        if self._awaiting is not None or self._current is not None:
            if len(self._queue) >= self.max_queued:
                raise FloorBusy(
                    f"{len(self._queue)} envelopes already wait for the convener; try again shortly"
                )
            self._queue.append(pending)
            return []
        self._current = pending
        return self._run()

    def _run(self) -> list[Delivery]:
        while self._awaiting is None:
            if self._current is None:
                if not self._queue:
                    break
                self._current = self._queue.popleft()
            cur = self._current
            while cur.events and self._awaiting is None:
                self._step(cur, cur.events.popleft())
            if self._awaiting is None:
                self._current = None
        self._flush()
        out, self._out = self._out, []
        return out

    def _step(self, cur: _Pending, event: Event) -> None:
        sender = cur.sender.speaker_uri
        if self._refuses(cur.sender, event):
            return
        if cur.authority:
            route = (
                Route.GRANT
                if (event.event_type is EventType.REQUEST_FLOOR and self._convener is None)
                else Route.PASS
            )
        else:
            route = route_for(
                event.event_type,
                has_convener=self._convener is not None,
                sender_has_floor=sender in self._granted,
            )
        if route is Route.IGNORE:
            return
        if (
            event.event_type is EventType.UTTERANCE
            and sender in self._protected
            and route is Route.PASS
        ):
            self._regrant_addressee(event)
        if route is Route.DELEGATE:
            # route_for delegates only when there is a convener (``has_convener`` above).
            assert self._convener is not None
            convener = self._conversants[self._convener]
            self._flush()
            env = Envelope.model_construct(
                conversation=self.conversation(),
                sender=cur.sender,
                events=[event],
                version=VERSION,
                dialect="openFloor",
                ignored=[],
            )
            self._out.append(Delivery(convener, env, awaits_reply=True))
            self._awaiting = convener
            self._delegated = event
            return
        if route is Route.GRANT:
            # No convener: the floor manager answers for it (§2.2), and the grant is routed like
            # any grantFloor so every conversant sees the floor change.
            requester = self._on_behalf_of(event) or (
                self.find(speaker_uri=sender) or self.find(service_url=cur.sender.service_url)
            )
            if requester is None:
                return  # only a conversant can hold the floor
            grant = Event(
                event_type=EventType.GRANT_FLOOR,
                to=To(speaker_uri=requester.speaker_uri),
                reason=event.reason,
            )
            manager = Sender(
                speaker_uri=self.manager.speaker_uri, service_url=self.manager.service_url or None
            )
            self._pass(manager, grant)
            return
        self._pass(cur.sender, event)

    def _manager_sender(self) -> Sender:
        return Sender(
            speaker_uri=self.manager.speaker_uri, service_url=self.manager.service_url or None
        )

    def _refuses(self, sender: Sender, event: Event) -> bool:
        """Whether ``event`` tries to remove a protected conversant or take its floor (and is
        kept in :attr:`refused` instead of applied)."""
        if event.event_type not in (EventType.UNINVITE, EventType.REVOKE_FLOOR):
            return False
        if sender.speaker_uri == self.manager.speaker_uri:
            return False
        target = self._target(event)
        if target is None or target.speaker_uri not in self._protected:
            return False
        if sender.speaker_uri == target.speaker_uri:
            return False  # the person may give up their own floor
        self.refused.append(Refused(sender, event, target))
        return True

    def _regrant_addressee(self, event: Event) -> None:
        """The person addressed a conversant without the floor: give it back first (without a
        convener; a convener decides floor rights itself)."""
        if self._convener is not None:
            return
        target = self._target(event)
        if (
            target is None
            or target.speaker_uri not in self._conversants
            or target.speaker_uri in self._granted
        ):
            return
        grant = Event(
            event_type=EventType.GRANT_FLOOR,
            to=To(speaker_uri=target.speaker_uri, service_url=target.service_url or None),
            reason="the person spoke to this conversant",
        )
        self._pass(self._manager_sender(), grant)

    def _on_behalf_of(self, event: Event) -> Identification | None:
        """The conversant a ``requestFloor`` asks the floor for, when it names one that is
        neither the floor manager nor the convener (those are whom a request is sent to)."""
        target = self._target(event)
        if target is None or target.speaker_uri not in self._conversants:
            return None
        if target.speaker_uri in (self.manager.speaker_uri, self._convener):
            return None
        return target

    def _pass(self, sender: Sender, event: Event) -> None:
        """Pass-through with the curation rules of §2.2."""
        kind = event.event_type
        who = sender.speaker_uri
        target = self._target(event)
        if (
            kind is EventType.INVITE
            and target is not None
            and target.speaker_uri not in self._conversants
        ):
            self._add(target)
        elif (
            kind is EventType.GRANT_FLOOR
            and target is not None
            and target.speaker_uri in self._conversants
        ):
            self._grant(target.speaker_uri)
        elif kind is EventType.REVOKE_FLOOR and target is not None:
            self._revoke(target.speaker_uri)
        elif kind is EventType.YIELD_FLOOR:
            self._revoke(who)
        elif kind in (EventType.DECLINE_INVITE, EventType.BYE):
            self._remove(who)

        if kind is EventType.UTTERANCE and event.is_private:
            recipients = [target] if target is not None else []
        else:
            recipients = [i for u, i in self._conversants.items() if u != who]
            # An event addressed to someone outside the conversation (getManifests to a directory,
            # say) still reaches them.
            if (
                target is not None
                and target.speaker_uri not in self._conversants
                and target.speaker_uri != who
            ):
                recipients.append(target)
        self._queue_for(sender, event, recipients)

        if kind is EventType.UNINVITE and target is not None:
            self._remove(target.speaker_uri)  # after it has been told

    def _target(self, event: Event) -> Identification | None:
        to = event.to
        if to is None:
            return None
        found = self.find(speaker_uri=to.speaker_uri, service_url=to.service_url)
        if found is not None:
            return found
        if to.service_url:
            return self._directory.get(normalize_service_url(to.service_url)) or _provisional(
                to.speaker_uri, to.service_url
            )
        return None

    # ------------------------------------------------------------------ output batching
    def _queue_for(self, sender: Sender, event: Event, recipients: list[Identification]) -> None:
        if self._batch_sender is not None and self._batch_sender != sender:
            self._flush()
        self._batch_sender = sender
        for r in recipients:
            slot = self._batch.get(r.speaker_uri)
            if slot is None:
                self._batch[r.speaker_uri] = (r, [event])
            else:
                slot[1].append(event)

    def _flush(self) -> None:
        if not self._batch or self._batch_sender is None:
            self._batch.clear()
            self._batch_sender = None
            return
        conv = self.conversation()
        sender = self._batch_sender
        for recipient, events in self._batch.values():
            env = Envelope.model_construct(
                conversation=conv,
                sender=sender,
                events=events,
                version=VERSION,
                dialect="openFloor",
                ignored=[],
            )
            self._out.append(Delivery(recipient, env))
        self._batch = {}
        self._batch_sender = None

    # ------------------------------------------------------------------ curation primitives
    def _changed(self) -> None:
        self._snapshot = None

    def _add(self, ident: Identification) -> None:
        if ident.speaker_uri in self._conversants:
            return
        self._conversants[ident.speaker_uri] = ident
        self._granted[ident.speaker_uri] = None
        self._changed()

    def _remove(self, uri: str) -> None:
        if self._conversants.pop(uri, None) is None:
            return
        self._granted.pop(uri, None)
        if self._convener == uri:
            self._convener = None
        self._changed()

    def _grant(self, uri: str) -> None:
        if uri not in self._granted:
            self._granted[uri] = None
            self._changed()

    def _revoke(self, uri: str) -> None:
        if uri in self._granted:
            del self._granted[uri]
            self._changed()

    def _learn_name(self, origin: str, sender: Sender) -> None:
        """Rename the conversant reached at ``origin`` to the speaker URI it reports.

        An invited agent need not adopt the speakerUri it was invited by (§1.12), and an agent
        invited by URL has none until it answers. The transport knows whom it got the envelope
        from, so that conversant takes the sender's speaker URI.
        """
        new = sender.speaker_uri
        if not new or new in self._conversants:
            return
        found = self.find(service_url=origin)
        if found is None:
            return
        uri = found.speaker_uri
        renamed = self._conversants[uri].model_copy(update={"speaker_uri": new})
        # Rebuild the ordered mappings so the conversant keeps its place.
        self._conversants = {
            (new if k == uri else k): (renamed if k == uri else v)
            for k, v in self._conversants.items()
        }
        if uri in self._granted:
            self._granted = {(new if k == uri else k): None for k in self._granted}
        if self._convener == uri:
            self._convener = new
        self._changed()
