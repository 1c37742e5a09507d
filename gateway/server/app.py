"""``python -m gateway serve``: the page, the WebSocket and the voice sessions on one port.

One :class:`Gateway` per process holds what is shared — the models, the agent directory, the
records — and the open conversations (the registry of server/rooms.py), and runs the server's
life: it listens, loads the models, runs the background tasks (reaping rooms nobody came back
to, the loop-lag probe, the memory trimmer, the retention purge), admits or refuses each
WebSocket, and closes. The rest is by role: server/routes.py answers HTTP, server/connection.py
serves one page (:class:`~gateway.server.connection.PageConnection`), server/messages.py defines
what the page and the gateway say to each other (``docs/client-protocol.md`` explains it). Those
parts are handed the gateway as a :class:`~gateway.server.node.Node` and never import this module: the
imports of ``server/`` run downward only.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import socket
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers

from gateway.agents.directory import AgentDirectory
from gateway.floor.inbound import InboundDesk
from gateway.proxy.models import VoiceModels
from gateway.records.base import Recorder
from gateway.records.kept import KeptRecords
from gateway.server import access, records_watch
from gateway.server.clips import ClipShelf, VoiceRecords
from gateway.server.connection import PageConnection
from gateway.server.inbound import PREFIX as INBOUND_PREFIX
from gateway.server.inbound import InboundEndpoint
from gateway.server.memory import ALLOCATOR, MemoryTrimmer
from gateway.server.metrics import Metrics
from gateway.server.readiness import HANDOVER_CODE, HANDOVER_REASON
from gateway.server.rooms import RoomRegistry
from gateway.server.routes import HttpRoutes
from gateway.server.settings import GatewaySettings

log = logging.getLogger(__name__)

#: The loop-lag probe sleeps this long and records how late it woke.
LAG_PROBE_S = 0.05


class Gateway:
    """Shared state of one ``serve`` process."""

    def __init__(
        self,
        settings: GatewaySettings,
        *,
        models: VoiceModels,
        directory: AgentDirectory,
        recorder: Recorder | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self.models = models
        self.directory = directory
        #: The store, wrapped so that its failing costs no record (records/kept.py).
        self.recorder: KeptRecords | None = (
            KeptRecords(recorder, listener=lambda h: records_watch.tell_pages(self.clients, h))
            if recorder is not None
            else None
        )
        kept = self.recorder
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
            VoiceRecords(kept, keep_audio=settings.keep_audio, shelf=shelf)
            if kept is not None or shelf is not None
            else None
        )
        self.metrics = Metrics()
        self.metrics.memory.info({"allocator": ALLOCATOR})
        self.rooms = RoomRegistry(self)
        self.clients: set[PageConnection] = set()
        #: The time rooms are detached and reaped on (a parameter, so tests need not wait).
        self.clock = clock
        self.ready = False
        #: Refusing new sessions before leaving (server/readiness.py).
        self.draining = False
        self.node = settings.node or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
        #: Agents' inbound URLs (gateway/floor/inbound.py); its base is set once listening.
        self.inbound = InboundDesk("", node=self.node)
        self._inbound_endpoint = InboundEndpoint(self)
        self._server: Server | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._lag_probe: asyncio.Task[None] | None = None
        self._trimmer: asyncio.Task[None] | None = None
        self._purger: asyncio.Task[None] | None = None
        self._flusher: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> Server:
        """Listen, then load models. Returns the websockets server once the models are loaded.

        Listening first lets ``/readyz`` and ``/healthz`` say "loading models" meanwhile (a
        balancer then waits for this node); sessions are refused until then.
        """
        s = self.settings
        port = await self._inbound_endpoint.start(s.host, s.inbound_port)
        if s.inbound_url:
            self.inbound.base_url = s.inbound_url.rstrip("/") + INBOUND_PREFIX
        else:
            host = "127.0.0.1" if s.host in ("0.0.0.0", "::", "") else s.host
            self.inbound.base_url = f"http://{host}:{port}{INBOUND_PREFIX}"
        self._server = await serve(
            self._accept,
            s.host,
            s.port,
            process_request=HttpRoutes(self),
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
        if self.recorder is not None:
            self._flusher = loop.create_task(records_watch.keep_flushing(self.recorder))
        days = None if self.recorder is None else self.recorder.retention_days
        if self.recorder is not None and days:
            self._purger = loop.create_task(self._purge_expired(self.recorder, days))
        return self._server

    async def close(self, *, handover: bool = False) -> None:
        """Close every client and conversation, then the server. With ``handover`` (after a
        drain) the conversations are left open in the records for another node to take up."""
        for task in (self._reaper, self._lag_probe, self._trimmer, self._purger, self._flusher):
            if task is not None:
                task.cancel()
        for client in list(self.clients):
            if handover:
                await client.ws.close(HANDOVER_CODE, HANDOVER_REASON)
            else:
                await client.ws.close(1001, "gateway shutting down")
        if handover:  # left open in the records for another node: no bye, no end
            for room_id in list(self.rooms):
                await self.rooms.drop(room_id)
        # Together: each room's agents get their bye (bounded by Limits.bye_timeout_s) at once.
        await asyncio.gather(*(self.rooms.end(r, "closed") for r in list(self.rooms)))
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        await self._inbound_endpoint.close()
        await self.directory.aclose()

    async def _reap(self) -> None:
        """End, over and over, the rooms whose page has not come back within ``rejoin_s``."""
        while True:
            await asyncio.sleep(min(5.0, max(0.5, self.settings.rejoin_s / 2)))
            expired = self.rooms.expired(self.clock(), self.settings.rejoin_s)
            await asyncio.gather(*(self.rooms.end(r, "completed") for r in expired))

    async def _purge_expired(self, kept: KeptRecords, retention_days: float) -> None:
        """Apply the retention over and over: the recorder applies it only when it opens, and a
        server may run for months."""
        interval = min(self.settings.purge_every_s, retention_days * 86_400 / 10)
        while True:
            await asyncio.sleep(interval)
            try:
                purged = kept.purge_expired(datetime.now(UTC))
            except Exception:  # the task must not die: a failing store (or a bug) tries next time
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

    # ------------------------------------------------------------------ WebSocket
    async def _accept(self, ws: ServerConnection) -> None:
        """websockets' handler: admit the connection (or refuse it), then serve the page."""
        if ws.request is None or urlsplit(ws.request.path).path != "/ws":
            await ws.close(1008, "the WebSocket is at /ws")
            return
        refusal = self.refusal() or self._address_refusal(ws)
        if refusal is not None:
            self.metrics.refused.inc()
            await ws.close(1013, refusal)
            return
        client = PageConnection(self, ws)
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

    def refusal(self) -> str | None:
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
        headers = ws.request.headers if ws.request is not None else Headers()
        address = access.client_address(ws.remote_address, headers)
        if limit <= 0 or address is None:
            return None
        if sum(1 for c in self.clients if c.address == address) < limit:
            return None
        log.info("refused a session: %s already has %d", address, limit)
        return f"too many sessions from your address ({limit}); close one and try again"

    async def _trim_detached(self) -> None:
        over = self.rooms.beyond_limit(self.settings.max_detached)
        for room_id in over:
            await self.rooms.end(room_id, "completed")
