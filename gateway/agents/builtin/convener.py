"""Convener: the chair of a multi-party conversation (OFP 1.1.0 §0.4.2, §2.2's delegation).

Made the convener (``serve --convener builtin:convener``), it is sent, alone in its own envelope,
each event the §2.2 table delegates, and answers with the events the floor should apply instead:

* ``invite``, ``uninvite``, ``grantFloor``, ``revokeFloor`` from a conversant: approved (sent back
  as they are);
* ``requestFloor``: granted, in the order the requests come, to the conversant it names (§0.4.3:
  on behalf of another) or else to its sender;
* an utterance from a conversant without the floor: not passed on, and counted as speaking out of
  turn.

It also watches the conversation (it hears every public event): an agent that speaks while the
person is talking with another agent speaks out of turn. After :data:`STRIKES_REVOKE` times its
floor is revoked, after :data:`STRIKES_UNINVITE` it is uninvited, both with a §1.13 reason
(``@brokenPolicy``). It never answers utterances itself.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from gateway.agents.builtin.base import MAX_CONVERSATIONS, BuiltinAgent, builtin_manifest, local_now
from gateway.agents.urls import BUILTIN_SCHEME
from gateway.ofp import Envelope, Event, EventType, To

#: Times out of turn before the agent's floor is revoked, and before it is uninvited.
STRIKES_REVOKE = 2
STRIKES_UNINVITE = 4

#: What a convener is asked to decide (§2.2's "Delegate to Convener" rows).
_APPROVED = frozenset(
    {EventType.INVITE, EventType.UNINVITE, EventType.GRANT_FLOOR, EventType.REVOKE_FLOOR}
)


@dataclass
class _Chair:
    """What the convener keeps about one conversation."""

    #: The agent the person last addressed (None: the room, or nobody yet).
    addressee: str | None = None
    strikes: dict[str, int] = field(default_factory=dict)


class Convener(BuiltinAgent):
    """The built-in convener (see the module's docstring)."""

    greeting = "I'm the Convener: I keep order on the floor."

    def __init__(
        self,
        service_url: str = f"{BUILTIN_SCHEME}convener",
        *,
        now: Callable[[], datetime] = local_now,
    ) -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                "Convener",
                "Chairs the conversation: grants the floor in turn, removes agents that misbehave.",
                ["convener", "chair", "moderator"],
                ["Decides floor requests and invitations; keeps agents from speaking out of turn."],
                roles={"convener": True},
            ),
            now=now,
        )
        self._chairs: OrderedDict[str, _Chair] = OrderedDict()

    def answer(self, heard: object) -> None:
        """The convener does not converse."""
        return None

    def respond(self, envelope: Envelope) -> list[Event]:
        """The usual §2.1 behaviour (accept an invite, publish its manifest), plus the chair's."""
        out = super().respond(envelope)
        conv = envelope.conversation
        if conv.id in self._left:
            return out
        chair = self._chair(conv.id)
        sender = envelope.sender.speaker_uri
        listed = {c.identification.speaker_uri: c.identification for c in conv.conversants or []}
        if sender == self.speaker_uri or sender not in listed:
            return out  # its own events, and the floor manager's: the authority, not to judge
        person = (listed[sender].role or "").lower() == "user"
        granted = set(conv.floor_granted or [])
        for event in envelope.events:
            kind = event.event_type
            if kind in _APPROVED and not self._is_me_invited(event):
                out.append(event)
            elif kind is EventType.REQUEST_FLOOR:
                target = sender
                named = event.to.speaker_uri if event.to is not None else None
                if named in listed and named != self.speaker_uri:
                    target = named
                out.append(
                    Event(
                        event_type=EventType.GRANT_FLOOR,
                        to=To(speaker_uri=target),
                        reason="granted in turn",
                    )
                )
            elif kind is EventType.UTTERANCE and person:
                chair.addressee = event.to.speaker_uri if event.to is not None else None
            elif kind is EventType.UTTERANCE:
                out += self._judge(chair, sender, event, spoke_without_floor=sender not in granted)
        if person and not any(e.event_type is EventType.UTTERANCE for e in envelope.events):
            chair.addressee = None  # the person did something else (invited someone…)
        return out

    def _is_me_invited(self, event: Event) -> bool:
        return (
            event.event_type is EventType.INVITE and event.to is not None and self._is_me(event.to)
        )

    def _judge(
        self, chair: _Chair, agent: str, event: Event, *, spoke_without_floor: bool
    ) -> list[Event]:
        """An agent spoke: out of turn when it had no floor, or when the person is talking with
        another agent. One without the floor that the person addressed is given the floor back
        and heard (§2.1: an utterance directed to it lets it speak again)."""
        if spoke_without_floor and chair.addressee == agent:
            grant = Event(
                event_type=EventType.GRANT_FLOOR,
                to=To(speaker_uri=agent),
                reason="the person spoke to this agent",
            )
            return [grant, event]
        out_of_turn = spoke_without_floor or (
            chair.addressee is not None and chair.addressee != agent
        )
        if not out_of_turn:
            return []
        strikes = chair.strikes[agent] = chair.strikes.get(agent, 0) + 1
        if strikes == STRIKES_UNINVITE:
            return [
                Event(
                    event_type=EventType.UNINVITE,
                    to=To(speaker_uri=agent),
                    reason="@brokenPolicy kept speaking out of turn",
                )
            ]
        if strikes == STRIKES_REVOKE:
            return [
                Event(
                    event_type=EventType.REVOKE_FLOOR,
                    to=To(speaker_uri=agent),
                    reason="@brokenPolicy spoke out of turn",
                )
            ]
        return []

    def _chair(self, conv_id: str) -> _Chair:
        chair = self._chairs.pop(conv_id, None) or _Chair()
        self._chairs[conv_id] = chair
        if len(self._chairs) > MAX_CONVERSATIONS:
            self._chairs.popitem(last=False)
        return chair
