"""``python -m gateway serve``: the page, the WebSocket and the voice sessions on one port.

One :class:`Gateway` per process holds what is shared — the models, the agent directory, the
records — and the open conversations (:class:`Room`). Each WebSocket is a :class:`Client` that
attaches a :class:`~gateway.proxy.VoiceSession` to a room; when it drops, the room waits
``rejoin_s`` for the same page (conversation id + token) to come back. The protocol is in
``docs/client-protocol.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import mimetypes
import secrets
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from gateway.agents.directory import AgentDirectory
from gateway.agents.errors import AgentError
from gateway.audio import SAMPLE_RATE
from gateway.catalogue import wake_words
from gateway.floor.host import FloorHost, Limits, user_identity
from gateway.ofp.jsonio import loads_external
from gateway.proxy.session import SessionSettings, Timing, VoiceModels, VoiceSession
from gateway.proxy.utterance import UtteranceParts
from gateway.records.base import Recorder
from gateway.resources import web_root
from gateway.server import access, rooms
from gateway.server.clips import ClipShelf, VoiceRecords
from gateway.server.guard import bound_html, clip_text
from gateway.server.memory import ALLOCATOR, TRIM_INTERVAL_S, MemoryTrimmer
from gateway.server.messages import TurnStages, TurnTiming
from gateway.server.metrics import Metrics
from gateway.server.readiness import HANDOVER_CODE, HANDOVER_REASON, readiness
from gateway.server.webrtc import WEBRTC_RATE, WebRTCLink

log = logging.getLogger(__name__)

#: The page: top-level web/ in a checkout, gateway/web in the wheel (gateway/resources.py).
WEB_ROOT = web_root()
WS_PCM_OUT_RATE = 24_000
#: How far ahead of real time agent audio goes out to a WebSocket client (dropped on barge-in).
WS_LEAD_MS = 250
#: UI events kept per conversation to re-draw a reloaded page.
HISTORY_EVENTS = 300
#: The loop-lag probe sleeps this long and records how late it woke.
LAG_PROBE_S = 0.05
_HISTORY_TYPES = {"transcript", "utterance", "notice"}


@dataclass(frozen=True)
class GatewaySettings:
    """What ``serve`` is told on its command line; defaults suit one machine."""

    host: str = "127.0.0.1"
    port: int = 8080
    agents: tuple[str, ...] = ("builtin:parrot", "builtin:clock", "builtin:concierge")
    public_url: str | None = None
    allow_origins: tuple[str, ...] = ()
    max_sessions: int = 12
    #: Refuse new sessions while final transcripts wait this long for the shared model on
    #: average: the sessions already open would all get slower otherwise.
    max_stt_wait_s: float = 0.5
    #: Conversations kept for a rejoin after their page went; beyond this the one detached
    #: longest is ended early, so visitors coming and going cannot pile conversations up.
    max_detached: int = 64
    max_frame_bytes: int = 256 * 1024
    hello_timeout_s: float = 10.0
    rejoin_s: float = 600.0
    #: Longest a drain (SIGTERM, SIGUSR1) waits for the turns in progress before handing over.
    drain_s: float = 30.0
    #: This node's name in the records (who holds a conversation); "" makes one up at start.
    node: str = ""
    #: Seconds between handing freed memory back to the system (server/memory.py); 0: never.
    trim_memory_s: float = TRIM_INTERVAL_S
    audio_feature: str = "inline"
    #: Other host names the gateway answers for (``--allow-host``); see access.HostPolicy.
    allow_hosts: tuple[str, ...] = ()
    #: Keep the person's voice in the records (``--keep-audio``). Off: a voice is personal
    #: data a public service should not hoard; transcripts, words and timings are kept.
    keep_audio: bool = False
    #: How long an agent may fetch a clip by its capability URL (``url`` audio mode).
    audio_url_ttl_s: float = access.AUDIO_URL_TTL_S
    #: STUN/TURN servers the WebRTC side may use (``--ice-server``). None by default: a gateway
    #: on this machine reaches its pages over host candidates and contacts nobody else.
    ice_servers: tuple[str, ...] = ()
    #: Sessions at once from one visitor address (0: no limit); the machine's own clients
    #: are not limited (see access.client_address).
    max_sessions_per_address: int = access.MAX_SESSIONS_PER_ADDRESS
    wake: str = "off"
    #: Seconds between purges of records older than the recorder's retention, while serving (a
    #: retention shorter than ten of these is checked ten times per retention instead).
    purge_every_s: float = 3600.0
    session: SessionSettings = field(default_factory=SessionSettings)

    @property
    def base_url(self) -> str:
        """Where people (and agents fetching audio) reach this gateway."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"


