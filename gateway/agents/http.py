"""Reaching remote agents: HTTP POST of envelopes, with timeouts, size caps and the address policy.

:class:`HttpClient` owns the connections (shared by every agent) and enforces the limits;
:class:`HttpAgent` is one remote agent, speaking Open Floor 1.1.0 or OVON 0.9 as it prefers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiohttp

from gateway import __version__
from gateway.agents.errors import (
    AddressRefused,
    AgentBadReply,
    AgentError,
    AgentHTTPError,
    AgentTimeout,
    AgentUnreachable,
    ReplyTooLarge,
    RequestTooLarge,
)
from gateway.agents.policy import AddressPolicy, PolicyResolver, RefusedHost
from gateway.agents.urls import same_service_url
from gateway.agents.wire import tap
from gateway.ofp import (
    Conversation,
    Envelope,
    EnvelopeError,
    Event,
    EventType,
    Identification,
    Manifest,
    Parameters,
    Sender,
    To,
    parse_envelope,
    to_ovon,
)

_CHUNK = 64 * 1024
_ERROR_DETAIL_BYTES = 300


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """Limits on every request to an agent.

    ``timeout`` covers the whole exchange, including waiting for a free connection and reading
    the reply: a slow agent costs the conversation at most that long. ``connect_timeout`` is
    shorter because an agent that cannot even accept a connection is down, not busy.
    ``max_reply_bytes`` bounds memory per reply (inline audio makes replies large, hence
    megabytes); ``max_request_bytes`` keeps the gateway from pushing huge envelopes at agents.
    ``per_host`` bounds concurrent connections to one host, so one agent in many conversations
    cannot take all sockets; further requests queue (within ``timeout``).
    """

    timeout: float = 10.0
    connect_timeout: float = 3.0
    max_reply_bytes: int = 5 * 1024 * 1024
    max_request_bytes: int = 5 * 1024 * 1024
    per_host: int = 4


@dataclass(frozen=True, slots=True)
class _Reply:
    status: int
    body: bytes
    content_type: str


class HttpClient:
    """The HTTP side of the gateway: every request to an agent goes through here.

    Connections are pooled and shared by all agents. There is one aiohttp session per scheme,
    because ``http://`` and ``https://`` follow different address rules and aiohttp caches DNS
    answers per connector: a name resolved for an https request must not be reused, unchecked,
    for a plain http one. Redirects are not followed (a redirect could point anywhere), and
    proxy settings from the environment are ignored (a proxy would hide the real target from
    the address policy).
    """

    def __init__(
        self, policy: AddressPolicy | None = None, settings: HttpSettings | None = None
    ) -> None:
        self.policy = policy or AddressPolicy()
        self.settings = settings or HttpSettings()
        self._sessions: dict[str, aiohttp.ClientSession] = {}
        self._closed = False

    async def __aenter__(self) -> HttpClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def post_json(self, url: str, body: str | bytes) -> bytes | None:
        """POST a JSON document; the reply body, or None for HTTP 204 or an empty body."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        if len(data) > self.settings.max_request_bytes:
            raise RequestTooLarge(url, len(data), self.settings.max_request_bytes)
        reply = await self._request("POST", url, data, self.settings.max_reply_bytes)
        if reply.status == 204 or not reply.body.strip():
            return None
        return reply.body

    async def fetch(self, url: str, max_bytes: int | None = None) -> tuple[bytes, str]:
        """GET ``url`` (e.g. an audio ``valueUrl``) under the same policy and limits; returns the
        body and its content type. ``max_bytes`` defaults to the reply limit."""
        reply = await self._request("GET", url, None, max_bytes or self.settings.max_reply_bytes)
        return reply.body, reply.content_type

    async def aclose(self) -> None:
        """Close every connection; the client cannot be used afterwards."""
        self._closed = True
        sessions, self._sessions = self._sessions, {}
        for session in sessions.values():
            await session.close()

    def _session(self, scheme: str) -> aiohttp.ClientSession:
        session = self._sessions.get(scheme)
        if session is None:
            if self._closed:
                raise RuntimeError("this HttpClient is closed; create a new one")
            connector = aiohttp.TCPConnector(
                resolver=PolicyResolver(self.policy, plain_http=scheme == "http"),
                limit_per_host=self.settings.per_host,
            )
            session = aiohttp.ClientSession(
                connector=connector,
                timeout=aiohttp.ClientTimeout(
                    total=self.settings.timeout, sock_connect=self.settings.connect_timeout
                ),
                headers={"User-Agent": f"ofp-gateway/{__version__}"},
                trust_env=False,
            )
            self._sessions[scheme] = session
        return session

    async def _request(self, method: str, url: str, data: bytes | None, max_bytes: int) -> _Reply:
        parsed = self.policy.check_url(url)
        headers = {"Content-Type": "application/json"} if data is not None else {}
        try:
            async with self._session(parsed.scheme).request(
                method, parsed, data=data, headers=headers, allow_redirects=False
            ) as resp:
                if not 200 <= resp.status < 300:
                    detail = await resp.content.read(_ERROR_DETAIL_BYTES)
                    raise AgentHTTPError(url, resp.status, _printable(detail))
                if resp.content_length is not None and resp.content_length > max_bytes:
                    raise ReplyTooLarge(url, max_bytes)
                body = bytearray()
                async for chunk in resp.content.iter_chunked(_CHUNK):
                    body += chunk
                    if len(body) > max_bytes:
                        raise ReplyTooLarge(url, max_bytes)
                return _Reply(resp.status, bytes(body), resp.content_type)
        except aiohttp.ClientConnectorError as exc:
            if isinstance(exc.os_error, RefusedHost):
                raise AddressRefused(url, exc.os_error.why) from None
            raise AgentUnreachable(url, exc.strerror or str(exc)) from None
        except aiohttp.ConnectionTimeoutError:
            raise AgentTimeout(url, self.settings.connect_timeout) from None
        except TimeoutError:
            raise AgentTimeout(url, self.settings.timeout) from None
        except aiohttp.ClientError as exc:
            raise AgentUnreachable(url, str(exc) or type(exc).__name__) from None


