"""Agents do not chatter: the bound on agents answering agents, and whom a reply answers.

Two rules keep a room of agents from talking among themselves while the person waits:

* an agent's public utterance without ``to`` answers whoever spoke the envelope it got, not the
  room (:func:`answering_speaker`): other agents then leave it alone (OFP 1.1.0 §2.1);
* a chain of agents answering agents is cut after :attr:`Exchanges.max_exchanges` exchanges in
  one person turn, and after :attr:`Exchanges.max_envelopes` agent envelopes in all, the person
  being told once (:class:`Exchanges`).

Sans-I/O: the floor's host (gateway/floor/host.py) asks and delivers what they decide.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gateway.ofp import Envelope, EventType, Identification, To


class Admission(Enum):
    """What becomes of one agent envelope."""

    #: Within the bounds: the floor takes it.
    TAKE = "take"
    #: Past a bound: dropped, and the person told (the first time this turn).
    DROP_AND_TELL = "drop and tell"
    #: Past a bound, the person told already: dropped.
    DROP = "drop"


@dataclass
class Exchanges:
    """The agent envelopes of one person turn (see the module's docstring). The defaults are
    ``Limits.max_agent_envelopes`` and ``Limits.max_agent_exchanges``."""

    #: Agent envelopes accepted in one person turn, in all.
    max_envelopes: int = 64
    #: Agents answering agents in one person turn (an agent's reply to the person is depth 1,
    #: another agent answering that reply is exchange 1…).
    max_exchanges: int = 2
    _envelopes: int = 0
    _told: bool = False

    def person_spoke(self) -> None:
        """A new person turn: the count starts again, and the person may be told again."""
        self._envelopes = 0
        self._told = False

    def admit(self, depth: int) -> Admission:
        """An agent envelope ``depth`` agent envelopes away from the person (1: it answers the
        person, or speaks of its own accord)."""
        self._envelopes += 1
        if self._envelopes <= self.max_envelopes and depth - 1 <= self.max_exchanges:
            return Admission.TAKE
        if self._told:
            return Admission.DROP
        self._told = True
        return Admission.DROP_AND_TELL


def answering_speaker(reply: Envelope, speaker: Identification | None, *, manager: str) -> Envelope:
    """``reply`` with its public utterances without ``to`` addressed to ``speaker``, the
    conversant who spoke the envelope it answers (None: not a conversant; ``manager``: the
    floor manager's speaker URI, whose envelopes are not spoken to). Unchanged when the speaker
    is unknown, is the replying agent itself or the floor manager, or when every utterance is
    addressed already."""
    if (
        speaker is None
        or speaker.speaker_uri == reply.sender.speaker_uri
        or speaker.speaker_uri == manager
    ):
        return reply
    if not any(e.event_type is EventType.UTTERANCE and e.to is None for e in reply.events):
        return reply
    to = To(speaker_uri=speaker.speaker_uri, service_url=speaker.service_url or None)
    events = [
        e.model_copy(update={"to": to})
        if e.event_type is EventType.UTTERANCE and e.to is None
        else e
        for e in reply.events
    ]
    return reply.model_copy(update={"events": events})
