"""Where the gateway may send envelopes: a guard against server-side request forgery.

Anyone who can make the gateway invite an agent chooses a URL the gateway will POST to. Without
a policy that would let them reach the gateway's own machine, its private network or a cloud
metadata service (which hands out credentials). So by default only public internet addresses are
contacted, over ``https://``; an operator opens more with allow-listed CIDRs
(``--allow-address`` or ``OFP_GATEWAY_ALLOW``), and plain ``http://`` is used only for those.

The check runs twice: on the URL before any request (scheme, user info, literal addresses), and
on every address a host name resolves to, at connect time, by :class:`PolicyResolver`, the
resolver the HTTP client connects through. Checking the resolved addresses (rather than
resolving once up front) means a name that resolves to a public address when asked and to
127.0.0.1 a moment later (DNS rebinding) still cannot get through.
"""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Iterable, Mapping
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address, ip_network

from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import DefaultResolver
from yarl import URL

from gateway.agents.errors import AddressRefused, AgentError

IPAddress = IPv4Address | IPv6Address
IPNetwork = IPv4Network | IPv6Network

#: The environment variable read by :meth:`AddressPolicy.from_env_and_args`.
ENV_VAR = "OFP_GATEWAY_ALLOW"

#: Cloud instance-metadata services. Most of them sit in ranges refused anyway; they are named so
#: a refusal says what the address is, and because some (Azure's) are public addresses.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean
        "169.254.170.2",  # AWS ECS task credentials
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "168.63.129.16",  # Azure WireServer
    )
)

#: The longest agent URL the gateway takes, in characters: what browsers and servers commonly
#: accept as a URL, and far beyond any real agent's. A longer one is refused before it is parsed,
#: and quoted only in part (:func:`clip_url`), so a hostile URL of megabytes costs no parsing and
#: is never echoed back whole (to the page, the floor, the other agents or the log).
MAX_URL_CHARS = 2048
#: Characters of a refused URL quoted in a message.
QUOTED_URL_CHARS = 120

_CGNAT = IPv4Network("100.64.0.0/10")
_NAT64 = IPv6Network("64:ff9b::/96")
_IPV4_COMPATIBLE = IPv6Network("::/96")
# The last label of a host that some parser would read as (part of) an IPv4 number: 0x7f, 017, 1.
_NUMERIC_LABEL = re.compile(r"(0x[0-9a-f]*|[0-9]+)", re.IGNORECASE)


