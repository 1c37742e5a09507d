"""One conversation at run time: the floor, the agents it reaches, and the person's proxy.

This is the thin I/O layer over :class:`gateway.floor.Floor` (which decides) — the way the asyncio
layer of python-websockets sits over its sans-I/O protocol. It delivers what the floor says to send
(one mailbox and worker per recipient: sequential, in the floor's order, bounded), feeds replies
back in arrival order, keeps the time (each agent's timeout, "One moment…" after
:attr:`Limits.slow_notice_s`, the ``bye`` at the end) and turns transport failures into facts.
Every rule it applies is a sans-I/O unit beside the manager (docs/floor.md, "Where the rules
live"): what to do about a failing agent (:mod:`~gateway.floor.failures`), agents answering
agents (:mod:`~gateway.floor.exchanges`), hand-overs (:mod:`~gateway.floor.handover`), the
person's wait (:mod:`~gateway.floor.waiting`), ``dialogHistory`` (:mod:`~gateway.floor.history`),
refused invites (:mod:`~gateway.floor.invites`), what each agent is sent
(:mod:`~gateway.floor.recipients`), discovery (:mod:`~gateway.floor.discovery`); what the person
is told, as typed events (:mod:`~gateway.floor.notices`). The person is protected
(:meth:`gateway.floor.Floor.protect`): an agent's attempt to uninvite them or revoke their floor
is not applied, and the person is told what it tried.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from gateway.agents.base import Agent, RemoteAgent
from gateway.agents.errors import AddressRefused, AgentError
from gateway.agents.streaming import ReplyStream, StreamOpener, reply_streams
from gateway.agents.urls import normalize_service_url
from gateway.agents.wire import listening, tap
from gateway.floor import Delivery, Floor, FloorBusy, discovery, notices
from gateway.floor.changes import FloorWatch, Snapshot
from gateway.floor.exchanges import Admission, Exchanges, answering_speaker
from gateway.floor.failures import FailureBounds, Strikes, Verdict
from gateway.floor.handover import HandOver
from gateway.floor.history import DialogHistory
from gateway.floor.inbound import InboundDesk, refused_post
from gateway.floor.invites import screen_invites
from gateway.floor.notices import Notice, NoticeEvent
from gateway.floor.outlet import PersonOutlet
from gateway.floor.recipients import person_reached_at, voice_only_if_wanted
from gateway.floor.routing import Routing
from gateway.floor.waiting import Patience
from gateway.ofp import (
    Conversation,
    DialogEvent,
    Envelope,
    Event,
    EventType,
    Identification,
    Manifest,
    Sender,
    To,
    to_ovon,
)
from gateway.records.errors import RecordsError

if TYPE_CHECKING:
    from gateway.records.base import Recorder

log = logging.getLogger(__name__)

PRODUCT_TAG = "tag:ofp-gateway.local,2025"


def manager_identity(service_url: str = "urn:ofp-gateway:floor") -> Identification:
    """The floor manager's own identity: the sender of the events it originates."""
    return Identification(
        speaker_uri=f"{PRODUCT_TAG}:floor-manager",
        service_url=service_url,
        organization="ofp-gateway",
        conversational_name="Floor",
        role="Floor manager",
        synopsis="The conversation floor manager of this Open Floor gateway.",
    )


def user_identity(
    user_id: str = "user", *, name: str = "User", service_url: str = "urn:ofp-gateway:proxy"
) -> Identification:
    """The person's identity on the floor. ``role`` "User" tells agents a human is speaking."""
    return Identification(
        speaker_uri=f"{PRODUCT_TAG}:{user_id}",
        service_url=service_url,
        organization="ofp-gateway",
        conversational_name=name,
        role="User",
        synopsis="A person speaking through the ofp-gateway user proxy.",
    )


class FloorState(NamedTuple):
    """A floor as last recorded, to take a conversation up on another node."""

    conversants: list[Identification]
    floor_granted: list[str]
    convener: str | None


