"""Service URLs: one agent, however its address was written.

People type ``http://Host:80/``, manifests say ``http://host``, and another agent invites
``http://host/?``: all the same agent. Compared as plain strings they are three agents, and an
agent invited by one spelling loses the manifest it published under another (it joins under its
host name, then under a second speaker URI once it answers). So service URLs are compared only
through :func:`normalize_service_url`, in one place, with yarl (already the URL parser of the
HTTP client) doing the RFC 3986 part.

An address may also declare the agent's dialect: ``ovon+https://…`` names an agent that speaks
only OVON 0.9. The prefix is not part of the agent's identity (:func:`split_dialect`).
"""

from __future__ import annotations

from functools import lru_cache

from yarl import URL

#: Scheme prefix declaring an agent that speaks only OVON 0.9 (``ovon+http://``, ``ovon+https://``).
OVON_PREFIX = "ovon+"
#: The service URL prefix of an agent running inside the gateway: ``builtin:parrot``.
BUILTIN_SCHEME = "builtin:"

_DEFAULT_PORTS = {"http": 80, "https": 443}


def split_dialect(url: str) -> tuple[str, str | None]:
    """``("https://x/a", "ovon")`` for ``ovon+https://x/a``; ``(url, None)`` otherwise. The prefix
    is matched case-insensitively, like a scheme."""
    text = url.strip()
    if text[: len(OVON_PREFIX)].lower() == OVON_PREFIX:
        rest = text[len(OVON_PREFIX) :]
        if rest[:7].lower() == "http://" or rest[:8].lower() == "https://":
            return rest, "ovon"
    return text, None


@lru_cache(maxsize=4096)  # the floor compares the same few URLs for every event
def normalize_service_url(url: str) -> str:
    """The canonical form of a service URL, for comparing two of them.

    For ``http(s)`` URLs: scheme and host in lower case (an internationalised host in its IDNA
    form), the default port dropped, percent-encoding normalised (unreserved characters decoded,
    hex digits upper case, as yarl requotes), trailing slashes of the path dropped (``http://h/``
    and ``http://h`` are the same resource by RFC 3986 §6.2.3; ``/bot/`` and ``/bot`` are not
    by the letter of it, but no agent serves two different agents there, and manifests written by
    hand disagree about it all the time), the fragment dropped (never sent to a server), the query
    kept. A dialect prefix (``ovon+``) is dropped. Anything else (``builtin:parrot``, a ``tag:``
    or ``urn:``, an unparseable string) is returned with only surrounding blanks removed.
    """
    text, _ = split_dialect(url)
    try:
        parsed = URL(text)
    except (ValueError, TypeError):
        return text
    scheme = parsed.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parsed.raw_host:
        return text
    port = parsed.explicit_port
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    host = parsed.raw_host.lower()
    authority = f"[{host}]" if ":" in host else host
    if port is not None:
        authority += f":{port}"
    path = parsed.raw_path.rstrip("/")
    query = f"?{parsed.raw_query_string}" if parsed.raw_query_string else ""
    return f"{scheme}://{authority}{path}{query}"


def same_service_url(a: str | None, b: str | None) -> bool:
    """Whether two service URLs name the same agent (both present, equal once normalised)."""
    return bool(a) and bool(b) and normalize_service_url(a or "") == normalize_service_url(b or "")
