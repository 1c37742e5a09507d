"""The address policy: hostile URLs are refused before and at connect time; allow-listing opens
exactly the listed networks."""

from __future__ import annotations

import socket
from ipaddress import ip_address

import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult

from gateway.agents import AddressPolicy, AddressRefused, HttpClient
from gateway.agents.policy import (
    MAX_URL_CHARS,
    PolicyResolver,
    RefusedHost,
    UrlTooLong,
    refusal_reason,
)
from tests.agents.helpers import LOOPBACK, serving

# (url, still refused once 127.0.0.0/8 is allow-listed)
HOSTILE = [
    ("http://127.0.0.1/", False),
    ("http://127.8.9.10:8080/agent", False),
    ("http://[::ffff:127.0.0.1]/", False),  # IPv4-mapped IPv6 of loopback
    ("http://[64:ff9b::7f00:1]/", False),  # NAT64 form of loopback
    ("http://[::1]/", True),  # IPv6 loopback is not inside 127.0.0.0/8
    ("http://169.254.169.254/latest/meta-data/", True),
    ("http://[fd00:ec2::254]/", True),
    ("https://100.100.100.200/", True),  # Alibaba metadata, in CGNAT 100.64/10
    ("https://168.63.129.16/", True),  # Azure WireServer: a public address, named explicitly
    ("http://[::ffff:169.254.169.254]/", True),
    ("http://10.0.0.1/", True),
    ("http://172.16.5.4/", True),
    ("http://192.168.1.1/", True),
    ("http://[fd12:3456::1]/", True),  # ULA
    ("http://[fe80::1]/", True),
    ("http://100.64.0.1/", True),
    ("http://0.0.0.0/", True),
    ("http://[::]/", True),
    ("http://224.0.0.1/", True),
    ("http://240.0.0.1/", True),
    ("http://2130706433/", True),  # decimal 127.0.0.1
    ("http://017700000001/", True),  # octal 127.0.0.1
    ("http://0x7f.1/", True),
    ("http://127.1/", True),
    ("file:///etc/passwd", True),
    ("gopher://127.0.0.1:70/", True),
    ("ftp://example.org/", True),
    ("http://user@127.0.0.1/", True),
    ("https://user:secret@example.org/", True),
    ("https:///no-host", True),
]


@pytest.mark.parametrize(("url", "refused_when_allowed"), HOSTILE)
def test_hostile_urls_are_refused(url: str, refused_when_allowed: bool) -> None:
    with pytest.raises(AddressRefused) as caught:
        AddressPolicy().check_url(url)
    assert caught.value.agent_url == url
    assert caught.value.reason_token == "@error"


@pytest.mark.parametrize(("url", "refused_when_allowed"), HOSTILE)
def test_allow_listing_loopback_opens_only_loopback(url: str, refused_when_allowed: bool) -> None:
    if refused_when_allowed:
        with pytest.raises(AddressRefused):
            LOOPBACK.check_url(url)
    else:
        assert LOOPBACK.check_url(url).host is not None


def test_refusal_says_how_to_allow() -> None:
    with pytest.raises(AddressRefused) as caught:
        AddressPolicy().check_url("http://10.1.2.3:9000/bot")
    message = str(caught.value)
    assert "10.1.2.3 is a private network address" in message
    assert "--allow-address" in message and "OFP_GATEWAY_ALLOW" in message


def test_public_targets_need_https() -> None:
    policy = AddressPolicy()
    assert policy.check_url("https://93.184.216.34/agent").host == "93.184.216.34"
    assert policy.check_url("https://agents.example.org/x").host == "agents.example.org"
    with pytest.raises(AddressRefused, match="plain http"):
        policy.check_url("http://93.184.216.34/agent")
    # Allow-listed addresses may use plain http.
    assert AddressPolicy(["93.184.216.0/24"]).check_url("http://93.184.216.34/").port == 80