@dataclass(frozen=True)
class Limits:
    """Bounds of one conversation. Each trades safety against patience; defaults suit voice."""

    #: Envelopes waiting for one recipient; beyond this the recipient is failing to keep up.
    max_queue_per_recipient: int = 64
    #: Consecutive failed deliveries before an agent is uninvited with @error.
    max_failures: int = 3
    #: Consecutive timeouts before an agent is uninvited with @timedOut: one slow answer (a
    #: cold start, a long search) costs an agent a notice, not its place.
    max_timeouts: int = 2
    #: The person's invites carry the last utterances as ``dialogHistory`` (§1.12), at most
    #: this many and this many bytes of JSON (the newest kept), so a newcomer has context.
    history_events: int = 10
    #: Bytes of JSON that ``dialogHistory`` may take (the newest utterances kept).
    history_bytes: int = 32_000
    #: Agent envelopes accepted in one person turn, in all (a hard bound on any fan-out).
    max_agent_envelopes: int = 64
    #: Agents answering agents in one person turn: an agent's reply to the person is depth 1;
    #: another agent answering that reply is exchange 1, and so on. A spoken conversation has
    #: room for a few; beyond this the replies are dropped and the person told once.
    max_agent_exchanges: int = 2
    #: Conversants beyond the person (bounded so a hostile agent cannot invite thousands).
    max_agents: int = 32
    #: Seconds the agents get to receive the person's ``bye`` when the conversation ends; a dead
    #: agent delays the end (a server's shutdown, ``talk``'s exit) by at most this.
    bye_timeout_s: float = 2.0
    #: Seconds the person waits for an answer to what they said before the floor says, once,
    #: "One moment…" — naming the agent it is still waiting on when it knows which — shown and
    #: spoken (the agent is still waited for, up to its timeout): a hung agent otherwise leaves
    #: the person in silence for the whole timeout (10 s). 0: never said.
    slow_notice_s: float = 3.0
    #: Seconds an invite waits for the agent's manifest before inviting it by URL alone.
    manifest_timeout_s: float = 3.0


def limits(max_agent_exchanges: int | None = None, slow_notice_s: float | None = None) -> Limits:
    """The default :class:`Limits`, with the bounds a command was given (None: the default)."""
    out = Limits()
    if max_agent_exchanges is not None:
        out = replace(out, max_agent_exchanges=max_agent_exchanges)
    if slow_notice_s is not None:
        out = replace(out, slow_notice_s=slow_notice_s)
    return out


class AgentResolver(Protocol):
    """The agent at a service URL (an agent directory's ``resolve``).

    The one function the host is handed, and a strategy rather than wiring: which agents exist
    and which addresses may be reached is the directory's policy (built-ins, the address
    policy, HTTP settings), and a test or another node passes a directory of its own.
    """

    def __call__(self, service_url: str, /) -> Agent:
        """The agent; raises :class:`AgentError` (``UnknownAgent``, ``AddressRefused``) for an
        address it cannot or may not reach."""
        ...


@dataclass
class _Mailbox:
    #: Each delivery with its depth: how many agent envelopes lead back to the person.
    queue: asyncio.Queue[tuple[Delivery, int]]
    task: asyncio.Task[None]
    strikes: Strikes = field(default_factory=Strikes)


