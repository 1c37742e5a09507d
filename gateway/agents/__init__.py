"""Reaching Open Floor agents: remote ones over HTTP (safely), and the built-in ones in process.

* :mod:`~gateway.agents.base` — the :class:`Agent` protocol the floor delivers envelopes to, and
  :class:`RemoteAgent`, what an agent at the other end of a wire has besides.
* :mod:`~gateway.agents.policy` — which addresses may be contacted (SSRF guard).
* :mod:`~gateway.agents.http` — :class:`HttpClient` (limits, policy) and :class:`HttpAgent`.
* :mod:`~gateway.agents.builtin` — parrot, clock, concierge and assistant.
* :mod:`~gateway.agents.server` — the built-in agents served over HTTP.
* :mod:`~gateway.agents.errors` — every failure, as an :class:`AgentError`.
"""

from gateway.agents.base import Agent, RemoteAgent
from gateway.agents.errors import (
    AddressRefused,
    AgentBadReply,
    AgentError,
    AgentHTTPError,
    AgentTimeout,
    AgentUnreachable,
    ReplyTooLarge,
    RequestTooLarge,
    UnknownAgent,
)
from gateway.agents.http import HttpAgent, HttpClient, HttpSettings
from gateway.agents.policy import AddressPolicy

__all__ = [
    "AddressPolicy",
    "AddressRefused",
    "Agent",
    "AgentBadReply",
    "AgentError",
    "AgentHTTPError",
    "AgentTimeout",
    "AgentUnreachable",
    "HttpAgent",
    "HttpClient",
    "HttpSettings",
    "RemoteAgent",
    "ReplyTooLarge",
    "RequestTooLarge",
    "UnknownAgent",
]
