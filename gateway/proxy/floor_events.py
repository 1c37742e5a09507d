"""What happens on the floor, told to the person in words (sans I/O).

Agents decline invitations, leave, yield the floor, revoke or remove one another, each with an
optional ``reason`` whose ``@tokens`` carry a conventional meaning (§1.8, §1.13). The page shows
these as notices and, when voice is on, speaks them briefly; ``talk`` prints them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gateway.ofp import Event, EventType, reason_tokens

#: The reason tokens of the spec (§1.8, §1.13, §1.15) in words.
TOKEN_WORDS = {
    "@timedOut": "it timed out",
    "@brokenPolicy": "a broken policy",
    "@error": "an error",
    "@outOfDomain": "it is out of its domain",
    "@unavailable": "it is unavailable",
    "@refused": "it refused",
    "@complete": "its task is complete",
    "@brb": "it will be right back",
}

#: The events told to the person.
TOLD = frozenset(
    {
        EventType.DECLINE_INVITE,
        EventType.BYE,
        EventType.YIELD_FLOOR,
        EventType.REVOKE_FLOOR,
        EventType.UNINVITE,
    }
)

_TOKEN = re.compile(r"@[A-Za-z0-9_]+")


def reason_words(reason: str | None) -> str:
    """``reason`` for a person: its tokens in words, then its free text (at most 200 chars)."""
    if not reason:
        return ""
    tokens = reason_tokens(reason)
    said = [TOKEN_WORDS.get(t, t.lstrip("@")) for t in tokens]
    free = " ".join(_TOKEN.sub(" ", reason).split())[:200]
    return "; ".join([*said, *([free] if free else [])])


def describe(event: Event, speaker: str, name_of: Callable[[str | None], str]) -> str | None:
    """A sentence for ``event`` sent by ``speaker`` (a name), or None for events not told.
    ``name_of(speaker_uri)`` names the event's target (``to``)."""
    kind = event.event_type
    if kind not in TOLD:
        return None
    target = name_of(event.to.speaker_uri if event.to else None)
    if kind is EventType.DECLINE_INVITE:
        text = f"{speaker} declined the invitation"
    elif kind is EventType.BYE:
        text = f"{speaker} left the conversation"
    elif kind is EventType.YIELD_FLOOR:
        text = f"{speaker} yielded the floor"
    elif kind is EventType.REVOKE_FLOOR:
        text = f"{speaker} took the floor from {target}"
    else:
        text = f"{speaker} removed {target} from the conversation"
    why = reason_words(event.reason)
    return f"{text} ({why})." if why else f"{text}."
