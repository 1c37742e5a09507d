"""What the floor tells the person that no agent said, as typed events, and their words.

The floor's host (gateway/floor/host.py) and its sans-I/O units decide *that* the person is told
something — an agent is slow, was removed, passed their words on — and say it as one of the
events below: what happened, to whom (``agent``: the speaker URI, or address, it is about) and
why (``reason``: the notice's token, which the page styles by). :func:`words` is the one place
their English lives; :meth:`Notice.of` makes the :class:`Notice` the page (``PageNotice``) and
``talk`` show. Sans-I/O: no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gateway.agents.policy import MAX_URL_CHARS, clip_url


@dataclass(frozen=True)
class AgentSlow:
    """An agent timed out for the first time this turn; it stays for now."""

    agent: str
    name: str
    error: str
    reason: ClassVar[str] = "@slow"


@dataclass(frozen=True)
class AgentRemoved:
    """An agent was uninvited after too many timeouts or failures, or a refused address."""

    agent: str
    name: str
    error: str
    #: The failure's token (``@timedOut``, ``@error``…): the notice's reason.
    reason: str
    timed_out: bool


@dataclass(frozen=True)
class AgentFailed:
    """An agent failed to answer (an HTTP error, not an envelope…); it stays for now."""

    agent: str
    name: str
    error: str
    reason: str


@dataclass(frozen=True)
class Waiting:
    """The person is kept waiting ("One moment…"): ``names`` the agents still answering (none:
    the floor does not know which)."""

    agent: str
    names: tuple[str, ...] = ()
    reason: ClassVar[str] = "@wait"


@dataclass(frozen=True)
class HandedOver:
    """The person's utterance went on from ``from_name`` (it did not answer it) to ``agent``.
    ``passed``: the first agent answered without an utterance (it passed it on)."""

    agent: str
    from_name: str
    to_name: str
    passed: bool
    reason: ClassVar[str] = "@handover"


@dataclass(frozen=True)
class ChatterStopped:
    """The agents kept answering each other; the floor stopped them after ``exchanges``."""

    agent: str
    exchanges: int
    reason: ClassVar[str] = "@chatter"


@dataclass(frozen=True)
class InviteTooLong:
    """``inviter`` invited an agent at an address longer than any real one: not invited."""

    agent: str
    inviter: str
    address: str
    reason: ClassVar[str] = "@error"


@dataclass(frozen=True)
class InviteTooMany:
    """An invite while the conversation has ``agents`` agents, the most it takes."""

    agent: str
    agents: int
    address: str
    reason: ClassVar[str] = "@error"


@dataclass(frozen=True)
class ConvenerAbsent:
    """The convener at ``agent`` (its URL) did not join; the floor is the convener."""

    agent: str
    reason: ClassVar[str] = "@unavailable"


@dataclass(frozen=True)
class ConvenerSilent:
    """The convener did not answer a delegated event; the floor decides in its place."""

    agent: str
    name: str
    reason: ClassVar[str] = "@error"


@dataclass(frozen=True)
class ConvenerGone:
    """The convener left or failed: the floor keeps order itself now."""

    agent: str
    reason: ClassVar[str] = "@unavailable"


@dataclass(frozen=True)
class PersonProtected:
    """An agent tried to remove the person (``uninvite``) or take their floor; not applied.
    ``why``: the event's own reason (may be empty)."""

    agent: str
    name: str
    uninvite: bool
    why: str
    reason: ClassVar[str] = "@refused"


NoticeEvent = (
    AgentSlow
    | AgentRemoved
    | AgentFailed
    | Waiting
    | HandedOver
    | ChatterStopped
    | InviteTooLong
    | InviteTooMany
    | ConvenerAbsent
    | ConvenerSilent
    | ConvenerGone
    | PersonProtected
)


def _listed(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def words(event: NoticeEvent) -> str:
    """What the person is told of ``event``, in English (the page shows it; ``talk`` prints it)."""
    match event:
        case AgentSlow(name=name, error=error):
            return f"{name} is slow to answer ({error}); it stays for now."
        case AgentRemoved(name=name, error=error, timed_out=True):
            return f"{name} did not answer in time and has left the conversation."
        case AgentRemoved(name=name, error=error):
            return f"{name} could not be reached and has left the conversation: {error}"
        case AgentFailed(name=name, error=error):
            return f"{name} had a problem answering ({error})."
        case Waiting(names=()):
            return "One moment\u2026"
        case Waiting(names=names):
            verb = "is" if len(names) == 1 else "are"
            return f"One moment: {_listed(names)} {verb} taking longer than usual to answer."
        case HandedOver(from_name=a, to_name=b, passed=True):
            return f"{a} passed this to {b}."
        case HandedOver(from_name=a, to_name=b):
            return f"{a} is not answering; {b} took it."
        case ChatterStopped(exchanges=n):
            return (
                "The agents kept answering each other; the floor stopped them after "
                f"{n} exchanges. Say something to go on."
            )
        case InviteTooLong(inviter=inviter, address=address):
            return (
                f"{inviter} invited an agent at an address of {len(address)} "
                f"characters ({clip_url(address)}); addresses are at most {MAX_URL_CHARS} "
                "characters, so it was not invited."
            )
        case InviteTooMany(agents=agents, address=address):
            return (
                f"The conversation already has {agents} agents, the most it takes, so "
                f"{clip_url(address)} was not invited."
            )
        case ConvenerAbsent(agent=url):
            return f"The convener {url} did not join; the floor is the convener."
        case ConvenerSilent(name=name):
            return f"The convener {name} did not answer; the floor carries on as the convener."
        case ConvenerGone():
            return (
                "There is no convener any more; the floor keeps order itself (the minimal "
                "convener)."
            )
        case PersonProtected(name=name, uninvite=uninvite, why=why):
            what = "remove you from the conversation" if uninvite else "take the floor from you"
            because = f" ({why})" if why else ""
            return f"{name} tried to {what}{because}; the floor did not let it."


@dataclass(frozen=True)
class Notice:
    """Something the person is told that no agent said, as the page and ``talk`` show it: its
    words, its reason token and the agent it is about. ``event``: what happened, when the floor
    said it (a notice read back from the page's protocol has only its words)."""

    text: str
    reason: str
    agent: str
    event: NoticeEvent | None = None

    @classmethod
    def of(cls, event: NoticeEvent) -> Notice:
        """The notice of ``event``: its :func:`words`, reason and agent."""
        return cls(words(event), event.reason, event.agent, event)
