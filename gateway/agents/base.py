"""What the floor needs from an agent, wherever it runs: a manifest, and envelopes in and out."""

from __future__ import annotations

from typing import Protocol

from gateway.ofp import Envelope, Manifest


class Agent(Protocol):
    """An Open Floor agent the floor can deliver envelopes to.

    Implemented by :class:`gateway.agents.http.HttpAgent` (a remote agent reached by HTTP POST)
    and by the in-process agents of :mod:`gateway.agents.builtin`.
    """

    @property
    def manifest(self) -> Manifest:
        """Who the agent is; ``identification.serviceUrl`` is how the floor addresses it."""
        ...

    async def handle(self, envelope: Envelope) -> Envelope | None:
        """Deliver one envelope; return the agent's reply (its events may be empty, an
        acknowledgement per §2.3), or None when the agent sent nothing back.

        Raises :class:`gateway.agents.errors.AgentError` subclasses on failure.
        """
        ...

    async def aclose(self) -> None:
        """Release what the agent holds."""
        ...
