"""Why an agent could not be reached or understood.

Every failure of :meth:`gateway.agents.base.Agent.handle` is an :class:`AgentError`. It carries
the URL of the agent, the Open Floor reason token the host reports the failure with (§1.8:
``@timedOut`` or ``@error``) and a message that tells a person what to do about it.
"""

from __future__ import annotations

from gateway.errors import GatewayError
from gateway.ofp import Problem

#: How a person opens the address policy for an agent they trust.
ALLOW_HINT = (
    "if this agent is yours and you trust it, allow its network with "
    "--allow-address CIDR or OFP_GATEWAY_ALLOW=CIDR[,CIDR...] (for example 127.0.0.0/8)"
)


class AgentError(GatewayError):
    """An agent could not be reached, or what it sent back could not be used.

    ``reason_token`` is the token the host puts in the ``reason`` of the events it sends about
    the failure (an ``uninvite``, say): ``@timedOut`` for timeouts, ``@error`` otherwise.
    """

    def __init__(self, message: str, *, agent_url: str, reason_token: str = "@error") -> None:
        super().__init__(message)
        self.agent_url = agent_url
        self.reason_token = reason_token


class UnknownAgent(AgentError, ValueError):
    """The address names no agent this gateway can reach: no such built-in, or a scheme it does
    not speak. Also a ``ValueError``: the server refuses such an invite as a bad request."""


class AgentTimeout(AgentError):
    """The agent did not answer within the time allowed."""

    def __init__(self, agent_url: str, seconds: float) -> None:
        super().__init__(
            f"{agent_url} did not answer within {seconds:g} s; check that the agent is running "
            "and reachable, or give it more time",
            agent_url=agent_url,
            reason_token="@timedOut",
        )
        self.seconds = seconds


class AgentUnreachable(AgentError):
    """No connection could be made to the agent, or it broke off before the reply was complete."""

    def __init__(self, agent_url: str, cause: str) -> None:
        super().__init__(
            f"could not talk to {agent_url}: {cause}; check the URL and that it is up",
            agent_url=agent_url,
        )


class AddressRefused(AgentError):
    """The address policy forbids sending anything to this URL (a server-side request forgery
    guard: loopback, private, link-local and metadata addresses are off limits by default)."""

    def __init__(self, agent_url: str, why: str, hint: str = ALLOW_HINT) -> None:
        super().__init__(f"refusing to contact {agent_url}: {why}; {hint}", agent_url=agent_url)
        self.why = why


class AgentHTTPError(AgentError):
    """The agent answered with an HTTP status other than 2xx."""

    def __init__(self, agent_url: str, status: int, detail: str = "") -> None:
        text = f"{agent_url} answered HTTP {status}"
        if 300 <= status < 400:
            text += " (redirects are not followed: give the agent's final URL)"
        super().__init__(f"{text}: {detail}" if detail else text, agent_url=agent_url)
        self.status = status


class AgentBadReply(AgentError):
    """The agent's reply is not JSON, or not an Open Floor (or OVON 0.9) envelope."""

    def __init__(self, agent_url: str, problems: list[Problem]) -> None:
        listed = "; ".join(str(p) for p in problems) or "unreadable reply"
        super().__init__(
            f"{agent_url} sent a reply that is not an envelope: {listed}", agent_url=agent_url
        )
        self.problems = problems


class ReplyTooLarge(AgentError):
    """The reply exceeded the size limit; reading stopped as soon as it did."""

    def __init__(self, agent_url: str, limit: int) -> None:
        super().__init__(
            f"{agent_url} sent more than {limit} bytes; reading stopped there "
            "(raise the reply size limit if this agent is trusted to send that much)",
            agent_url=agent_url,
        )
        self.limit = limit


class RequestTooLarge(AgentError):
    """The envelope to send is larger than the request size limit, so it was not sent."""

    def __init__(self, agent_url: str, size: int, limit: int) -> None:
        super().__init__(
            f"not sending {size} bytes to {agent_url}: the limit is {limit} bytes "
            "(send audio by valueUrl rather than inline, or raise the request size limit)",
            agent_url=agent_url,
        )
        self.size = size
        self.limit = limit
