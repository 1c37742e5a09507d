"""Service URL normalisation: the spellings of one agent compare equal, different agents do not."""

from __future__ import annotations

import pytest

from gateway.agents.directory import AgentDirectory, UnknownAgent
from gateway.agents.urls import normalize_service_url, same_service_url, split_dialect


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://127.0.0.1:8081/", "http://127.0.0.1:8081"),
        ("HTTP://Agent.Example.ORG/bot", "http://agent.example.org/bot"),
        ("http://example.org:80/bot/", "http://example.org/bot"),
        ("https://example.org:443", "https://example.org/"),
        ("https://example.org/a%7eb", "https://example.org/a~b"),
        ("https://example.org/%e2%82%ac", "https://example.org/%E2%82%AC"),
        ("https://example.org/bot#part", "https://example.org/bot"),
        ("https://Bücher.example/x", "https://xn--bcher-kva.example/x"),
        ("http://[::1]:80/", "http://[::1]"),
        ("ovon+https://example.org/old/", "https://example.org/old"),
        (" builtin:parrot ", "builtin:parrot"),
    ],
)
def test_spellings_of_one_agent_are_the_same(a: str, b: str) -> None:
    assert normalize_service_url(a) == normalize_service_url(b)
    assert same_service_url(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("http://example.org/bot", "https://example.org/bot"),  # scheme matters
        ("http://example.org:8080/", "http://example.org/"),  # a non-default port matters
        ("https://example.org/Bot", "https://example.org/bot"),  # paths are case-sensitive
        ("https://example.org/a%2Fb", "https://example.org/a/b"),  # an encoded / is not a /
        ("https://example.org/bot?v=1", "https://example.org/bot?v=2"),  # the query matters
        ("builtin:parrot", "builtin:clock"),
    ],
)
def test_different_agents_stay_different(a: str, b: str) -> None:
    assert not same_service_url(a, b)


def test_missing_urls_are_never_the_same() -> None:
    assert not same_service_url(None, None)
    assert not same_service_url("", "")


def test_dialect_prefix() -> None:
    assert split_dialect("OVON+HTTPS://example.org/x") == ("HTTPS://example.org/x", "ovon")
    assert split_dialect("https://example.org/x") == ("https://example.org/x", None)
    assert split_dialect("ovon+ftp://example.org/") == ("ovon+ftp://example.org/", None)


async def test_directory_keeps_one_agent_per_normalised_url() -> None:
    directory = AgentDirectory()
    try:
        first = directory.resolve("https://agent.example.org/bot/")
        assert directory.resolve("HTTPS://AGENT.example.org:443/bot") is first
        assert first.url == "https://agent.example.org/bot/"  # contacted as first written
        assert first.dialect == "openFloor"
        # Declaring the dialect by address applies to the same agent.
        assert directory.resolve("ovon+https://agent.example.org/bot") is first
        assert first.dialect == "ovon"
        other = directory.resolve("ovon+https://legacy.example.org/")
        assert other.dialect == "ovon" and other.url == "https://legacy.example.org/"
        with pytest.raises(UnknownAgent, match="ovon\\+https://"):
            directory.resolve("ftp://agent.example.org/")
    finally:
        await directory.aclose()