def _embedded_ipv4(ip: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, compatible, NAT64, 6to4), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64 or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def refusal_reason(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public internet address an agent may live at, or None if it is."""
    if isinstance(ip, IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None:
            why = refusal_reason(inner)
            return f"{ip} stands for {inner}, {why}" if why else None
    if ip in METADATA_ADDRESSES:
        return f"{ip} is a cloud metadata service"
    checks = (
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (isinstance(ip, IPv4Address) and ip in _CGNAT, "a carrier-grade NAT address"),
        (ip.is_private, "a private network address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public internet address"),
    )
    return next((f"{ip} is {label}" for hit, label in checks if hit), None)


def clip_url(url: str, limit: int = QUOTED_URL_CHARS) -> str:
    """``url`` cut to ``limit`` characters for quoting, with its length said when cut."""
    if len(url) <= limit:
        return url
    return f"{url[:limit]}… ({len(url)} characters)"


def check_url_length(url: str) -> None:
    """Refuse (with :class:`UrlTooLong`) a URL longer than :data:`MAX_URL_CHARS`."""
    if len(url) > MAX_URL_CHARS:
        raise UrlTooLong(url)


class UrlTooLong(AddressRefused, ValueError):
    """The agent URL is longer than :data:`MAX_URL_CHARS`: refused unparsed, quoted short.

    Also a ``ValueError``: the server refuses such an invite from the page as a bad request."""

    def __init__(self, url: str) -> None:
        super().__init__(
            clip_url(url),
            f"the URL is {len(url)} characters long, and at most {MAX_URL_CHARS} are allowed",
            "check the URL",
        )
        self.length = len(url)


class AddressPolicy:
    """Which addresses agents may be contacted at.

    ``allow`` lists networks (CIDR text such as ``"127.0.0.0/8"``) that are allowed whatever they
    are, over ``http://`` as well as ``https://``; everything else must be a public address
    reached over ``https://``.
    """

    def __init__(self, allow: Iterable[str | IPNetwork] = ()) -> None:
        self.allow: tuple[IPNetwork, ...] = tuple(_network(c) for c in allow)

    @classmethod
    def from_env_and_args(
        cls, cli_cidrs: Iterable[str] = (), environ: Mapping[str, str] | None = None
    ) -> AddressPolicy:
        """The policy from ``--allow-address`` values plus the comma-separated
        ``OFP_GATEWAY_ALLOW`` environment variable. Raises ValueError on a malformed CIDR."""
        env = (os.environ if environ is None else environ).get(ENV_VAR, "")
        from_env = [c.strip() for c in env.split(",") if c.strip()]
        return cls([*cli_cidrs, *from_env])

    def is_allow_listed(self, ip: IPAddress) -> bool:
        """Whether ``ip`` (or the IPv4 address it embeds) is inside an allow-listed network."""
        candidates: list[IPAddress] = [ip]
        if isinstance(ip, IPv6Address) and (inner := _embedded_ipv4(ip)) is not None:
            candidates.append(inner)
        return any(c in net for c in candidates for net in self.allow if c.version == net.version)

    def address_refusal(self, ip: IPAddress, *, plain_http: bool) -> str | None:
        """Why connecting to ``ip`` is refused, or None when it is allowed."""
        if self.is_allow_listed(ip):
            return None
        why = refusal_reason(ip)
        if why is None and plain_http:
            why = f"{ip} is not allow-listed, and plain http:// is used only for allow-listed ones"
        return why

    def check_url(self, url: str | URL) -> URL:
        """Check what can be checked before connecting; returns the parsed URL.

        Refuses (with :class:`AddressRefused`) schemes other than http/https, user info, numeric
        host forms other than a dotted quad, and literal addresses the policy refuses. Host
        names are checked when they resolve, by :class:`PolicyResolver`.
        """
        text = str(url)
        check_url_length(text)
        try:
            parsed = URL(url) if isinstance(url, str) else url
        except ValueError as exc:
            raise AddressRefused(text, f"not a valid URL ({exc})", "check the URL") from None
        if parsed.scheme not in ("http", "https"):
            raise AddressRefused(
                text, f"the {parsed.scheme or 'missing'}: scheme is not allowed", "use https://"
            )
        if parsed.raw_user is not None or parsed.raw_password is not None:
            raise AddressRefused(
                text, "URLs with user info (user@host) are not allowed", "remove the user@ part"
            )
        host = parsed.host
        if not host:
            raise AddressRefused(text, "the URL has no host", "check the URL")
        literal = _literal_address(host)
        if literal is not None:
            why = self.address_refusal(literal, plain_http=parsed.scheme == "http")
            if why is not None:
                raise AddressRefused(text, why)
        elif _NUMERIC_LABEL.fullmatch(host.rstrip(".").rsplit(".", 1)[-1]):
            # 2130706433, 0x7f.1, 017700000001 and 127.1 all mean 127.0.0.1 to some parsers.
            raise AddressRefused(
                text,
                f"{host!r} is a numeric host in a form parsers disagree on",
                "write an IPv4 address as four decimal numbers, a.b.c.d",
            )
        return parsed


def _network(cidr: str | IPNetwork) -> IPNetwork:
    if isinstance(cidr, IPv4Network | IPv6Network):
        return cidr
    try:
        return ip_network(cidr.strip(), strict=False)
    except ValueError:
        raise ValueError(
            f"{cidr!r} is not a network in CIDR form; write it like 127.0.0.0/8 or fd00::/8"
        ) from None


def _literal_address(host: str) -> IPAddress | None:
    try:
        return ip_address(host)
    except ValueError:
        return None


class RefusedHost(AgentError, OSError):
    """Raised by :class:`PolicyResolver`: every address a host name resolved to was refused.

    An ``OSError`` because aiohttp wraps only those from a resolver (into a connection error,
    which :class:`~gateway.agents.http.HttpClient` turns into :class:`AddressRefused`)."""

    def __init__(self, host: str, why: str) -> None:
        # The resolver knows the host name only, not the agent's URL.
        super().__init__(f"{host}: {why}", agent_url=host)
        self.host = host
        self.why = why


class PolicyResolver(AbstractResolver):
    """A resolver that hands aiohttp only the addresses the policy allows.

    Refused addresses are dropped (``localhost`` answering both ::1 and 127.0.0.1 still works
    when only 127.0.0.0/8 is allow-listed) and a name with none left is refused: aiohttp never
    sees, so never connects to, a refused address. ``plain_http`` selects the stricter rule for
    ``http://`` connections (aiohttp caches resolutions per connector, so the client keeps one
    connector per scheme). ``inner`` does the actual lookups (aiohttp's default resolver unless
    given).
    """

    def __init__(
        self,
        policy: AddressPolicy,
        *,
        plain_http: bool,
        inner: AbstractResolver | None = None,
    ) -> None:
        self._policy = policy
        self._plain_http = plain_http
        self._inner = inner or DefaultResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        """Resolve ``host`` and keep the allowed addresses; raises :class:`RefusedHost` when
        there are none."""
        allowed: list[ResolveResult] = []
        refusals: list[str] = []
        for result in await self._inner.resolve(host, port, family):
            address = ip_address(result["host"].split("%", 1)[0])  # drop an IPv6 zone id
            why = self._policy.address_refusal(address, plain_http=self._plain_http)
            if why is None:
                allowed.append(result)
            else:
                refusals.append(f"resolves to {result['host']}; {why}")
        if not allowed:
            raise RefusedHost(host, "; ".join(refusals) or "it resolves to no address")
        return allowed

    async def close(self) -> None:
        """Release the underlying resolver."""
        await self._inner.close()