class FloorHost:
    """Runs one conversation.

    ``resolve`` maps a service URL to an :class:`Agent` (built-in or HTTP). ``outlet`` is the
    person's side (:class:`~gateway.floor.outlet.PersonOutlet`): every envelope the floor
    delivers to the person, what the gateway itself must tell them, the floor's changes (None:
    no one until a proxy attaches, :meth:`attach`). ``recorder`` (optional) keeps every envelope
    in and out and every floor change.
    ``restore`` takes the conversation up in a recorded floor state (the person among its
    conversants) instead of starting it with the person alone.
    """

    def __init__(
        self,
        conversation_id: str,
        *,
        user: Identification,
        resolve: AgentResolver,
        outlet: PersonOutlet | None = None,
        recorder: Recorder | None = None,
        manager: Identification | None = None,
        limits: Limits | None = None,
        restore: FloorState | None = None,
        inbound: InboundDesk | None = None,
    ) -> None:
        self.id = conversation_id
        self.user = user
        self.limits = limits or Limits()
        self.floor = Floor(conversation_id, manager=manager or manager_identity())
        self.floor.protect(user.speaker_uri)
        if restore is None:
            self.floor.join(user)
        else:
            self.floor.restore(*restore)
        self._resolve = resolve
        self._bounds = FailureBounds(self.limits.max_failures, self.limits.max_timeouts)
        #: Where the person's deliveries, notices, floor changes and in-process agents' streams
        #: go; a proxy that takes over the conversation (a page reloaded) replaces it
        #: (:meth:`attach`).
        self.outlet = outlet
        self._recorder = recorder
        #: Where agents post later (gateway/floor/inbound.py); None: they can only reply.
        self.inbound = inbound
        self._mailboxes: dict[str, _Mailbox] = {}
        self._inflight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        #: The bound on agents answering agents in one person turn.
        self._exchanges = Exchanges(
            self.limits.max_agent_envelopes, self.limits.max_agent_exchanges
        )
        self._moment: asyncio.Task[None] | None = None
        #: Whom the person waits on for an answer (for "One moment…" to name them).
        self._patience = Patience(self.floor.manager.speaker_uri)
        self._turn = 0  # the person's envelopes so far (timeouts are counted per turn)
        #: Who is not answering, and whom a hand-over went to (read by the person's addressing).
        self.routing = Routing()
        #: The person's last utterance and whom it goes on to if its addressee does not answer
        #: it (docs/floor.md, "Hand-overs").
        self._handover = HandOver(user.speaker_uri)
        #: Public utterances of the conversation, newest last (for invites' dialogHistory).
        self._history = DialogHistory(self.limits.history_events, self.limits.history_bytes)
        #: Whether the person's voice may go with dialogHistory (``serve --keep-audio``).
        self.history_keeps_audio = False
        #: What each change of the floor means (recorded, shown, the convener gone).
        self._watch = FloorWatch()
        self._closed = False
        self._ended = False
        # Normalised service URLs whose manifest was asked for.
        self._named = discovery.Named(normalize_service_url(user.service_url))
        self._naming: set[asyncio.Task[None]] = set()
        if restore is None:
            self._record_floor()
        else:
            # Taken up from the records: that state is recorded already, and its agents named.
            self._watch = FloorWatch(Snapshot.of(self.floor))
            self._named = discovery.Named(
                normalize_service_url(user.service_url),
                *(i.service_url for i in self.floor.conversants),
            )

    # ------------------------------------------------------------------ the person's side
    async def say(self, events: list[Event], *, then: Sequence[str] = ()) -> Envelope:
        """Send events from the person (invites, utterances…) into the floor; returns the envelope.

        ``then``: the agents (speaker URIs, in order) the floor passes the person's utterance on
        to, in this turn, if the agent it is addressed to does not answer it (no utterance, a
        failure or a timeout) — the person's addressing chose them (docs/floor.md)."""
        env = Envelope(
            conversation=Conversation(id=self.id),
            sender=Sender(
                speaker_uri=self.user.speaker_uri, service_url=self.user.service_url or None
            ),
            events=events,
        )
        self._exchanges.person_spoke()
        self._turn += 1
        me, keep = self.user.speaker_uri, self.history_keeps_audio
        events = [self._history.given(e, me, keep_audio=keep) for e in events]
        env = env.model_copy(update={"events": events})
        self._history.remember(events)
        self._handover.person_said(events, then)
        self._record("in", self.user.speaker_uri, env.to_wire())
        env = await self._refuse_invites(env, self.user)
        if not env.events:
            return env
        if self.outlet is not None:
            self.outlet.person_said(env)
        self._dispatch(self.floor.receive(env))
        if any(e.event_type is EventType.UTTERANCE for e in events):
            self._wait_for_answer()
        return env

    def attach(self, outlet: PersonOutlet) -> None:
        """A person's proxy takes the conversation: what the floor delivers to the person, the
        gateway's notices, the floor's changes and in-process agents' streams go to ``outlet``
        from now on (a page reloaded: the new proxy takes them over from the old, all at once)."""
        self.outlet = outlet

    def show_floor(self) -> None:
        """Show the attached proxy the floor as it is now (a conversation taken up from the
        records: its floor changed before any proxy was there to see it)."""
        if self.outlet is not None:
            self.outlet.floor_changed(self.floor)

    def dialog_history(self) -> list[DialogEvent]:
        """The last public utterances, bounded (:attr:`Limits.history_events`,
        :attr:`Limits.history_bytes`), the person's audio left out unless
        :attr:`history_keeps_audio`."""
        return self._history.recent(self.user.speaker_uri, keep_audio=self.history_keeps_audio)

    def _wait_for_answer(self) -> None:
        """Say "One moment…" if no agent has answered the person in ``slow_notice_s``."""
        if self._moment is not None:
            self._moment.cancel()
        self._patience.person_spoke()
        if len(self.floor.conversants) < 2 or self.limits.slow_notice_s <= 0:
            self._moment = None
            return
        self._moment = asyncio.get_running_loop().create_task(self._one_moment())

    async def _one_moment(self) -> None:
        await asyncio.sleep(self.limits.slow_notice_s)
        self._moment = None
        for ident in self._patience.answering:
            with contextlib.suppress(AgentError):  # an agent gone from the directory: not held
                remote = isinstance(self._resolve(ident.service_url), RemoteAgent)
                self.routing.slow(ident.speaker_uri, remote=remote)
        notice = self.one_moment_notice()
        if notice is not None:
            await self._notify(notice)

    def one_moment_notice(self) -> notices.Waiting | None:
        """The floor's one notice that the person is kept waiting, or None if they are not
        (gateway/floor/waiting.py)."""
        return self._patience.notice(pending=not self._idle.is_set())

    def agents(self) -> list[tuple[Identification, Manifest | None]]:
        """The agents on the floor now (but the person and the convener), in joining order, each with
        its manifest when the gateway knows it (for the person's side to choose an addressee)."""
        out: list[tuple[Identification, Manifest | None]] = []
        for ident in self.floor.conversants:
            if ident.speaker_uri in (self.user.speaker_uri, self.floor.convener):
                continue  # the person, and the chair: it keeps order, it does not answer
            manifest: Manifest | None = None
            if ident.service_url:
                try:
                    manifest = self._resolve(ident.service_url).manifest
                except AgentError:
                    manifest = None
            out.append((ident, manifest))
        return out

    def know(self, identification: Identification) -> None:
        """Tell the floor an agent's real identity before it is invited by URL."""
        self.floor.know(identification)

    async def learn_manifest(
        self, url: str, *, timeout: float | None = None
    ) -> Identification | None:
        """Ask the agent at ``url`` for its manifest (``getManifests``) so it joins under its own
        name; a remote agent that does not answer in ``timeout`` s (default
        :attr:`Limits.manifest_timeout_s`) is invited by URL anyway.

        Returns the identity the agent is now known by (None when ``url`` names no agent):
        invite it by that identity's ``serviceUrl``, the spelling the agent itself uses, since
        agents compare ``to.serviceUrl`` with their own as plain strings."""
        if self._named.full:
            return None  # invited by URL alone: what the floor remembers stays bounded
        self._named.asking(url)
        try:
            agent = self._resolve(url)
        except AgentError:
            return None  # the invite itself will report what is wrong with the address
        if isinstance(agent, RemoteAgent):
            sender = self._person_to(normalize_service_url(url))
            # No answer in time, or a failure: invited by URL anyway (the delivery reports it).
            with contextlib.suppress(AgentError, TimeoutError):
                await asyncio.wait_for(
                    agent.fetch_manifest(self.id, sender),
                    self.limits.manifest_timeout_s if timeout is None else timeout,
                )
        self.floor.know(agent.manifest.identification)
        return agent.manifest.identification

    async def discover(self, url: str, *, max_manifests: int = 20) -> list[tuple[Manifest, bool]]:
        """Ask the agent at ``url`` what it offers (``getManifests``, scope ``all``, §1.17):
        its manifests, each with whether it was recommended (``discoveryManifests``, or any but
        its own from a discovery agent). Raises :class:`AgentError` for an address it cannot or
        may not reach, :class:`TimeoutError` after :attr:`Limits.manifest_timeout_s`."""
        agent = self._resolve(url)
        sender = self._person_to(normalize_service_url(url))
        own = agent.manifest.identification.service_url or url
        asked = discovery.ask(self.id, sender, own)
        reply = await asyncio.wait_for(agent.handle(asked), self.limits.manifest_timeout_s)
        return discovery.offered(reply, own, most=max_manifests)

    @property
    def floor_idle(self) -> bool:
        """No delivery queued or in flight right now."""
        return self._idle.is_set()

    async def wait_idle(self, timeout: float) -> bool:
        """Wait until no delivery is queued or in flight; False if ``timeout`` s passed first."""
        try:
            await asyncio.wait_for(self._idle.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def end(self) -> bool:
        """The person leaves for good: the agents still here are sent a ``bye`` from the
        person's proxy (OFP 1.1.0 §1.16) and given :attr:`Limits.bye_timeout_s` to take it.
        Returns whether every delivery finished in time. Call :meth:`close` afterwards; a
        conversation already ended or closed, or with nobody else in it, sends nothing."""
        if self._closed or self._ended:
            return True
        self._ended = True
        if self._moment is not None:  # the person is leaving: no "one moment" after it
            self._moment.cancel()
            self._moment = None
        others = [i for i in self.floor.conversants if i.speaker_uri != self.user.speaker_uri]
        if not others or self.floor.conversant(self.user.speaker_uri) is None:
            return True
        try:
            await self.say([Event(event_type=EventType.BYE)])
        except FloorBusy as err:  # the floor refusing must not stop the conversation ending
            log.warning("conversation %s: could not say bye: %s", self.id, err)
            return False
        return await self.wait_idle(self.limits.bye_timeout_s)

    async def close(self) -> None:
        """Stop every delivery worker and revoke the agents' inbound URLs. Agents themselves
        are closed by whoever made them."""
        self._closed = True
        if self.inbound is not None:
            self.inbound.revoke(self.id)
        tasks = [m.task for m in self._mailboxes.values()] + list(self._naming)
        if self._moment is not None:
            tasks.append(self._moment)
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await t
        self._mailboxes.clear()

    # ------------------------------------------------------------------ deliveries
    def _dispatch(self, deliveries: list[Delivery], depth: int = 0) -> None:
        self._record_floor()
        for d in deliveries:
            # One mailbox per agent however its URL is written, so its deliveries stay in order.
            key = self._key(d.recipient)
            box = self._mailboxes.get(key)
            if box is None:
                if len(self._mailboxes) > self.limits.max_agents + 1:
                    log.warning(
                        "conversation %s: too many recipients; dropped delivery to %s", self.id, key
                    )
                    continue
                queue: asyncio.Queue[tuple[Delivery, int]] = asyncio.Queue(
                    self.limits.max_queue_per_recipient
                )
                box = _Mailbox(
                    queue, asyncio.get_running_loop().create_task(self._worker(key, queue))
                )
                self._mailboxes[key] = box
            try:
                box.queue.put_nowait((d, depth))
            except asyncio.QueueFull:
                log.warning("conversation %s: %s is not keeping up; delivery dropped", self.id, key)
                if d.awaits_reply:  # never leave the floor waiting on a delivery that was dropped
                    self._dispatch(self.floor.convener_replied(None, fallback=True))
                continue
            self._inflight += 1
            self._idle.clear()

    @staticmethod
    def _key(recipient: Identification) -> str:
        if recipient.service_url:
            return normalize_service_url(recipient.service_url)
        return recipient.speaker_uri

    async def _worker(self, key: str, queue: asyncio.Queue[tuple[Delivery, int]]) -> None:
        while True:
            d, depth = await queue.get()
            try:
                await self._deliver(key, d, depth)
            except Exception:  # a bug in one delivery must not stop the conversation
                log.exception("conversation %s: delivery to %s failed", self.id, key)
            finally:
                self._inflight -= 1
                if self._inflight == 0:
                    self._idle.set()

    async def _deliver(self, key: str, d: Delivery, depth: int = 0) -> None:
        recipient = d.recipient
        if recipient.speaker_uri == self.user.speaker_uri:
            if any(e.event_type is EventType.UTTERANCE for e in d.envelope.events):
                self._patience.answer_reached()
            self._history.remember(d.envelope.events)
            self._record("out", recipient.speaker_uri, d.envelope.to_wire())
            if self.outlet is not None:
                await self.outlet.delivered(d.envelope)
            return
        d = self._with_inbound(key, d)
        try:
            agent = self._resolve(recipient.service_url or key)
            d = voice_only_if_wanted(agent.manifest, d, self.user.speaker_uri)
            # A remote agent reports its own bytes (gateway.agents.wire); in-process ones have
            # no wire, so what they were handed and gave back stands for it.
            in_process = not isinstance(agent, RemoteAgent)
            if in_process and listening():
                tap("sent", recipient.service_url or key, d.envelope.to_json())
            streams = reply_streams.set(self._opener() if in_process else None)
            try:
                reply = await self._handle_noting_who(agent, d)
            finally:
                reply_streams.reset(streams)
            if in_process and reply is not None and listening():
                tap("received", recipient.service_url or key, reply.to_json())
            self._record("out", recipient.speaker_uri, self._as_sent(agent, d.envelope))
        except (UnicodeError, RecursionError) as err:
            # The envelope could not be put on the wire: its content (from whoever said it) is at
            # fault, not this recipient, so nothing is booked against the recipient.
            log.warning(
                "conversation %s: could not encode the envelope for %s (%s); not delivered",
                self.id,
                key,
                err,
            )
            reply = None
        except AgentError as err:
            self._record("out", recipient.speaker_uri, d.envelope.to_wire())
            reply = None
            await self._failed(recipient, err)
        except Exception as err:
            # Every failure to reach an agent is an AgentError (above); anything else is a bug in
            # an agent's code (a built-in's) or below it: it costs that agent an @error all the
            # same, and the traceback goes to the log.
            log.exception("conversation %s: delivery to %s failed", self.id, key)
            self._record("out", recipient.speaker_uri, d.envelope.to_wire())
            reply = None
            await self._failed(
                recipient, AgentError(str(err), agent_url=key, reason_token="@error")
            )
        else:
            box = self._mailboxes.get(key)
            if box is not None:
                box.strikes.answered()
            self.routing.answered(recipient.speaker_uri)
            self._name_newcomer(recipient.service_url)
        await self._pass_on_if_unanswered(d, reply, depth)
        if d.awaits_reply:
            if reply is not None:
                self._record("in", reply.sender.speaker_uri, reply.to_wire())
            else:
                await self._convener_failed(recipient)
            self._dispatch(self.floor.convener_replied(reply, fallback=reply is None), depth)
            await self._report_refused()
            return
        if reply is None or not reply.events:
            return  # §2.3: an empty events array is an acknowledgement
        if reply.conversation.id != self.id:
            log.warning("%s answered for conversation %r; ignored", key, reply.conversation.id)
            return
        await self.accept(
            reply,
            origin=recipient.service_url or None,
            depth=depth + 1,
            answering=d.envelope.sender,
        )

    async def _pass_on_if_unanswered(self, d: Delivery, reply: Envelope | None, depth: int) -> None:
        """The person's utterance goes on to the next agent if ``d.recipient`` did not answer
        it (gateway/floor/handover.py)."""
        passed = self._handover.delivered(d, reply, self.floor.conversant)
        if passed is None:
            return
        self.routing.handed_over(passed.delivery.recipient.speaker_uri)
        await self._notify(passed.notice)
        self._dispatch([passed.delivery], depth)

    async def accept(
        self,
        envelope: Envelope,
        *,
        origin: str | None,
        depth: int = 1,
        answering: Sender | None = None,
    ) -> bool:
        """Take an envelope an agent sent (a reply, or a post to its inbound endpoint) into the
        floor, within the chatter bounds. ``depth`` is how many agent envelopes lead back to the
        person (1: the agent answers the person or speaks of its own accord); ``answering`` is
        the sender of the envelope it replies to. Returns whether it was taken."""
        admission = self._exchanges.admit(depth)
        if admission is not Admission.TAKE:
            if admission is Admission.DROP_AND_TELL:
                await self._notify(
                    notices.ChatterStopped(
                        envelope.sender.speaker_uri, self._exchanges.max_exchanges
                    )
                )
            return False
        if answering is not None:
            speaker = self.floor.find(
                speaker_uri=answering.speaker_uri, service_url=answering.service_url
            )
            envelope = answering_speaker(envelope, speaker, manager=self.floor.manager.speaker_uri)
        self._record("in", envelope.sender.speaker_uri, envelope.to_wire())
        who = self.floor.find(speaker_uri=envelope.sender.speaker_uri, service_url=origin)
        if who is not None:
            envelope = await self._refuse_invites(envelope, who)
        try:
            self._dispatch(self.floor.receive(envelope, origin=origin), depth)
        except FloorBusy as err:
            log.warning("conversation %s: %s", self.id, err)
            return False
        await self._report_refused()
        return True

    async def appoint_convener(self, url: str, *, timeout: float = 15.0) -> Identification | None:
        """Invite the agent at ``url`` and make it the convener (§0.4.2): from then on the
        events of the §2.2 table are delegated to it. None (and the person told) when it did not
        join; the floor stays the minimal convener."""
        known = await self.learn_manifest(url)
        to = known.service_url if known is not None else url
        invite = Event(event_type=EventType.INVITE, to=To(service_url=to))
        if known is not None and self.floor.find(service_url=to) is None:
            # The role from the invite on (docs/floor.md): it joins as convener, and the floor
            # manager (the arbiter of conveners, §0.4.2) invites it, so the invite is not
            # delegated to the convener it appoints; the invite's own envelope names the role.
            self.floor.join(known, convener=True)
            self._watch.appointing = known.speaker_uri
            try:
                self._dispatch(self.floor.inject([invite]))
                await self.wait_idle(timeout)
            finally:
                self._watch.appointing = None
        else:  # its identity unknown (no manifest): invited by the person, the role on joining
            await self.say([invite])
            await self.wait_idle(timeout)
        ident = self.floor.find(service_url=to)
        if ident is None:
            await self._notify(notices.ConvenerAbsent(url))
            return None
        self.floor.assign_convener(ident.speaker_uri)
        self._record_floor(force=True)
        return ident

    async def _convener_failed(self, convener: Identification) -> None:
        await self._notify(notices.ConvenerSilent(convener.speaker_uri, convener.display_name))

    async def _report_refused(self) -> None:
        """Tell the person what an agent tried against them that the floor did not apply."""
        for r in self.floor.take_refused():
            who = self.floor.find(
                speaker_uri=r.sender.speaker_uri, service_url=r.sender.service_url
            )
            name = who.display_name if who is not None else r.sender.speaker_uri
            await self._notify(
                notices.PersonProtected(
                    r.sender.speaker_uri,
                    name,
                    uninvite=r.event.event_type is EventType.UNINVITE,
                    why=r.event.reason or "",
                )
            )

    def _inbound_url(self, key: str) -> str | None:
        """The inbound URL of the HTTP agent ``key`` in this conversation (None: no inbound
        endpoint, not an HTTP agent, or the desk is full), known to the floor as the person."""
        if self.inbound is None or not key.startswith(("http://", "https://")):
            return None
        url = self.inbound.url_for(self.id, key)
        if url is not None:
            self.floor.alias(url, self.user.speaker_uri)
        return url

    def _person_to(self, key: str) -> Sender:
        """The person as the sender of an envelope to the agent ``key`` outside a delivery
        (``getManifests`` before its invite): with the same inbound URL every later envelope to
        it names, so an agent that keeps the first serviceUrl it saw can speak later."""
        return Sender(
            speaker_uri=self.user.speaker_uri,
            service_url=self._inbound_url(key) or self.user.service_url or None,
        )

    def _with_inbound(self, key: str, d: Delivery) -> Delivery:
        """``d`` with the person's serviceUrl (in ``sender`` and in ``conversants``) made this
        agent's inbound URL, so it can post to the person later (gateway/floor/inbound.py)."""
        url = self._inbound_url(key)
        return d if url is None else person_reached_at(d, self.user.speaker_uri, url)

    async def post(self, agent: str, envelope: Envelope) -> str | None:
        """An envelope an agent POSTed to its inbound URL (``agent``: the key it was issued
        for): delivered through the floor like a reply of its own accord. Returns why it was
        refused (nothing changed), or None when it was taken."""
        ident = self._conversant_at(agent)
        why = refused_post(envelope, conversation_id=self.id, key=agent, agent=ident)
        if why is not None or ident is None:
            return why
        if not envelope.events:
            return None  # nothing to say: acknowledged
        taken = await self.accept(envelope, origin=ident.service_url or None, depth=1)
        return None if taken else "the floor did not take it (too many agent envelopes)"

    def _conversant_at(self, agent: str) -> Identification | None:
        for ident in self.floor.conversants:
            if ident.service_url and normalize_service_url(ident.service_url) == agent:
                return ident
        return None

    async def _refuse_invites(self, envelope: Envelope, sender: Identification) -> Envelope:
        """``envelope`` without the invites the floor cannot take (gateway/floor/invites.py),
        each told to the person; the rest of it goes on."""
        conversants = self.floor.conversants
        envelope, refused = screen_invites(
            envelope,
            sender,
            present={i.speaker_uri for i in conversants},
            agents=len(conversants) - 1,  # the person is a conversant too
            max_agents=self.limits.max_agents,
        )
        for notice in refused:
            await self._notify(notice)
        return envelope

    @staticmethod
    def _as_sent(agent: Agent, envelope: Envelope) -> dict[str, Any]:
        """The envelope as it went on the wire (OVON 0.9 for agents that speak it)."""
        if isinstance(agent, RemoteAgent) and agent.dialect == "ovon":
            return to_ovon(envelope)
        return envelope.to_wire()

    def _opener(self) -> StreamOpener | None:
        """The outlet's :meth:`~gateway.floor.outlet.PersonOutlet.open_stream`, noting that an
        agent's answer has begun to reach the person when its stream opens (an in-process agent
        speaking sentence by sentence is not slow)."""
        outlet = self.outlet
        if outlet is None:
            return None

        def opened(event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
            stream = outlet.open_stream(event_id, speaker_uri, speaker)
            if stream is not None:
                self._patience.answer_began(speaker_uri)
            return stream

        return opened

    async def _handle_noting_who(self, agent: Agent, d: Delivery) -> Envelope | None:
        """``agent.handle(d.envelope)``; while an agent handles what the person said, the floor
        knows it is waiting on that agent (for "One moment…" to name it)."""
        if d.envelope.sender.speaker_uri != self.user.speaker_uri:
            return await agent.handle(d.envelope)
        key = id(d)
        self._patience.handling(key, d.recipient)
        try:
            return await agent.handle(d.envelope)
        finally:
            self._patience.handled(key)

    async def _failed(self, recipient: Identification, err: AgentError) -> None:
        key = self._key(recipient)
        still_here = self.floor.conversant(recipient.speaker_uri) is not None
        if not still_here:
            log.info("conversation %s: %s (already left) failed: %s", self.id, key, err)
            return
        box = self._mailboxes.get(key)
        strikes = box.strikes if box is not None else Strikes()
        timed_out = err.reason_token == "@timedOut"
        self.routing.missed(recipient.speaker_uri, "it timed out" if timed_out else "it failed")
        verdict = strikes.failed(
            timed_out=timed_out,
            refused=isinstance(err, AddressRefused),
            turn=self._turn,
            bounds=self._bounds,
        )
        who, name = recipient.speaker_uri, recipient.display_name
        if verdict is Verdict.SLOW:
            await self._notify(notices.AgentSlow(who, name, str(err)))
        elif verdict is Verdict.PROBLEM:
            await self._notify(notices.AgentFailed(who, name, str(err), err.reason_token))
        elif verdict is Verdict.REMOVE:
            await self._notify(
                notices.AgentRemoved(who, name, str(err), err.reason_token, timed_out)
            )
            uninvite = Event(
                event_type=EventType.UNINVITE,
                to=To(speaker_uri=who),
                reason=f"{err.reason_token} {err}",
            )
            self._dispatch(self.floor.inject([uninvite]))

    async def _notify(self, event: NoticeEvent) -> None:
        notice = Notice.of(event)
        log.info("conversation %s: %s", self.id, notice.text)
        if self.outlet is not None:
            await self.outlet.notified(notice)

    def _name_newcomer(self, url: str) -> None:
        """An agent invited by another agent joins under its URL. Once it has answered (so its
        dialect is known and the invite went first), ask it for its manifest in the background,
        so the floor — and the person — learn its name."""
        if not self._named.newcomer(url):
            return
        if len(self._naming) >= self.limits.max_agents:
            return
        task = asyncio.get_running_loop().create_task(self._name(url))
        self._naming.add(task)
        task.add_done_callback(self._naming.discard)

    async def _name(self, url: str) -> None:
        await self.learn_manifest(url, timeout=5.0)
        try:
            identity = self._resolve(url).manifest.identification
        except AgentError:
            return
        if self.floor.update_identity(identity):
            self._record_floor(force=True)

    # ------------------------------------------------------------------ records
    def _record(self, direction: str, peer: str, wire: dict[str, Any]) -> None:
        if self._recorder is None:
            return
        try:
            self._recorder.envelope(
                self.id, direction=direction, peer=peer, envelope=wire, at=datetime.now(UTC)
            )
        except RecordsError:  # records must never take the conversation down
            log.exception("conversation %s: could not record an envelope", self.id)

    def _convener_gone(self, notice: notices.ConvenerGone) -> None:
        """The convener left or failed: the person is told the floor is the convener now."""
        if self.outlet is None or self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._notify(notice))
        self._naming.add(task)
        task.add_done_callback(self._naming.discard)

    def _revoke_departed(self) -> None:
        """Agents that left: their inbound URLs no longer open anything."""
        assert self.inbound is not None
        for key in list(self._mailboxes):
            if key.startswith(("http://", "https://")) and self._conversant_at(key) is None:
                self.inbound.revoke(self.id, key)

    def _record_floor(self, *, force: bool = False) -> None:
        f = self.floor
        change = self._watch.seen(Snapshot.of(f), force=force)
        if change is None:
            return
        if self.inbound is not None and change.conversants_changed:
            self._revoke_departed()
        if change.convener_gone is not None:
            self._convener_gone(change.convener_gone)
        if self.outlet is not None:
            try:
                self.outlet.floor_changed(f)
            except Exception:  # the person's side: its bug must not stop the floor
                log.exception("conversation %s: floor listener failed", self.id)
        if self._recorder is None:
            return
        try:
            self._recorder.floor_changed(
                self.id,
                conversants=[i.to_wire() for i in f.conversants],
                floor_granted=f.floor_granted,
                convener=f.convener,
                at=datetime.now(UTC),
            )
        except RecordsError:
            log.exception("conversation %s: could not record a floor change", self.id)
