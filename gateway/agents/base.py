"""What the floor needs from an agent, wherever it runs: a manifest, and envelopes in and out."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from gateway.ofp import Envelope, Manifest, Sender


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


@runtime_checkable
class RemoteAgent(Agent, Protocol):
    """An agent at the other end of a wire (:class:`gateway.agents.http.HttpAgent`).

    The floor asks it for its manifest before inviting it; it reports every body it sends and
    receives to :mod:`gateway.agents.wire` itself (an in-process agent has no wire, so the floor
    reports what it handed one); and it speaks a dialect, ``"openFloor"`` or ``"ovon"`` (0.9),
    in which its envelopes are recorded as sent.
    """

    dialect: str

    async def fetch_manifest(self, conversation_id: str, sender: Sender) -> Manifest:
        """Ask the agent for its manifest (``getManifests``) and adopt it.

        Raises :class:`gateway.agents.errors.AgentError` subclasses on failure.
        """
        ...