@dataclass
class Room:
    """One conversation held by this gateway, with or without a page attached."""

    conversation: FloorHost
    token: str
    history: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=HISTORY_EVENTS))
    floor: dict[str, Any] | None = None
    client: Client | None = None
    detached_at: float | None = None


class Gateway:
    """Shared state of one ``serve`` process."""

    def __init__(
        self,
        settings: GatewaySettings,
        *,
        models: VoiceModels,
        directory: AgentDirectory,
        recorder: Recorder | None = None,
    ) -> None:
        self.settings = settings
        self.models = models
        self.directory = directory
        self.recorder = recorder
        self.hosts = access.HostPolicy.build(
            host=settings.host,
            public_url=settings.public_url,
            allow_hosts=settings.allow_hosts,
            allow_origins=settings.allow_origins,
        )
        self.signer = access.ClipSigner(secrets.token_bytes(32), settings.audio_url_ttl_s)
        shelf = ClipShelf(settings.audio_url_ttl_s) if settings.audio_feature == "url" else None
        #: What sessions and conversations record through: the person's voice only if kept.
        self.voice_records: VoiceRecords | None = (
            VoiceRecords(recorder, keep_audio=settings.keep_audio, shelf=shelf)
            if recorder is not None or shelf is not None
            else None
        )
        self.metrics = Metrics()
        self.metrics.memory.info({"allocator": ALLOCATOR})
        self.rooms: dict[str, Room] = {}
        self.clients: set[Client] = set()
        self.ready = False
        #: Refusing new sessions before leaving (server/readiness.py).
        self.draining = False
        self.node = settings.node or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        self._server: Server | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._lag_probe: asyncio.Task[None] | None = None
        self._trimmer: asyncio.Task[None] | None = None
        self._purger: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> Server:
        """Listen, then load models. Returns the websockets server once the models are loaded.

        Listening first lets ``/readyz`` and ``/healthz`` say "loading models" meanwhile (a
        balancer then waits for this node); sessions are refused until then.
        """
        s = self.settings
        self._server = await serve(
            self._client,
            s.host,
            s.port,
            process_request=self._http,
            max_size=s.max_frame_bytes,
            max_queue=32,
            compression=None,  # PCM does not compress; deflate would only cost CPU
            ping_interval=20,
            ping_timeout=20,
        )
        await self.models.warm_up()
        self.ready = True
        loop = asyncio.get_running_loop()
        self._reaper = loop.create_task(self._reap())
        self._lag_probe = loop.create_task(self._probe_loop_lag())
        if s.trim_memory_s > 0:
            trimmer = MemoryTrimmer(s.trim_memory_s, self._observe_trim)
            self._trimmer = loop.create_task(trimmer.run())
        if getattr(self.recorder, "retention_days", None):
            self._purger = loop.create_task(self._purge_expired(self.recorder.retention_days))
        return self._server

    async def close(self, *, handover: bool = False) -> None:
        """Close every client and conversation, then the server. With ``handover`` (after a
        drain) the conversations are left open in the records for another node to take up."""
        for task in (self._reaper, self._lag_probe, self._trimmer, self._purger):
            if task is not None:
                task.cancel()
        for client in list(self.clients):
            if handover:
                await client.ws.close(HANDOVER_CODE, HANDOVER_REASON)
            else:
                await client.ws.close(1001, "gateway shutting down")
        if handover:  # left open in the records for another node: no bye, no end
            for room_id in list(self.rooms):
                await self.drop_room(room_id)
        # Together: each room's agents get their bye (bounded by Limits.bye_timeout_s) at once.
        await asyncio.gather(*(self._end_room(r, "closed") for r in list(self.rooms)))
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self.directory.aclose()

    async def _reap(self) -> None:
        while True:
            await asyncio.sleep(min(5.0, max(0.5, self.settings.rejoin_s / 2)))
            now = time.monotonic()
            expired = [
                room_id
                for room_id, room in self.rooms.items()
                if room.client is None
                and room.detached_at
                and now - room.detached_at > self.settings.rejoin_s
            ]
            await asyncio.gather(*(self._end_room(r, "completed") for r in expired))

    async def _purge_expired(self, retention_days: float) -> None:
        """Apply the retention over and over: the recorder applies it only when it opens, and a
        server may run for months."""
        interval = min(self.settings.purge_every_s, retention_days * 86_400 / 10)
        while True:
            await asyncio.sleep(interval)
            try:
                purged = self.recorder.purge_expired(datetime.now(UTC))
            except Exception:  # a failing disk must not stop the server; try again next time
                log.exception("purging expired records failed")
                continue
            if purged:
                log.info("purged %d conversations older than %g days", len(purged), retention_days)

    def _observe_trim(self, released: int, seconds: float) -> None:
        self.metrics.memory_released.inc(released)
        self.metrics.memory_trim.observe(seconds)

    async def _probe_loop_lag(self) -> None:
        """Sleep a fixed time, over and over; waking late means something held the loop."""
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(LAG_PROBE_S)
            self.metrics.loop_lag.observe(max(0.0, loop.time() - start - LAG_PROBE_S))

    async def _end_room(self, room_id: str, status: str) -> None:
        if rooms.held_elsewhere(self, room_id):
            # Another node took it up: the conversation goes on there, so no bye and no end.
            await self.drop_room(room_id)
            return
        room = self.rooms.pop(room_id, None)
        if room is None:
            return
        try:
            await room.conversation.end()  # the agents are told: a bye from the person
        except Exception:
            log.exception("conversation %s: could not say bye", room_id)
        await room.conversation.close()
        self.metrics.conversations.set(len(self.rooms))
        if self.recorder is not None:
            with contextlib.suppress(Exception):
                self.recorder.conversation_ended(room_id, at=datetime.now(UTC), status=status)

    async def drop_room(self, room_id: str) -> None:
        """Let a conversation go without ending it (another node holds or will hold it)."""
        room = self.rooms.pop(room_id, None)
        if room is None:
            return
        if room.client is not None:
            await room.client.detach()
        await room.conversation.close()
        self.metrics.conversations.set(len(self.rooms))

    # ------------------------------------------------------------------ rooms
    async def open_room(self) -> tuple[str, Room]:
        """A new conversation with the configured agents invited."""
        conv_id = f"conv:{uuid.uuid4()}"
        user = user_identity(
            f"user:{conv_id[5:13]}", name="You", service_url=self.settings.base_url
        )
        conv = FloorHost(
            conv_id,
            user=user,
            resolve=self.directory.resolve,
            on_user=lambda e: None,
            recorder=self.voice_records if self.recorder is not None else None,
            limits=Limits(),
        )
        room = Room(conv, secrets.token_urlsafe(18))
        self.rooms[conv_id] = room
        self.metrics.conversations.set(len(self.rooms))
        if self.recorder is not None:
            try:
                self.recorder.conversation_started(
                    conv_id, at=datetime.now(UTC), title="", user_speaker_uri=user.speaker_uri
                )
            except Exception:  # records must never take the conversation down (nor stop it)
                log.exception("conversation %s: could not record its start", conv_id)
        rooms.hold(self, conv_id, room.token)  # so any node can take it up
        for url in self.settings.agents:
            with contextlib.suppress(Exception):
                conv.know(self.directory.resolve(url).manifest.identification)
        return conv_id, room

    def find_room(self, conv_id: Any, token: Any) -> Room | None:
        """The room for a rejoin, if the id and token match."""
        room = self.rooms.get(conv_id) if isinstance(conv_id, str) else None
        if room is None or not isinstance(token, str) or not access.same_secret(token, room.token):
            return None
        return room

    # ------------------------------------------------------------------ HTTP
    def _http(self, connection: ServerConnection, request: Request) -> Response | None:
        try:
            refusal = self._screen(request)
            return refusal if refusal is not None else self._route(request)
        except Exception as exc:  # a bug must cost one request, not print a page of traceback
            log.error(
                "HTTP %s failed: %s: %s", clip_text(request.path, 120), type(exc).__name__, exc
            )
            return _text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error\n")

    def _screen(self, request: Request) -> Response | None:
        """Refusals before routing: ambiguous headers, odd paths, hosts we do not answer for."""
        problem = None
        status = HTTPStatus.BAD_REQUEST
        twice = access.duplicate_header(request.headers)
        if twice is not None:
            problem = f"the {twice} header appears more than once"
        elif (why := access.path_problem(request.path)) is not None:
            problem = why
            if len(request.path) > access.MAX_PATH:
                status = HTTPStatus.REQUEST_URI_TOO_LONG
        elif not self.hosts.host_allowed(request.headers.get("Host")):
            host = clip_text(request.headers.get("Host") or "", 100)
            status = HTTPStatus.MISDIRECTED_REQUEST
            problem = (
                f"this gateway does not answer for the host {host!r}; "
                "start serve with --allow-host NAME to add it"
            )
        if problem is None:
            return None
        log.info("refused a request (%d): %s", status.value, problem)
        return _text(status, problem + "\n")

    def _route(self, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path == "/ws":
            return self._check_origin(request)
        if path == "/healthz":
            ok = self.ready
            return _response(
                HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE,
                b"ok\n" if ok else b"loading models\n",
                "text/plain; charset=utf-8",
            )
        if path == "/readyz":
            status, body = readiness(self)
            return _response(status, body, "application/json")
        if path == "/metrics":
            self.metrics.sessions.set(len(self.clients))
            self.metrics.tasks.set(len(asyncio.all_tasks()))
            self.metrics.threads.set(threading.active_count())
            self.metrics.stt_wait.set(self.models.transcriber.queue_wait_s)
            self.metrics.stt_partials_skipped.set(self.models.transcriber.partials_skipped)
            self.metrics.stt_full_window.set(self.models.transcriber.full_window_retries)
            self.metrics.tts_pending.set(self.models.synthesizer.pending)
            self.metrics.tts_late.set(self.models.synthesizer.late_sentences)
            return _response(HTTPStatus.OK, self.metrics.render(), "text/plain; version=0.0.4")
        if path.startswith("/audio/"):
            return self._audio(request.path)
        if path.startswith("/export/"):
            return self._export(request.path)
        return self._static(path)

    def _check_origin(self, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if origin is None:
            return None  # not a browser: no cross-site risk to guard against
        if self.hosts.origin_allowed(origin, request.headers.get("Host", "")):
            return None
        origin = clip_text(origin, 200)
        log.info("refused a WebSocket from the origin %s", origin)
        return _text(
            HTTPStatus.FORBIDDEN,
            f"origin {origin} is not allowed; start serve with --allow-origin {origin}\n",
        )

    def _static(self, path: str) -> Response:
        if path in ("", "/"):
            path = "/index.html"
        try:
            target = (WEB_ROOT / unquote(path).lstrip("/")).resolve()
            found = target.is_relative_to(WEB_ROOT) and target.is_file()
        except (OSError, ValueError):  # a name too long for the file system, and the like
            found = False
        if not found:
            return _text(HTTPStatus.NOT_FOUND, "not found\n")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "text/javascript"):
            kind += "; charset=utf-8"
        return _response(HTTPStatus.OK, target.read_bytes(), kind, cache="no-cache")

    def _audio(self, raw_path: str) -> Response:
        """A voice clip, to the conversation's own page (``?token=``) or to an agent holding its
        capability URL (``?exp=&sig=``); with the audio feature off, to nobody."""
        split = urlsplit(raw_path)
        parts = split.path.split("/")
        records = self.voice_records
        if (
            len(parts) != 4
            or not parts[3].endswith(".wav")
            or records is None
            or self.settings.audio_feature == "off"
        ):
            return _text(HTTPStatus.NOT_FOUND, "not found\n")
        conv_id, event_id = unquote(parts[2]), unquote(parts[3][: -len(".wav")])
        query = _query(split.query)
        allowed = rooms.token_ok(self, conv_id, query.get("token")) or (
            self.settings.audio_feature == "url"
            and self.signer.valid(conv_id, event_id, query.get("exp", ""), query.get("sig", ""))
        )
        if not allowed:
            return _text(HTTPStatus.FORBIDDEN, "this clip needs its conversation's token\n")
        clip = records.clip(conv_id, event_id)
        if clip is None:
            return _text(HTTPStatus.NOT_FOUND, "no such clip\n")
        return _response(HTTPStatus.OK, clip, "audio/wav")

    def _export(self, raw_path: str) -> Response:
        from gateway.records.errors import RecordsError
        from gateway.records.export import ExportRefused, export_conversation

        split = urlsplit(raw_path)
        conv_id = unquote(split.path[len("/export/") :])
        query = _query(split.query)
        token_ok = rooms.token_ok(self, conv_id, query.get("token"))
        if not token_ok or self.recorder is None:
            return _response(
                HTTPStatus.FORBIDDEN,
                b"unknown conversation or wrong token\n",
                "text/plain; charset=utf-8",
            )
        fmt = query.get("format", "mplp-dialog")
        try:  # the same function, and so the same rules, as the `export` command
            stored = self.recorder.get_conversation(conv_id, with_audio=True)
            doc = export_conversation(stored, fmt, query.get("agent"))
        except ExportRefused as exc:
            return _response(exc.status, f"{exc}\n".encode(), "text/plain; charset=utf-8")
        except RecordsError as exc:  # nothing recorded of it (yet)
            return _response(HTTPStatus.NOT_FOUND, f"{exc}\n".encode(), "text/plain; charset=utf-8")
        name = f"{conv_id.replace(':', '-')}.{fmt}.json"
        return _response(
            HTTPStatus.OK,
            json.dumps(doc, indent=2, allow_nan=False).encode(),
            "application/json",
            extra={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # ------------------------------------------------------------------ WebSocket
    async def _client(self, ws: ServerConnection) -> None:
        if urlsplit(ws.request.path).path != "/ws":
            await ws.close(1008, "the WebSocket is at /ws")
            return
        refusal = self._refusal() or self._address_refusal(ws)
        if refusal is not None:
            self.metrics.refused.inc()
            await ws.close(1013, refusal)
            return
        client = Client(self, ws)
        client.address = access.client_address(ws.remote_address, ws.request.headers)
        self.clients.add(client)
        self.metrics.sessions.set(len(self.clients))
        self.metrics.sessions_total.inc()
        try:
            await client.run()
        finally:
            self.clients.discard(client)
            self.metrics.sessions.set(len(self.clients))
            await client.detach()
            await self._trim_detached()

    def _refusal(self) -> str | None:
        """Why a new session cannot be served well now, or None to admit it."""
        s = self.settings
        if not self.ready:
            return "the gateway is loading its speech models; try again in a moment"
        if self.draining:
            return "this gateway node is leaving; try again in a moment"
        if len(self.clients) >= s.max_sessions:
            return f"the gateway is full ({s.max_sessions} sessions); try again in a minute"
        if self.models.transcriber.queue_wait_s > s.max_stt_wait_s:
            return (
                "the gateway is busy: speech recognition is behind for the people already "
                "talking; try again in a minute"
            )
        return None

    def _address_refusal(self, ws: ServerConnection) -> str | None:
        """Why one more session from this visitor's address is refused, or None: one visitor
        must not be able to take every session of the gateway."""
        limit = self.settings.max_sessions_per_address
        address = access.client_address(ws.remote_address, ws.request.headers)
        if limit <= 0 or address is None:
            return None
        if sum(1 for c in self.clients if c.address == address) < limit:
            return None
        log.info("refused a session: %s already has %d", address, limit)
        return f"too many sessions from your address ({limit}); close one and try again"

    async def _trim_detached(self) -> None:
        detached = sorted(
            (room.detached_at, room_id)
            for room_id, room in self.rooms.items()
            if room.client is None and room.detached_at is not None
        )
        for _, room_id in detached[: max(0, len(detached) - self.settings.max_detached)]:
            await self._end_room(room_id, "completed")


def _query(query: str) -> dict[str, str]:
    """The first value of each query parameter (bounded: a query is at most MAX_PATH long)."""
    return {k: v[0] for k, v in parse_qs(query, max_num_fields=32).items()}


def _text(status: HTTPStatus, text: str) -> Response:
    return _response(status, text.encode("utf-8", "replace"), "text/plain; charset=utf-8")


def _response(
    status: HTTPStatus,
    body: bytes,
    content_type: str,
    *,
    cache: str = "no-store",
    extra: dict[str, str] | None = None,
) -> Response:
    headers = Headers(
        {
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            "Cache-Control": cache,
            "X-Content-Type-Options": "nosniff",
        }
    )
    for k, v in (extra or {}).items():
        headers[k] = v
    return Response(status.value, status.phrase, headers, body)


class Client:
    """One page (or other client) on the WebSocket."""

    def __init__(self, gateway: Gateway, ws: ServerConnection) -> None:
        self.gateway = gateway
        self.ws = ws
        self.room: Room | None = None
        self.room_id = ""
        self.session: VoiceSession | None = None
        self.link: WebRTCLink | None = None
        self.transport = "none"
        #: The visitor's address for the per-address limit (None: this machine's own client).
        self.address: str | None = None
        self._pump: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._timing_tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        try:
            hello = await asyncio.wait_for(self.ws.recv(), self.gateway.settings.hello_timeout_s)
        except (TimeoutError, ConnectionClosed):
            with contextlib.suppress(ConnectionClosed):
                await self.ws.close(1008, "send a hello message first")
            return
        msg = _json(hello)
        if msg is None or msg.get("type") != "hello":
            await self.ws.close(1008, 'the first message must be {"type": "hello", ...}')
            return
        await self._attach(msg)
        try:
            async for message in self.ws:
                if isinstance(message, bytes):
                    self._audio_in(message)
                    continue
                data = _json(message)
                if data is None:
                    await self.send(
                        {"type": "error", "message": "messages are JSON objects (not too deep)"}
                    )
                    continue
                try:
                    await self._handle(data)
                except (ValueError, LookupError, AgentError) as exc:  # the request was wrong
                    log.info("refused a client request: %s", clip_text(str(exc), 300))
                    await self.send({"type": "error", "message": clip_text(str(exc), 1000)})
                except Exception as exc:  # one bad request must not end the session
                    log.exception("client request failed: %s", clip_text(str(data.get("type")), 40))
                    await self.send({"type": "error", "message": clip_text(str(exc), 1000)})
        except ConnectionClosed:
            pass

    async def _attach(self, hello: dict[str, Any]) -> None:
        gw = self.gateway
        s = gw.settings
        room = await rooms.find_or_resume(gw, hello.get("conversationId"), hello.get("token"))
        rejoined = room is not None
        if room is None:
            self.room_id, room = await gw.open_room()
        else:
            self.room_id = room.conversation.id
            if room.client is not None and room.client is not self:
                old = room.client
                await old.detach()
                with contextlib.suppress(Exception):
                    await old.ws.close(4000, "this conversation was opened in another page")
        self.room = room
        room.client = self
        room.detached_at = None
        self.transport = (
            hello.get("transport") if hello.get("transport") in ("webrtc", "ws") else "none"
        )
        out_rate = WEBRTC_RATE if self.transport == "webrtc" else WS_PCM_OUT_RATE
        parts = UtteranceParts(audio=s.audio_feature)  # type: ignore[arg-type]
        wake = hello.get("wake") if isinstance(hello.get("wake"), str) else s.wake
        if wake != "off" and wake not in wake_words() and not wake.startswith("phrase:"):
            wake = s.wake  # an unknown choice from the page falls back to the server's
        settings = SessionSettings(
            **{
                **s.session.__dict__,
                "out_rate": out_rate,
                "fill_silence": self.transport == "webrtc",
                # The page's WebSocket player keeps its own buffer: a lead rides over jitter.
                "playout_lead_ms": WS_LEAD_MS if self.transport == "ws" else 0,
                "parts": parts,
                "wake": wake,
            }
        )
        self.session = VoiceSession(
            room.conversation,
            gw.models,
            on_event=self._event,
            fetch=gw.directory.client.fetch,
            settings=settings,
            recorder=gw.voice_records,
            audio_url=lambda event_id: gw.signer.url(s.base_url, self.room_id, event_id),
        )
        self.session.on_timing = self._timing
        if hello.get("mode") in ("ptt", "handsfree"):
            self.session.mode = hello["mode"]
        await self.send(
            {
                "type": "welcome",
                "conversationId": self.room_id,
                "token": room.token,
                "rejoined": rejoined,
                "user": {"speakerUri": room.conversation.user.speaker_uri, "name": "You"},
                "audio": {"inRate": SAMPLE_RATE, "outRate": out_rate},
                "history": list(room.history),
                "builtins": sorted(gw.directory.builtins),
                "wake": self.session.wake_name,
                "wakeWords": wake_words(),
                # Stated on the page: whether the person's voice is stored (serve --keep-audio).
                "keepAudio": s.keep_audio and gw.recorder is not None,
            }
        )
        if room.floor is not None:
            await self.send(room.floor)
        elif rejoined and room.conversation.on_floor is not None:
            room.conversation.on_floor(room.conversation.floor)  # taken up from the records
        if self.transport == "ws":
            self._pump = asyncio.get_running_loop().create_task(self._pump_audio())
        if not rejoined:
            for url in s.agents:
                await self.session.invite(url)

    async def detach(self) -> None:
        """The page went away: stop its session; the room waits for a rejoin."""
        if self._pump is not None:
            self._pump.cancel()
            self._pump = None
        if self.link is not None:
            await self.link.close()
            self.link = None
        if self.session is not None:
            await self.session.close()
            self.session = None
        if self.room is not None and self.room.client is self:
            self.room.client = None
            self.room.detached_at = time.monotonic()

    async def _handle(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        session = self.session
        assert session is not None
        if kind == "text":
            text = str(msg.get("text", ""))[:5000]
            self.gateway.metrics.utterances.labels("text").inc()
            await session.say_text(text)
        elif kind == "invite":
            url = str(msg.get("url", "")).strip()
            if len(url) > access.MAX_PATH:
                raise ValueError(f"the agent URL {clip_text(url)} is too long to invite")
            try:
                self.gateway.directory.resolve(url)  # refuses unknown schemes and policy at once
            except (ValueError, AgentError) as exc:  # quoted short: the URL may be huge
                raise ValueError(str(exc).replace(url, clip_text(url))) from None
            await session.invite(url)
        elif kind == "uninvite":
            await session.uninvite(str(msg.get("speakerUri", "")))
        elif kind == "mode" and msg.get("mode") in ("ptt", "handsfree"):
            session.mode = msg["mode"]
        elif kind == "ptt":
            session.set_ptt(bool(msg.get("down")))
        elif kind == "stop":
            session.stop_speaking()
        elif kind == "wake" and isinstance(msg.get("wake"), str):
            name = msg["wake"].strip()
            if name != "off" and name not in wake_words() and not name.startswith("phrase:"):
                raise ValueError(
                    f"unknown wake word {name!r}; choose one of {', '.join(wake_words())}, "
                    "phrase:TEXT or off"
                )
            session.set_wake(name)
        elif kind == "offer" and self.transport == "webrtc" and isinstance(msg.get("sdp"), str):
            if self.link is not None:
                await self.link.close()
            self.link = WebRTCLink(
                session.playout, session.feed, ice_servers=self.gateway.settings.ice_servers
            )
            await self.send({"type": "answer", "sdp": await self.link.answer(msg["sdp"])})
        elif kind == "ping":
            await self.send({"type": "pong"})
        else:
            await self.send({"type": "error", "message": f"unknown or misplaced message {kind!r}"})

    def _audio_in(self, data: bytes) -> None:
        if self.session is None or self.transport != "ws" or len(data) % 2:
            return
        self.session.feed(np.frombuffer(data, dtype="<i2"))

    async def _pump_audio(self) -> None:
        assert self.session is not None
        async for frame in self.session.playout:
            try:
                await self.ws.send(frame.astype("<i2").tobytes())
            except ConnectionClosed:
                return

    def _timing(self, timing: Timing) -> None:
        self.gateway.metrics.observe_timing(timing.as_ms())
        # The client learns where its turn's time went (scripts/load.py reports it per stage).
        # Its own clock differs: the stages are anchored to the moment this is sent.
        task = asyncio.get_running_loop().create_task(self._send_timing(timing))
        self._timing_tasks.add(task)
        task.add_done_callback(self._timing_tasks.discard)

    async def _send_timing(self, timing: Timing) -> None:
        ms: dict[str, Any] = timing.as_ms()
        stages = TurnStages(
            endpoint=ms["endpoint"],
            stt=ms["stt"],
            agent=ms["agent"],
            tts_first_audio=ms["ttsFirstAudio"],
            total=ms["total"],
            decode=ms["decode"],
            queued=ms["queued"],
            speculative=ms["speculative"],
            early_end=ms["earlyEnd"],
        )
        since = round(1000 * (time.monotonic() - timing.last_voiced), 1)
        await self.send(TurnTiming(stages_ms=stages, since_last_voiced_ms=since).to_dict())

    async def _event(self, event: dict[str, Any]) -> None:
        event = _bounded_html(event)
        room = self.room
        kind = event.get("type")
        if room is not None:
            if kind in _HISTORY_TYPES:
                room.history.append(event)
            elif kind == "floor":
                room.floor = event
        if kind == "transcript" and not event.get("typed"):
            self.gateway.metrics.utterances.labels("voice").inc()
        if kind == "notice" and event.get("reason") in ("@error", "@timedOut"):
            self.gateway.metrics.agent_errors.labels(event["reason"]).inc()
        await self.send(event)

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON message; a closed connection is not an error here, and a message that
        cannot be encoded costs that message (logged), never the connection."""
        try:
            text = json.dumps(message, ensure_ascii=False, allow_nan=False)
            text.encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            # ASCII escapes carry what UTF-8 cannot (a lone surrogate): JSON.parse takes them.
            log.warning("a %s message for the page needed escaping: %s", message.get("type"), exc)
            try:
                text = json.dumps(message, ensure_ascii=True, allow_nan=False, default=str)
            except (ValueError, TypeError, RecursionError):
                return
        with contextlib.suppress(ConnectionClosed):
            async with self._send_lock:
                await self.ws.send(text)


def _bounded_html(event: dict[str, Any]) -> dict[str, Any]:
    """An ``utterance`` UI event with its html left out when over the bounds (guard.py)."""
    html = event.get("html")
    if event.get("type") != "utterance" or not html:
        return event
    kept, why = bound_html(list(html))
    if why is None:
        return event
    log.info("html of %s not shown: %s", clip_text(str(event.get("speakerUri")), 100), why)
    return {**event, "html": kept, "htmlOmitted": why}


def _json(message: str | bytes) -> dict[str, Any] | None:
    """A client's JSON object, or None (not JSON, not an object, or nested too deep).

    Read through the parse boundary (:mod:`gateway.ofp.jsonio`): a lone surrogate
    (``"\\ud800"``, valid JSON but not valid Unicode) becomes U+FFFD, so nothing downstream (the
    records, agents, the page) fails to encode the person's text.
    """
    try:
        data = loads_external(message, source="the page")
    except (ValueError, TypeError, RecursionError):  # EnvelopeError is a ValueError
        return None
    return data if isinstance(data, dict) else None
