"""Hand-overs: the person's words passed on when the agent they went to does not answer them.

The person's addressing (gateway/proxy/addressing.py) chooses an addressee for an utterance
that names none, and the agents to try after it. When that addressee does not answer it — no
utterance in its reply, a failure, a timeout — the floor passes it on, in the same turn, to the
next of them still here, and says so (docs/floor.md, "Hand-overs"). The envelope goes to that
agent alone, the same utterance with its ``to`` changed: everyone else has heard it already.

Sans-I/O: :class:`HandOver` is told what the person said and each delivery's outcome, and
returns the delivery to make and the notice to give; the floor's host (gateway/floor/host.py)
makes it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gateway.floor.manager import Delivery
from gateway.floor.notices import HandedOver
from gateway.ofp import Envelope, Event, EventType, Identification, To


@dataclass(frozen=True)
class PassOn:
    """The person's utterance goes on: this delivery, and what the person is told."""

    delivery: Delivery
    notice: HandedOver


class HandOver:
    """The person's last utterance and whom it goes on to (see the module's docstring).
    ``person``: the person's speaker URI."""

    def __init__(self, person: str) -> None:
        self.person = person
        #: The utterance's event id, and the speaker URIs still to try.
        self._pending: tuple[str, deque[str]] | None = None

    def person_said(self, events: Sequence[Event], then: Sequence[str]) -> None:
        """The person said ``events``; ``then``: the agents to pass their one addressed
        utterance on to, in order (none: it is not passed on)."""
        self._pending = None
        addressed = [e for e in events if e.event_type is EventType.UTTERANCE and e.to is not None]
        if then and len(addressed) == 1 and addressed[0].dialog_event is not None:
            self._pending = (addressed[0].dialog_event.id, deque(then))

    def delivered(
        self,
        d: Delivery,
        reply: Envelope | None,
        conversant: Callable[[str], Identification | None],
    ) -> PassOn | None:
        """``d`` was delivered and ``reply`` came back (None: it failed or timed out); the
        delivery to pass the person's utterance on with, if it is due. ``conversant`` finds a
        conversant by speaker URI (None: it left)."""
        pending = self._pending
        recipient = d.recipient
        if pending is None or d.envelope.sender.speaker_uri != self.person:
            return None
        event_id, then = pending
        index = next(
            (
                i
                for i, e in enumerate(d.envelope.events)
                if e.event_type is EventType.UTTERANCE
                and e.dialog_event is not None
                and e.dialog_event.id == event_id
                and e.to is not None
                and e.to.speaker_uri == recipient.speaker_uri
            ),
            None,
        )
        if index is None:
            return None
        if reply is not None and any(e.event_type is EventType.UTTERANCE for e in reply.events):
            self._pending = None  # answered: nothing to pass on
            return None
        while then:
            nxt = conversant(then.popleft())
            if nxt is None or nxt.speaker_uri == recipient.speaker_uri:
                continue
            event = d.envelope.events[index]
            to = To(speaker_uri=nxt.speaker_uri, service_url=nxt.service_url or None)
            env = d.envelope.model_copy(update={"events": [event.model_copy(update={"to": to})]})
            notice = HandedOver(
                nxt.speaker_uri, recipient.display_name, nxt.display_name, passed=reply is not None
            )
            return PassOn(Delivery(nxt, env, False), notice)
        self._pending = None
        return None
