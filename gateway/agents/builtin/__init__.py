"""Agents that run inside the gateway: parrot, clock, concierge, assistant (a language model)
and the convener.

In process their service URLs are ``builtin:parrot`` and so on; served over HTTP by
:mod:`gateway.agents.server` they are the real ``http://host:port/parrot`` URLs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime

from gateway.agents.builtin.assistant import Assistant
from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, local_now
from gateway.agents.builtin.clock import Clock
from gateway.agents.builtin.concierge import Concierge, match_score
from gateway.agents.builtin.convener import Convener
from gateway.agents.builtin.parrot import Parrot
from gateway.agents.errors import UnknownAgent
from gateway.agents.urls import BUILTIN_SCHEME
from gateway.llm.settings import LlmSettings

#: The built-in agents, by the name they are served under.
BUILTIN_NAMES = ("parrot", "clock", "concierge", "assistant", "convener")


def builtin_agents(
    service_base: str = BUILTIN_SCHEME,
    names: Iterable[str] | None = None,
    *,
    now: Callable[[], datetime] = local_now,
    llm: LlmSettings | None = None,
) -> dict[str, BuiltinAgent]:
    """The built-in agents (all, or those ``names``), each at ``service_base + name``; the
    assistant's language model is ``llm`` (None: the embedded default).

    The concierge's directory holds the manifests of the other agents chosen here. Raises
    :class:`~gateway.agents.errors.UnknownAgent` (a ``ValueError``) on an unknown name.
    """
    chosen = list(BUILTIN_NAMES if names is None else dict.fromkeys(names))
    unknown = [n for n in chosen if n not in BUILTIN_NAMES]
    if unknown:
        raise UnknownAgent(
            f"no built-in agent called {', '.join(unknown)}; choose from {', '.join(BUILTIN_NAMES)}",
            agent_url=f"{service_base}{unknown[0]}",
        )
    agents: dict[str, BuiltinAgent] = {}
    if "parrot" in chosen:
        agents["parrot"] = Parrot(f"{service_base}parrot", now=now)
    if "clock" in chosen:
        agents["clock"] = Clock(f"{service_base}clock", now=now)
    if "assistant" in chosen:
        agents["assistant"] = Assistant(f"{service_base}assistant", settings=llm, now=now)
    if "concierge" in chosen:
        directory = [a.manifest for a in agents.values()]
        agents["concierge"] = Concierge(directory, f"{service_base}concierge", now=now)
    if "convener" in chosen:  # a chair, not an agent to recommend: not in the directory
        agents["convener"] = Convener(f"{service_base}convener", now=now)
    return {name: agents[name] for name in BUILTIN_NAMES if name in agents}


__all__ = [
    "BUILTIN_NAMES",
    "Answer",
    "Assistant",
    "BuiltinAgent",
    "Clock",
    "Concierge",
    "Convener",
    "Heard",
    "Parrot",
    "builtin_agents",
    "match_score",
]
