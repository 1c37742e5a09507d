"""What every built-in agent does: the minimal servicing-assistant behaviours of §2.1.

A subclass says what it answers (:meth:`BuiltinAgent.answer`) and how it greets; this class
decides *whether* to answer. Two rules keep built-ins from talking to each other forever:

* a public utterance is answered only when a person spoke it (the speaker's conversant has
  role "user", or the envelope lists no conversants: a 1:1 conversation);
* an utterance addressed to the agent is answered whoever spoke it, but at most
  :data:`MAX_AGENT_TURNS` times in a row to agents before a person speaks again, so two agents
  that each answer whatever is addressed to them stop after a few exchanges.

An agent never answers its own utterances, and follows §2.1: an event addressed (``to``) to another
conversant is ignored. Its answer is addressed to whoever it answers (public unless what it
answers was private), so other agents in the room see it as context and leave it alone.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from gateway.agents.urls import same_service_url
from gateway.ofp import (
    Capability,
    Conversation,
    DialogEvent,
    Envelope,
    Event,
    EventType,
    Identification,
    Manifest,
    Parameters,
    Sender,
    SupportedLayers,
    To,
    text_event,
)
from gateway.ofp.timestamps import rfc3339

#: Replies to other agents allowed in one conversation before a person speaks again.
MAX_AGENT_TURNS = 3
#: Conversations remembered at once; the least recently active is forgotten first.
MAX_CONVERSATIONS = 256
#: Public utterances remembered per conversation (for dialogHistory when delegating).
HISTORY_LENGTH = 8


def builtin_manifest(
    service_url: str,
    name: str,
    synopsis: str,
    keyphrases: list[str],
    descriptions: list[str],
    *,
    roles: dict[str, bool] | None = None,
) -> Manifest:
    """The manifest of a built-in agent served at ``service_url``.

    The speaker URI is a tag URI made from the service URL, so that the same agent served in
    process and over HTTP (or on two ports) counts as two distinct conversants.
    """
    return Manifest(
        identification=Identification(
            speaker_uri=f"tag:ofp-gateway,2025:{service_url}",
            service_url=service_url,
            organization="ofp-gateway",
            conversational_name=name,
            role="Built-in agent",
            synopsis=synopsis,
            open_floor_roles=roles,
        ),
        capabilities=[
            Capability(
                keyphrases=keyphrases,
                descriptions=descriptions,
                languages=["en-us"],
                supported_layers=SupportedLayers(input=["text"], output=["text", "ssml"]),
            )
        ],
    )


def local_now() -> datetime:
    """The wall-clock time, aware, in this machine's time zone."""
    return datetime.now().astimezone()


@dataclass
class ConversationMemory:
    """What an agent keeps about one conversation."""

    history: deque[DialogEvent] = field(default_factory=lambda: deque(maxlen=HISTORY_LENGTH))
    agent_turns: int = 0


@dataclass(frozen=True, slots=True)
class Heard:
    """An utterance the agent has decided to consider answering."""

    text: str
    dialog_event: DialogEvent
    envelope: Envelope
    addressed: bool
    memory: ConversationMemory


@dataclass(frozen=True, slots=True)
class Answer:
    """What an agent says back, and any events that go with it (such as an invite)."""

    text: str
    ssml: str | None = None
    extra: Sequence[Event] = ()