def _printable(raw: bytes) -> str:
    return " ".join(raw.decode("utf-8", errors="replace").split())[:_ERROR_DETAIL_BYTES]


class HttpAgent:
    """A remote Open Floor agent at ``url``, reached by HTTP POST: the one
    :class:`~gateway.agents.base.RemoteAgent`.

    Until :meth:`fetch_manifest` learns better, its manifest is a provisional one made from the
    URL. Dialect: an agent that answers in OVON 0.9 is spoken to in OVON 0.9 from then on
    (:func:`gateway.ofp.to_ovon`), since a 0.9 agent cannot read 1.1 envelopes; events 0.9
    cannot express are left out, and an envelope with nothing left is not sent at all. An agent
    that answers in 1.1 again is switched back.

    Some 0.9 agents never get to answer in 0.9: they read only the ``ovon`` key and fail on
    anything else. So until an agent has answered in either dialect, a 1.1 envelope it rejects
    (an HTTP error, or a reply that is not an envelope) is sent again, once, in 0.9; if that goes
    through, the agent is spoken to in 0.9 from then on (if it fails too, the first error is
    reported and no envelope to it is sent twice again). ``dialect="ovon"`` (an ``ovon+https://``
    address) declares such an agent up front.
    """

    def __init__(
        self,
        url: str,
        client: HttpClient,
        manifest: Manifest | None = None,
        *,
        dialect: str | None = None,
    ) -> None:
        self.url = url
        self._client = client
        host = client.policy.check_url(url).host or url
        self._manifest = manifest or Manifest(
            identification=Identification(
                speaker_uri=url,
                service_url=url,
                conversational_name=host,
                organization=host,
                synopsis="",
            )
        )
        self.dialect = "openFloor"
        #: The agent's dialect is known: it answered in it, or was declared to speak it.
        self._settled = False
        #: A 0.9 retry was made and failed too: the agent is broken, not 0.9-only; no more retries.
        self._retry_failed = False
        if dialect is not None:
            self.declare_dialect(dialect)

    def declare_dialect(self, dialect: str) -> None:
        """Speak ``dialect`` ("ovon" or "openFloor") to this agent from now on."""
        if dialect not in ("ovon", "openFloor"):
            raise ValueError(f"unknown dialect {dialect!r}: use 'ovon' or 'openFloor'")
        self.dialect = dialect
        self._settled = True

    @property
    def manifest(self) -> Manifest:
        """The agent's manifest: provisional until :meth:`fetch_manifest` found a real one."""
        return self._manifest

    async def handle(self, envelope: Envelope) -> Envelope | None:
        """POST ``envelope`` in the agent's dialect; return its parsed reply, or None."""
        if self._settled or self._retry_failed:
            return (await self._exchange(envelope, self.dialect))[0]
        # Not settled: 1.1 first, since a 1.1 agent that refused one envelope (a getManifests it
        # does not implement, say) must not lose the events 0.9 cannot carry.
        try:
            return (await self._exchange(envelope, "openFloor"))[0]
        except (AgentHTTPError, AgentBadReply) as rejected:
            try:
                reply, sent = await self._exchange(envelope, "ovon")
            except AgentError:
                self._retry_failed = True
                raise rejected from None
            if sent and reply is None:  # accepted in 0.9 without a word: 0.9 it is
                self.declare_dialect("ovon")
            return reply

    async def _exchange(self, envelope: Envelope, dialect: str) -> tuple[Envelope | None, bool]:
        """Send ``envelope`` in ``dialect``: the parsed reply (or None), and whether anything was
        sent (an envelope with nothing 0.9 can express is not)."""
        if dialect == "ovon":
            wire = to_ovon(envelope)
            if not wire["ovon"]["events"]:
                return None, False
            body = json.dumps(wire, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        else:
            body = envelope.to_json()
        tap("sent", self.url, body)
        raw = await self._client.post_json(self.url, body)
        if raw is None:
            return None, True
        tap("received", self.url, raw)
        try:
            reply = parse_envelope(
                raw,
                sender=Sender(speaker_uri=self.url, service_url=self.url),
                source=self.url,
                conversation_id=envelope.conversation.id,
            )
        except EnvelopeError as err:
            raise AgentBadReply(self.url, err.problems) from None
        self.dialect = reply.dialect
        self._settled = True
        return reply, True

    async def fetch_manifest(self, conversation_id: str, sender: Sender) -> Manifest:
        """Ask the agent for its manifest (``getManifests``) and adopt the first servicing
        manifest whose ``serviceUrl`` is this agent's URL; keeps the current one otherwise."""
        ask = Envelope(
            conversation=Conversation(id=conversation_id),
            sender=sender,
            events=[
                Event(
                    event_type=EventType.GET_MANIFESTS,
                    to=To(service_url=self.url),
                    parameters=Parameters(recommend_scope="internal"),
                )
            ],
        )
        reply = await self.handle(ask)
        for event in reply.events if reply else ():
            if event.event_type is EventType.PUBLISH_MANIFESTS:
                for manifest in event.parameters.servicing_manifests or ():
                    if same_service_url(manifest.identification.service_url, self.url):
                        self._manifest = manifest
                        return manifest
        return self._manifest

    async def aclose(self) -> None:
        """Nothing to release: connections belong to the shared :class:`HttpClient`."""
