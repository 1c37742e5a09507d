"""Which agents the floor treats as remote: the ones with a wire of their own."""

from __future__ import annotations

from gateway.agents.base import RemoteAgent
from gateway.agents.builtin import builtin_agents
from gateway.agents.http import HttpAgent, HttpClient


async def test_an_http_agent_is_remote_and_no_builtin_is(loopback_client: HttpClient):
    remote = HttpAgent("http://127.0.0.1:9/bot", loopback_client, dialect="ovon")
    assert isinstance(remote, RemoteAgent) and remote.dialect == "ovon"
    builtins = builtin_agents()
    assert builtins and not any(isinstance(a, RemoteAgent) for a in builtins.values())