class BuiltinAgent:
    """An in-process Open Floor agent (no network) implementing :class:`gateway.agents.Agent`."""

    #: The 'hello' spoken on accepting an invite.
    greeting: str = "Hello."

    def __init__(self, manifest: Manifest, *, now: Callable[[], datetime] = local_now) -> None:
        self._manifest = manifest
        self._now = now
        self._memories: OrderedDict[str, ConversationMemory] = OrderedDict()
        self._left: OrderedDict[str, None] = OrderedDict()

    @property
    def manifest(self) -> Manifest:
        """This agent's assistant manifest."""
        return self._manifest

    @property
    def speaker_uri(self) -> str:
        """This agent's speaker URI."""
        return self._manifest.identification.speaker_uri

    def answer(self, heard: Heard) -> Answer | None:
        """What to say to ``heard``, or None to stay silent. Subclasses decide."""
        return None

    def manifests_for(self, scope: str, task: str) -> list[Manifest]:
        """The manifests to publish for a ``getManifests`` of ``scope`` about ``task``."""
        return [self._manifest] if scope in ("internal", "all") else []

    async def handle(self, envelope: Envelope) -> Envelope:
        """Deliver an envelope; the reply's events are empty when there is nothing to say."""
        ident = self._manifest.identification
        return Envelope(
            conversation=Conversation(id=envelope.conversation.id),
            sender=Sender(speaker_uri=ident.speaker_uri, service_url=ident.service_url),
            events=self.respond(envelope),
        )

    async def aclose(self) -> None:
        """Forget every conversation."""
        self._memories.clear()
        self._left.clear()

    def respond(self, envelope: Envelope) -> list[Event]:
        """The events answering ``envelope``, in order."""
        conv_id = envelope.conversation.id
        # Utterances that come with a getManifests describe the task (§1.17); they are not
        # questions to answer.
        manifest_request = any(
            e.event_type is EventType.GET_MANIFESTS and self._for_me(e) for e in envelope.events
        )
        out: list[Event] = []
        for event in envelope.events:
            if event.event_type is EventType.INVITE and self._for_me(event):
                self._left.pop(conv_id, None)
                out += self._on_invite(envelope, event)
            elif conv_id in self._left:
                continue  # uninvited: only a new invite brings it back (§2.1)
            elif event.event_type is EventType.UTTERANCE:
                self._hear(envelope, event)
                if self._for_me(event) and not manifest_request:
                    out += self._on_utterance(envelope, event)
            elif event.event_type is EventType.UNINVITE and self._for_me(event):
                self._leave(conv_id)
            elif event.event_type is EventType.GET_MANIFESTS and self._for_me(event):
                out += self._on_get_manifests(envelope, event)
        return out

    # -- events ---------------------------------------------------------------------------

    def _on_invite(self, envelope: Envelope, event: Event) -> list[Event]:
        memory = self._memory(envelope.conversation.id)
        history = event.parameters.dialog_history or []
        memory.history.extend(history)
        out = [
            Event(event_type=EventType.ACCEPT_INVITE, to=_reply_to(envelope)),
            self._utterance(self.greeting, to=To(speaker_uri=envelope.sender.speaker_uri)),
        ]
        # Answer what the person last said (a delegation's request), not another agent's words:
        # a newcomer answering the last greeting would start agents talking among themselves.
        if (
            history
            and history[-1].speaker_uri != self.speaker_uri
            and not _spoken_by_agent(envelope, history[-1].speaker_uri)
        ):
            heard = Heard(history[-1].text(), history[-1], envelope, True, memory)
            out += self._say(self.answer(heard), to=None)
        return out

    def _on_utterance(self, envelope: Envelope, event: Event) -> list[Event]:
        de = event.dialog_event
        if de is None or de.speaker_uri == self.speaker_uri:
            return []
        memory = self._memory(envelope.conversation.id)
        person = _spoken_by_person(envelope, de.speaker_uri)
        addressed = event.to is not None
        if person:
            memory.agent_turns = 0
        elif not addressed or memory.agent_turns >= MAX_AGENT_TURNS:
            return []
        answer = self.answer(Heard(de.text(), de, envelope, addressed, memory))
        if answer is not None and not person:
            memory.agent_turns += 1
        reply_to = To(speaker_uri=de.speaker_uri, private=True if event.is_private else None)
        return self._say(answer, reply_to)

    def _on_get_manifests(self, envelope: Envelope, event: Event) -> list[Event]:
        scope = (event.parameters.recommend_scope or "internal").lower()
        task = " ".join(
            e.dialog_event.text()
            for e in envelope.events
            if e.dialog_event is not None and self._for_me(e)
        )
        manifests = self.manifests_for(scope, task)
        if not manifests:
            return []  # §2.1: nothing of ours fits this scope, so ignore the request
        return [
            Event(
                event_type=EventType.PUBLISH_MANIFESTS,
                to=_reply_to(envelope),
                parameters=Parameters(servicing_manifests=manifests),
            )
        ]

    # -- helpers --------------------------------------------------------------------------

    def _for_me(self, event: Event) -> bool:
        """§2.1: an event without ``to`` is for everyone; otherwise ``to`` must name this agent."""
        return event.to is None or self._is_me(event.to)

    def _is_me(self, to: To) -> bool:
        ident = self._manifest.identification
        return (to.speaker_uri is not None and to.speaker_uri == ident.speaker_uri) or (
            same_service_url(to.service_url, ident.service_url)
        )

    def _hear(self, envelope: Envelope, event: Event) -> None:
        de = event.dialog_event
        if de is not None and not event.is_private and de.speaker_uri != self.speaker_uri:
            self._memory(envelope.conversation.id).history.append(de)

    def _memory(self, conv_id: str) -> ConversationMemory:
        memory = self._memories.pop(conv_id, None) or ConversationMemory()
        self._memories[conv_id] = memory
        if len(self._memories) > MAX_CONVERSATIONS:
            self._memories.popitem(last=False)
        return memory

    def _leave(self, conv_id: str) -> None:
        self._memories.pop(conv_id, None)
        self._left[conv_id] = None
        if len(self._left) > MAX_CONVERSATIONS:
            self._left.popitem(last=False)

    def _say(self, answer: Answer | None, to: To | None) -> list[Event]:
        if answer is None:
            return []
        return [self._utterance(answer.text, answer.ssml, to), *answer.extra]

    def _utterance(self, text: str, ssml: str | None = None, to: To | None = None) -> Event:
        start = rfc3339(self._now())
        de = text_event(self.speaker_uri, text, ssml=ssml, start_time=start)
        return Event(event_type=EventType.UTTERANCE, to=to, parameters=Parameters(dialog_event=de))


def _reply_to(envelope: Envelope) -> To:
    return To(speaker_uri=envelope.sender.speaker_uri, service_url=envelope.sender.service_url)


def _spoken_by_agent(envelope: Envelope, speaker_uri: str) -> bool:
    """Whether ``speaker_uri`` is listed among the conversants as something other than a user."""
    return any(
        c.identification.speaker_uri == speaker_uri
        and (c.identification.role or "").lower() != "user"
        for c in envelope.conversation.conversants or ()
    )


def _spoken_by_person(envelope: Envelope, speaker_uri: str) -> bool:
    conversants = envelope.conversation.conversants
    if conversants is None:
        return True  # no conversants listed: a 1:1 conversation with whoever sent it
    return any(
        c.identification.speaker_uri == speaker_uri
        and (c.identification.role or "").lower() == "user"
        for c in conversants
    )
