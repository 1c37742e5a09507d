"""Who may reach what on ``serve``: the hosts it answers for, the origins that may open the
WebSocket, capability URLs for the person's voice clips, and sessions per visitor address.

Kept apart from :mod:`gateway.server.app` so each rule is a small pure function with its own
test; the app only asks.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import time
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from websockets.datastructures import Headers

#: Host names a gateway on this machine is always reached by (IP literals are always allowed).
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
#: Headers that must appear at most once: two Hosts or two Origins are ambiguous, and each
#: reader of the request could pick a different one.
SINGLE_HEADERS = ("Host", "Origin", "X-Forwarded-For")
#: Longest request path (with its query) accepted; a browser never sends more for this page.
MAX_PATH = 2048


def _hostname(authority: str) -> str | None:
    """The host part of ``host[:port]`` (lower case, IPv6 without brackets), or None."""
    try:
        name = urlsplit(f"//{authority}").hostname
    except ValueError:
        return None
    return name.rstrip(".").lower() if name else None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """The hosts and origins this gateway answers for.

    Why a Host list at all: a page on ``evil.example`` whose DNS name is re-pointed at this
    machine (DNS rebinding) talks to the gateway as a *same-origin* page, with ``Host:
    evil.example`` and a matching ``Origin``. Only a list of the names the gateway is really
    reached by tells the two apart. IP literals are always accepted: rebinding needs a name.
    Ports are not compared, since a reverse proxy's port differs from the gateway's.
    """

    names: frozenset[str]
    origins: frozenset[str]

    @classmethod
    def build(
        cls,
        *,
        host: str,
        public_url: str | None,
        allow_hosts: Iterable[str] = (),
        allow_origins: Iterable[str] = (),
    ) -> HostPolicy:
        """From ``serve``'s ``--host``, ``--public-url``, ``--allow-host`` and
        ``--allow-origin``."""
        names = set(LOCAL_NAMES)
        for authority in (host, *allow_hosts):
            name = _hostname(authority.strip())
            if name:
                names.add(name)
        origins = {o.rstrip("/").lower() for o in allow_origins}
        if public_url:
            split = urlsplit(public_url)
            if split.hostname:
                names.add(split.hostname.lower())
            origins.add(f"{split.scheme}://{split.netloc}".lower())
        return cls(frozenset(names), frozenset(origins))

    def host_allowed(self, host_header: str | None) -> bool:
        """Whether a request's ``Host`` names this gateway."""
        if not host_header:
            return False
        name = _hostname(host_header)
        return name is not None and (name in self.names or _is_ip(name))

    def origin_allowed(self, origin: str, host_header: str) -> bool:
        """Whether a browser page at ``origin`` may open the WebSocket reached via
        ``host_header``: the page's own origin (same scheme family, same host and port) or a
        listed one. The scheme is compared too: a plain-http page must not borrow the session
        of the https one."""
        origin = origin.rstrip("/").lower()
        if origin in self.origins:
            return True
        try:
            split = urlsplit(origin)
        except ValueError:
            return False
        # Behind a TLS proxy listed by --public-url the page is https (taken above); reached
        # directly, the gateway itself only speaks plain http.
        return (
            split.scheme == "http"
            and split.netloc == host_header.lower()
            and self.host_allowed(host_header)
        )


def duplicate_header(headers: Headers) -> str | None:
    """The first header of :data:`SINGLE_HEADERS` that appears more than once, or None."""
    for name in SINGLE_HEADERS:
        if len(headers.get_all(name)) > 1:
            return name
    return None


def path_problem(raw_path: str) -> str | None:
    """Why a request path is refused before routing (too long, control characters), or None."""
    if len(raw_path) > MAX_PATH:
        return f"the path is longer than {MAX_PATH} characters"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in raw_path):
        return "the path holds control characters"
    if "%00" in raw_path:
        return "the path holds a NUL"
    return None


def client_address(peer: object, headers: Headers) -> str | None:
    """The visitor's address for per-address limits, or None for the machine's own clients.

    A peer on loopback is either someone on this machine or a reverse proxy on it: a proxy
    says who it serves in ``X-Forwarded-For``, whose *last* entry is the one it added itself
    (earlier entries come from the client and can be forged). Without that header a loopback
    peer is this machine's own user, who is not limited.
    """
    host = peer[0] if isinstance(peer, tuple) and peer else None
    try:
        ip = ipaddress.ip_address(str(host))
    except ValueError:
        return str(host) if host else None
    if not ip.is_loopback:
        return str(ip)
    forwarded = headers.get_all("X-Forwarded-For")
    if len(forwarded) != 1:
        return None
    last = forwarded[0].split(",")[-1].strip()
    try:
        visitor = ipaddress.ip_address(last)
    except ValueError:
        return last[:64] or None
    # A proxy forwarding this machine's own client (a load generator, a health check).
    return None if visitor.is_loopback else str(visitor)


class ClipSigner:
    """Capability URLs for voice clips: unguessable (HMAC-SHA256 with a per-process secret)
    and short-lived. An agent given one can fetch that one clip until it expires, and nothing
    else; the secret never leaves the process, so a restart revokes every URL."""

    def __init__(self, secret: bytes, ttl_s: float) -> None:
        self._secret = secret
        self.ttl_s = ttl_s

    def _sig(self, conversation_id: str, event_id: str, expires: int) -> str:
        msg = f"{conversation_id}\n{event_id}\n{expires}".encode("utf-8", "surrogatepass")
        digest = hmac.new(self._secret, msg, hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")

    def url(self, base_url: str, conversation_id: str, event_id: str) -> str:
        """The capability URL of one clip, valid for :attr:`ttl_s` seconds from now."""
        expires = int(time.time() + self.ttl_s) + 1
        sig = self._sig(conversation_id, event_id, expires)
        return (
            f"{base_url}/audio/{quote(conversation_id, safe='')}/{quote(event_id, safe='')}.wav"
            f"?exp={expires}&sig={sig}"
        )

    def valid(self, conversation_id: str, event_id: str, exp: str, sig: str) -> bool:
        """Whether ``exp``/``sig`` from a request grant this clip now."""
        if not exp.isascii() or not exp.isdigit() or not sig.isascii() or len(exp) > 12:
            return False
        expires = int(exp)
        if expires < time.time():
            return False
        return hmac.compare_digest(self._sig(conversation_id, event_id, expires), sig)


def same_secret(given: str, expected: str) -> bool:
    """Constant-time comparison of a token from a request with the real one; any text
    (non-ASCII included, which :func:`secrets.compare_digest` refuses with a TypeError)."""
    return hmac.compare_digest(
        given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass")
    )
