"""Which invites the floor refuses before they reach anyone.

Refused, each told to the person once with the address quoted short, the rest of the envelope
going on: an invite of an address longer than any real one
(:data:`~gateway.agents.policy.MAX_URL_CHARS`: such an agent could never be reached, and passing
the invite on would echo the whole address to the page and every agent), and any invite of a
newcomer while ``Limits.max_agents`` agents are here already (the conversants, their mailboxes
and the floor sent to everyone stay bounded).

Sans-I/O: :func:`screen_invites` takes the envelope and what the floor holds and returns what
goes on and what the person is told; the floor's host (gateway/floor/host.py) delivers both.
"""

from __future__ import annotations

from collections.abc import Collection

from gateway.agents.policy import MAX_URL_CHARS
from gateway.floor.notices import InviteTooLong, InviteTooMany
from gateway.ofp import Envelope, Event, EventType, Identification


def screen_invites(
    envelope: Envelope,
    sender: Identification,
    *,
    present: Collection[str],
    agents: int,
    max_agents: int,
) -> tuple[Envelope, list[InviteTooLong | InviteTooMany]]:
    """``envelope`` (from ``sender``) without the invites the floor cannot take, and a notice
    for each of them. ``present``: the speaker URIs on the floor (inviting one of them again
    adds no agent); ``agents``: how many agents are here now (the person not counted)."""
    kept: list[Event] = []
    refused: list[InviteTooLong | InviteTooMany] = []
    for event in envelope.events:
        to = event.to
        if event.event_type is not EventType.INVITE or to is None:
            kept.append(event)
            continue
        address = to.service_url or to.speaker_uri or ""
        new = (to.speaker_uri or "") not in present
        if len(address) > MAX_URL_CHARS:
            refused.append(InviteTooLong(sender.speaker_uri, sender.display_name, address))
        elif new and agents >= max_agents:
            refused.append(InviteTooMany(sender.speaker_uri, agents, address))
        else:
            agents += new
            kept.append(event)
    if len(kept) == len(envelope.events):
        return envelope, refused
    return envelope.model_copy(update={"events": kept}), refused
