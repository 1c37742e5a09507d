"""Capability URLs by which agents speak later: the inbound endpoint's bookkeeping (sans-I/O).

An agent can only speak inside its HTTP reply unless it has somewhere to POST: a timer that rings,
a long job that finishes, a ``requestFloor``. The person's ``serviceUrl`` in every envelope sent to
an agent is therefore an **inbound URL**: ``{base}/{node}/{token}``, unique to one conversation
and one agent, with a token of 192 random bits (unguessable; :func:`secrets.token_urlsafe`). It
is revoked when the agent leaves the conversation or the conversation ends; a revoked or unknown
token is simply not found. Each token admits at most :attr:`InboundDesk.rate` posts per second
(a burst of :attr:`InboundDesk.burst`), so one agent cannot flood the person.

This module holds no socket and no clock of its own (the time is passed in); the HTTP side is
``gateway/server/inbound.py`` and the delivery is :meth:`gateway.floor.host.FloorHost.post`.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from gateway.agents.urls import normalize_service_url
from gateway.ofp import Envelope, Identification

#: Posts per second one inbound URL admits on average, and at once (a burst).
RATE_PER_S = 5.0
BURST = 10
#: Inbound URLs held at once by one gateway (a bound: each is a few hundred bytes).
MAX_URLS = 100_000


@dataclass(slots=True)
class Pass:
    """What one inbound URL opens: one agent's way into one conversation."""

    conversation_id: str
    agent: str  # the agent's key on the floor host (its normalised service URL)
    tokens: float = BURST
    at: float = field(default=0.0)


class InboundDesk:
    """The inbound URLs of one gateway node.

    ``base_url``: where agents reach the inbound endpoint (the node's own, or the load balancer's
    inbound frontend); ``node``: this node's name, the path segment a load balancer routes on.
    """

    def __init__(
        self,
        base_url: str,
        *,
        node: str = "",
        rate: float = RATE_PER_S,
        burst: int = BURST,
        max_urls: int = MAX_URLS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.node = node
        self.rate = rate
        self.burst = burst
        self.max_urls = max_urls
        self._clock = clock
        self._passes: dict[str, Pass] = {}
        self._by_agent: dict[tuple[str, str], str] = {}

    def __len__(self) -> int:
        return len(self._passes)

    def url(self, token: str) -> str:
        """The URL of ``token``."""
        return f"{self.base_url}/{self.node}/{token}" if self.node else f"{self.base_url}/{token}"

    def url_for(self, conversation_id: str, agent: str) -> str | None:
        """The inbound URL of ``agent`` in ``conversation_id`` (made on first use); None when
        the desk is full."""
        token = self._by_agent.get((conversation_id, agent))
        if token is None:
            if len(self._passes) >= self.max_urls:
                return None
            token = secrets.token_urlsafe(24)
            self._passes[token] = Pass(conversation_id, agent, float(self.burst), self._clock())
            self._by_agent[(conversation_id, agent)] = token
        return self.url(token)

    def revoke(self, conversation_id: str, agent: str | None = None) -> int:
        """Revoke ``agent``'s URL in ``conversation_id`` (every URL of it when ``agent`` is
        None); returns how many were revoked."""
        gone = [
            key
            for key in self._by_agent
            if key[0] == conversation_id and (agent is None or key[1] == agent)
        ]
        for key in gone:
            self._passes.pop(self._by_agent.pop(key), None)
        return len(gone)

    def lookup(self, token: str) -> Pass | None:
        """What ``token`` opens, if it is current."""
        return self._passes.get(token)

    def admit(self, token: str) -> bool:
        """Whether one more post on ``token`` is within its rate (a token bucket)."""
        p = self._passes.get(token)
        if p is None:
            return False
        now = self._clock()
        p.tokens = min(float(self.burst), p.tokens + (now - p.at) * self.rate)
        p.at = now
        if p.tokens < 1.0:
            return False
        p.tokens -= 1.0
        return True


def refused_post(
    envelope: Envelope, *, conversation_id: str, key: str, agent: Identification | None
) -> str | None:
    """Why a post to the inbound URL issued to the agent ``key`` (its normalised service URL)
    in ``conversation_id`` is refused, or None when the floor may take it. ``agent``: the
    conversant at ``key`` now (None: it left). A post must be that agent's, by its speaker URI
    or its service URL, and for that conversation."""
    if agent is None:
        return "that agent is no longer in this conversation"
    if envelope.conversation.id != conversation_id:
        return "the envelope is for another conversation"
    sender = envelope.sender
    if sender.speaker_uri != agent.speaker_uri and not (
        sender.service_url and normalize_service_url(sender.service_url) == key
    ):
        return "the envelope's sender is not the agent this URL was given to"
    return None
