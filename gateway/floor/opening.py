"""How the person hears who is here: one welcome instead of every agent's greeting.

With the four default agents, ``scripts/run`` used to speak four greetings one after another
(about 10 s) before the person could say anything useful. Now, while a conversation opens with
several agents, their greetings are shown but not spoken, and once they have joined the floor
says one short welcome naming them; an agent that joins later, with others already here, is
introduced in one sentence (its name and synopsis) while its own greeting is shown. An agent
alone on the floor is heard in its own words. The greetings stay as they are on the wire (OFP
1.1.0: an ``acceptInvite`` with an utterance); this only decides what the person hears.

Sans-I/O: :class:`Greetings` is told each greeting and whether the opening is over; the
person's proxy speaks what it returns (gateway/proxy/speaking.py).
"""

from __future__ import annotations

from gateway.ofp import Envelope, EventType

#: Agents named in the welcome at most (a room of many is "and N more").
MAX_NAMED = 6


def is_greeting(envelope: Envelope) -> bool:
    """Whether an envelope from an agent is its greeting: it accepts an invite and speaks."""
    kinds = {e.event_type for e in envelope.events}
    return EventType.ACCEPT_INVITE in kinds and EventType.UTTERANCE in kinds


def _listed(names: list[str]) -> str:
    if len(names) > MAX_NAMED:
        names = [*names[: MAX_NAMED - 1], f"{len(names) - MAX_NAMED + 1} more"]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def welcome(names: list[str]) -> str:
    """The one welcome of a conversation that opens with ``names``."""
    return f"Welcome! Here with you: {_listed(names)}. Name one, or just ask."


def introduction(name: str, synopsis: str) -> str:
    """One sentence for an agent that joins later."""
    about = " ".join(synopsis.split()).rstrip(".")
    if not about:
        return f"{name} has joined."
    return f"{name} has joined: {about[:1].lower() + about[1:]}."


class Greetings:
    """What the person hears of agents' greetings in one conversation (module docstring).

    ``opening``: how many agents the conversation opens with; with two or more their greetings
    are held for one welcome, said when the last of them has greeted (or, if one never does,
    when the person's proxy calls :meth:`opened`)."""

    #: :meth:`greeted`'s answer when the agent's own greeting is to be spoken.
    OWN = ("", "own")
    #: Notice reasons of what the floor says instead: the welcome, an introduction.
    WELCOME = "@welcome"
    JOINED = "@joined"

    def __init__(self, opening: int = 0) -> None:
        self.holding = opening > 1
        self._expected = opening
        self.names: list[str] = []

    def greeted(self, name: str, synopsis: str, *, others_here: int) -> tuple[str, str] | None:
        """An agent greeted: None (shown only), :attr:`OWN` (its own greeting spoken), or what
        the floor says instead, with its notice reason (the welcome once the last opening agent
        has greeted; an introduction)."""
        if self.holding:
            if name not in self.names:
                self.names.append(name)
            if len(self.names) >= self._expected:
                said = self.opened()
                return (said, self.WELCOME) if said else None
            return None
        if others_here == 0:
            return self.OWN
        return introduction(name, synopsis), self.JOINED

    def opened(self) -> str | None:
        """The opening is over: the welcome to say (None: nothing was held)."""
        held, self.holding = self.names, False
        self.names = []
        return welcome(held) if held else None
