"""Which agents this gateway can reach: built-ins by ``builtin:NAME``, remote ones by URL.

One :class:`AgentDirectory` per process: the built-in agents are created once and the HTTP client
(with its address policy, timeouts and size caps) is shared by every conversation.
"""

from __future__ import annotations

from collections import OrderedDict

from gateway.agents.base import Agent
from gateway.agents.builtin import builtin_agents
from gateway.agents.builtin.assistant import Assistant
from gateway.agents.builtin.base import BuiltinAgent
from gateway.agents.errors import UnknownAgent
from gateway.agents.http import HttpAgent, HttpClient, HttpSettings
from gateway.agents.policy import AddressPolicy, check_url_length
from gateway.agents.urls import BUILTIN_SCHEME, normalize_service_url, split_dialect
from gateway.llm.settings import LlmSettings

__all__ = ["AgentDirectory", "UnknownAgent"]


class AgentDirectory:
    """Resolves service URLs to agents. Remote agents are cached (bounded, least recently used).
    ``llm`` is the built-in assistant's language model (None: the embedded default)."""

    def __init__(
        self,
        policy: AddressPolicy | None = None,
        *,
        settings: HttpSettings | None = None,
        max_remote: int = 256,
        llm: LlmSettings | None = None,
    ) -> None:
        self.policy = policy or AddressPolicy.from_env_and_args([])
        self.settings = settings
        self.builtins: dict[str, BuiltinAgent] = builtin_agents(llm=llm)
        self._client: HttpClient | None = None
        self._remote: OrderedDict[str, HttpAgent] = OrderedDict()
        self._max_remote = max_remote

    @property
    def client(self) -> HttpClient:
        """The shared HTTP client (created on first use, inside the running event loop)."""
        if self._client is None:
            self._client = HttpClient(self.policy, self.settings)
        return self._client

    @property
    def assistant(self) -> Assistant | None:
        """The built-in assistant (its language model is warmed up and measured), if built."""
        agent = self.builtins.get("assistant")
        return agent if isinstance(agent, Assistant) else None

    def builtin_url(self, name: str) -> str:
        """The service URL of a built-in agent by name."""
        return f"{BUILTIN_SCHEME}{name}"

    def resolve(self, url: str) -> Agent:
        """The agent at ``url``: ``builtin:NAME``, an ``http(s)://`` URL, or an
        ``ovon+http(s)://`` URL for an agent that speaks only OVON 0.9.

        Remote agents are one per normalised URL (:func:`normalize_service_url`): ``http://h/``
        and ``HTTP://h:80`` are the same agent, with the same manifest and dialect. The agent is
        contacted at the URL it was first resolved by (a trailing slash an agent's routes insist
        on is kept)."""
        url = url.strip()
        check_url_length(url)  # before anything parses it or keeps it as a key
        if url.startswith(BUILTIN_SCHEME):
            name = url[len(BUILTIN_SCHEME) :]
            builtin = self.builtins.get(name)
            if builtin is None:
                known = ", ".join(sorted(self.builtins))
                raise UnknownAgent(
                    f"no built-in agent {name!r}; built-ins are: {known}", agent_url=url
                )
            return builtin
        address, dialect = split_dialect(url)
        if address.lower().startswith(("http://", "https://")):
            key = normalize_service_url(address)
            remote = self._remote.get(key)
            if remote is None:
                remote = HttpAgent(address, self.client, dialect=dialect)
                self._remote[key] = remote
                while len(self._remote) > self._max_remote:
                    self._remote.popitem(last=False)
            else:
                if dialect is not None:
                    remote.declare_dialect(dialect)
                self._remote.move_to_end(key)
            return remote
        raise UnknownAgent(
            f"cannot reach {url!r}: use builtin:NAME, an https:// URL, "
            "or ovon+https:// for an agent that speaks only OVON 0.9",
            agent_url=url,
        )

    async def aclose(self) -> None:
        """Close every agent and the shared client."""
        for agent in list(self._remote.values()) + list(self.builtins.values()):
            await agent.aclose()
        if self._client is not None:
            await self._client.aclose()
