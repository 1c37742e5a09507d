"""Discovery (OFP 1.1.0 §1.17): what the person asks an agent it offers, and what it answered.

The person (the page's "Find agents", ``talk``) asks an agent for its manifests with
``getManifests`` of scope ``all``; a discovery agent answers with ``publishManifests`` whose
``servicingManifests`` are its own and ``discoveryManifests`` the agents it recommends. Any
servicing manifest that is not the asked agent's own counts as recommended too (some discovery
agents list the agents they front as servicing).

Sans-I/O: the floor's host (gateway/floor/host.py) sends :func:`ask` and reads the reply with
:func:`offered`.
"""

from __future__ import annotations

from gateway.agents.urls import normalize_service_url
from gateway.ofp import (
    Conversation,
    Envelope,
    Event,
    EventType,
    Manifest,
    Parameters,
    Sender,
    To,
)


def ask(conversation_id: str, sender: Sender, service_url: str) -> Envelope:
    """The ``getManifests`` (scope ``all``) to the agent at ``service_url``."""
    return Envelope(
        conversation=Conversation(id=conversation_id),
        sender=sender,
        events=[
            Event(
                event_type=EventType.GET_MANIFESTS,
                to=To(service_url=service_url),
                parameters=Parameters(recommend_scope="all"),
            )
        ],
    )


def offered(reply: Envelope | None, own: str, *, most: int = 20) -> list[tuple[Manifest, bool]]:
    """The manifests in the agent's ``reply`` (``own``: its service URL), at most ``most``, each
    with whether it was recommended (see the module's docstring)."""
    found: list[tuple[Manifest, bool]] = []
    for e in reply.events if reply is not None else []:
        if e.event_type is not EventType.PUBLISH_MANIFESTS:
            continue
        for m in e.parameters.servicing_manifests or []:
            theirs = normalize_service_url(m.identification.service_url or "")
            found.append((m, theirs != normalize_service_url(own)))
        found += [(m, True) for m in e.parameters.discovery_manifests or []]
    return found[:most]


#: Agent addresses a conversation learns the manifest of (and the floor remembers by name); past
#: it, agents are invited by URL alone. Invites are refused past Limits.max_agents at once, so
#: this is reached only by many agents invited and gone in one conversation.
MAX_NAMED = 256


class Named:
    """The agent addresses one conversation asked for their manifest (normalised), bounded by
    :data:`MAX_NAMED`: which agents it still asks, so the floor and the person learn their
    names."""

    def __init__(self, *known: str) -> None:
        self._urls: set[str] = set(known)

    @property
    def full(self) -> bool:
        """No more addresses are asked (their agents are invited by URL alone)."""
        return len(self._urls) >= MAX_NAMED

    def asking(self, url: str) -> None:
        """The manifest of the agent at ``url`` is being asked for."""
        self._urls.add(normalize_service_url(url))

    def newcomer(self, url: str) -> bool:
        """Whether to ask an agent that joined under its URL (``url``: an HTTP agent's, not
        asked before, and room left) for its manifest; if so, it counts as asked."""
        if (
            not url.startswith(("http://", "https://"))
            or normalize_service_url(url) in self._urls
            or self.full
        ):
            return False
        self.asking(url)
        return True