@pytest.mark.parametrize(
    ("address", "words"),
    [
        ("169.254.169.254", "metadata"),
        ("::ffff:10.0.0.1", "stands for 10.0.0.1"),
        ("2002:a00:1::", "stands for 10.0.0.1"),  # 6to4 of a private address
        ("127.0.0.1", "loopback"),
        ("100.64.3.4", "carrier-grade NAT"),
        ("ff02::1", "multicast"),
        ("8.8.8.8", None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_refusal_reasons(address: str, words: str | None) -> None:
    reason = refusal_reason(ip_address(address))
    if words is None:
        assert reason is None
    else:
        assert reason is not None and words in reason


def test_policy_from_environment_and_arguments() -> None:
    policy = AddressPolicy.from_env_and_args(
        ["10.0.0.0/8"], {"OFP_GATEWAY_ALLOW": " 192.168.0.0/16, fd00::/8 ,"}
    )
    assert [str(n) for n in policy.allow] == ["10.0.0.0/8", "192.168.0.0/16", "fd00::/8"]
    assert policy.check_url("http://192.168.4.4/").host == "192.168.4.4"
    assert AddressPolicy.from_env_and_args([], {}).allow == ()
    with pytest.raises(ValueError, match="CIDR"):
        AddressPolicy.from_env_and_args([], {"OFP_GATEWAY_ALLOW": "localhost"})


class _Scripted(AbstractResolver):
    """Answers each lookup with the next scripted address (a name server that rebinds)."""

    def __init__(self, *answers: list[str]) -> None:
        self._answers = list(answers)

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        return [
            {"hostname": host, "host": a, "port": port, "family": family, "proto": 0, "flags": 0}
            for a in self._answers.pop(0)
        ]

    async def close(self) -> None:
        pass


async def test_every_resolution_is_checked_so_rebinding_fails() -> None:
    resolver = PolicyResolver(
        AddressPolicy(),
        plain_http=False,
        inner=_Scripted(["93.184.216.34"], ["127.0.0.1"], ["10.0.0.7", "93.184.216.34"]),
    )
    assert [r["host"] for r in await resolver.resolve("rebind.example", 443)] == ["93.184.216.34"]
    with pytest.raises(RefusedHost, match=r"resolves to 127\.0\.0\.1"):
        await resolver.resolve("rebind.example", 443)
    # A mixed answer: only the allowed address is handed on to be connected to.
    assert [r["host"] for r in await resolver.resolve("rebind.example", 443)] == ["93.184.216.34"]


async def test_allow_listing_ipv4_loopback_keeps_localhost_usable_when_it_also_means_ipv6() -> None:
    resolver = PolicyResolver(LOOPBACK, plain_http=True, inner=_Scripted(["::1", "127.0.0.1"]))
    assert [r["host"] for r in await resolver.resolve("localhost", 80)] == ["127.0.0.1"]


async def test_plain_http_resolver_refuses_public_addresses() -> None:
    resolver = PolicyResolver(AddressPolicy(), plain_http=True, inner=_Scripted(["8.8.8.8"]))
    with pytest.raises(RefusedHost, match="plain http"):
        await resolver.resolve("dns.example", 80)


async def test_names_resolving_to_loopback_are_refused_at_connect_time() -> None:
    hits: list[str] = []

    async def record(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/{tail:.*}", record)
    async with serving(app) as base:
        port = base.rsplit(":", 1)[1]
        async with HttpClient() as client:
            for url in (f"http://localhost:{port}/a", f"https://localhost:{port}/b", base + "/c"):
                with pytest.raises(AddressRefused):
                    await client.post_json(url, "{}")
        assert hits == []  # nothing reached the server
        async with HttpClient(LOOPBACK) as client:
            assert await client.post_json(f"http://localhost:{port}/d", "{}") == b"{}"
            assert await client.post_json(base + "/e", "{}") == b"{}"
        assert hits == ["/d", "/e"]


def test_a_url_longer_than_any_agents_is_refused_unparsed_and_quoted_short() -> None:
    from gateway.agents.directory import AgentDirectory

    policy = AddressPolicy(["127.0.0.0/8"])
    longest = "http://127.0.0.1/" + "a" * (MAX_URL_CHARS - len("http://127.0.0.1/"))
    assert policy.check_url(longest).host == "127.0.0.1"
    huge = longest + "a"
    with pytest.raises(UrlTooLong) as refused:
        policy.check_url(huge)
    assert f"{len(huge)} characters" in str(refused.value) and len(str(refused.value)) < 400
    with pytest.raises(UrlTooLong):  # the page's invite and --agent resolve through the directory
        AgentDirectory(policy).resolve("builtin:" + "x" * 200_000)
