"""Which agents the gateway can reach (gateway/agents/directory.py): built-ins by name, remote
agents one per normalised URL with their dialect, a bounded cache, and the addresses refused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from ipaddress import ip_address

import pytest

from gateway.agents import HttpAgent, HttpSettings
from gateway.agents.builtin import Parrot
from gateway.agents.directory import AgentDirectory, UnknownAgent
from gateway.agents.server import AGENTS_KEY, serve_agents
from tests.agents.helpers import LOOPBACK, texts, utterance


@pytest.fixture
async def directory() -> AsyncIterator[AgentDirectory]:
    d = AgentDirectory(LOOPBACK, settings=HttpSettings(timeout=5.0, connect_timeout=2.0))
    yield d
    await d.aclose()


async def test_built_ins_are_found_by_name_and_are_the_same_agent_every_time(directory) -> None:
    parrot = directory.resolve("builtin:parrot")
    assert isinstance(parrot, Parrot)
    assert directory.resolve(" builtin:parrot ") is parrot  # one instance per process
    assert directory.builtin_url("clock") == "builtin:clock"
    assert directory.resolve(directory.builtin_url("clock")) is directory.builtins["clock"]


async def test_an_unknown_built_in_names_the_ones_there_are(directory) -> None:
    with pytest.raises(UnknownAgent, match="no built-in agent 'siri'; built-ins are: assistant, clock, concierge, convener, parrot"):
        directory.resolve("builtin:siri")


@pytest.mark.parametrize("url", ["ftp://agents.example/a", "agents.example/a", "mailto:x@example.org"])
async def test_other_schemes_are_refused_with_what_to_use(directory, url: str) -> None:
    with pytest.raises(UnknownAgent, match=r"use builtin:NAME, an https:// URL, or ovon\+https://"):
        directory.resolve(url)


async def test_one_agent_per_normalised_url_contacted_where_first_named(directory) -> None:
    first = directory.resolve("https://Agents.Example:443/a/")
    assert isinstance(first, HttpAgent)
    # Another spelling of the same service URL: the same agent, manifest and dialect state.
    assert directory.resolve("HTTPS://agents.example/a") is first
    assert first.url == "https://Agents.Example:443/a/"  # the slash its routes may insist on
    assert directory.resolve("https://agents.example/b") is not first


async def test_ovon_prefix_declares_the_dialect_also_for_an_agent_already_known(directory) -> None:
    plain = directory.resolve("https://agents.example/a")
    assert plain.dialect == "openFloor"
    again = directory.resolve("ovon+https://agents.example/a")
    assert again is plain and plain.dialect == "ovon"
    fresh = directory.resolve("OVON+http://127.0.0.1:9/legacy")
    assert fresh.dialect == "ovon" and fresh.url == "http://127.0.0.1:9/legacy"


async def test_the_remote_cache_is_bounded_least_recently_used_first() -> None:
    directory = AgentDirectory(LOOPBACK, max_remote=2)
    try:
        a = directory.resolve("https://a.example/")
        b = directory.resolve("https://b.example/")
        assert directory.resolve("https://a.example/") is a  # a is now the most recent
        directory.resolve("https://c.example/")  # evicts b, not a
        assert directory.resolve("https://a.example/") is a
        assert directory.resolve("https://b.example/") is not b
    finally:
        await directory.aclose()


async def test_a_resolved_agent_answers_over_real_http(directory) -> None:
    runner = await serve_agents("127.0.0.1", 0)
    try:
        url = runner.app[AGENTS_KEY]["parrot"].manifest.identification.service_url
        agent = directory.resolve(url)
        reply = await agent.handle(utterance("hello over the wire"))
        assert reply is not None and texts(reply) == ["You said: hello over the wire"]
        assert directory.resolve("HTTP://" + url.removeprefix("http://") + "/") is agent
    finally:
        await runner.cleanup()


async def test_aclose_closes_the_shared_client_for_good() -> None:
    directory = AgentDirectory(LOOPBACK)
    client = directory.client
    assert directory.client is client  # created once, shared by every remote agent
    directory.resolve("https://a.example/")
    await directory.aclose()
    with pytest.raises(RuntimeError):
        await client.post_json("https://a.example/", "{}")


def test_without_a_policy_the_environment_and_defaults_decide(monkeypatch) -> None:
    monkeypatch.setenv("OFP_GATEWAY_ALLOW", "10.0.0.0/8")
    directory = AgentDirectory()
    assert directory.policy.is_allow_listed(ip_address("10.1.2.3"))
    assert not directory.policy.is_allow_listed(ip_address("127.0.0.1"))
