"""One page on the WebSocket: its hello, its voice session, its messages both ways.

A :class:`PageConnection` reads the ``hello``, attaches a :class:`~gateway.proxy.session.VoiceSession` to
a room (a new conversation, or the one the page rejoins: server/rooms.py), then reads the page's
messages (gateway/server/messages.py) and dispatches them by type, and sends the session's. One bad
request costs an ``error`` message, never the connection. Audio comes in as binary frames or over
WebRTC (server/webrtc.py); on a ``ws`` connection the session's playout goes back as binary frames.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed

from gateway.agents.errors import AgentError
from gateway.audio import SAMPLE_RATE
from gateway.catalogue import wake_words
from gateway.ofp.timestamps import zone_named
from gateway.proxy.events import ProxyEvent
from gateway.proxy.session import VoiceSession
from gateway.proxy.timing import Timing
from gateway.server import access, records_watch
from gateway.server.guard import bound_html, clip_text
from gateway.server.message_codec import Message, ProtocolError, read_json
from gateway.server.messages import (
    TO_GATEWAY,
    Address,
    AgentUtterance,
    AudioRates,
    Discover,
    FinalTranscript,
    FromGateway,
    Hello,
    Invite,
    PageNotice,
    Ping,
    Pong,
    PushToTalk,
    RequestError,
    SayText,
    SdpAnswer,
    SdpOffer,
    SetMode,
    SetWake,
    StopSpeaking,
    TurnStages,
    TurnTiming,
    Uninvite,
    Welcome,
    WelcomeUser,
)
from gateway.server.page_events import manifests, page_message
from gateway.server.webrtc import WEBRTC_RATE, WebRTCLink
from gateway.voice.wake import PHRASE_PREFIX, WAKE_OFF, known_wake

if TYPE_CHECKING:
    from gateway.server.node import Node
    from gateway.server.rooms import Room


#: What a person is told when their conversation was taken up by another node.
TAKEN_UP = (
    "The server this conversation was on stopped, and another took it up from the records: "
    "it goes on. If something you just said got no answer, please say it again."
)
log = logging.getLogger(__name__)

WS_PCM_OUT_RATE = 24_000
#: How far ahead of real time agent audio goes out to a WebSocket client (dropped on barge-in).
WS_LEAD_MS = 250
#: Longest typed utterance taken from the page (characters).
MAX_TEXT_CHARS = 5000


class PageConnection:
    """One page (or other client) on the WebSocket."""

    def __init__(self, gateway: Node, ws: ServerConnection) -> None:
        self.gateway = gateway
        self.ws = ws
        self.room: Room | None = None
        self.room_id = ""
        self.session: VoiceSession | None = None
        self.link: WebRTCLink | None = None
        self.transport = "none"
        #: The visitor's address for the per-address limit (None: this machine's own client).
        headers = ws.request.headers if ws.request is not None else Headers()
        self.address: str | None = access.client_address(ws.remote_address, headers)
        self._pump: asyncio.Task[None] | None = None
        self._send_lock = asyncio.Lock()
        self._timing_tasks: set[asyncio.Task[None]] = set()

    async def run(self) -> None:
        """Serve the page until its WebSocket closes."""
        try:
            first = await asyncio.wait_for(self.ws.recv(), self.gateway.settings.hello_timeout_s)
        except (TimeoutError, ConnectionClosed):
            with contextlib.suppress(ConnectionClosed):
                await self.ws.close(1008, "send a hello message first")
            return
        try:
            hello = Hello.from_json(first)
        except ProtocolError:
            await self.ws.close(1008, 'the first message must be {"type": "hello", ...}')
            return
        await self._attach(hello)
        try:
            async for frame in self.ws:
                if isinstance(frame, bytes):
                    self._audio_in(frame)
                    continue
                try:
                    message = read_json(frame, TO_GATEWAY)
                except ProtocolError as exc:  # not JSON, not ours, or fields that do not fit
                    await self.send(RequestError(str(exc)))
                    continue
                try:
                    await self._handle(message)
                except (ValueError, LookupError, AgentError) as exc:  # the request was wrong
                    log.info("refused a client request: %s", clip_text(str(exc), 300))
                    await self.send(RequestError(clip_text(str(exc), 1000)))
                except Exception as exc:  # a bug in one request must not end the session
                    log.exception("client request failed: %s", message.TYPE)
                    await self.send(RequestError(clip_text(str(exc), 1000)))
        except ConnectionClosed:
            pass

    async def _attach(self, hello: Hello) -> None:
        gw = self.gateway
        s = gw.settings
        room = await gw.rooms.find_or_resume(hello.conversation_id, hello.token)
        rejoined = room is not None
        if room is None:
            self.room_id, room = await gw.rooms.open()
        else:
            self.room_id = room.conversation.id
            if room.connection is not None and room.connection is not self:
                old = room.connection
                await old.detach()
                with contextlib.suppress(ConnectionClosed):  # that page is gone already
                    await old.ws.close(4000, "this conversation was opened in another page")
        self.room = room
        room.attach(self)
        self.transport = hello.transport
        out_rate = WEBRTC_RATE if self.transport == "webrtc" else WS_PCM_OUT_RATE
        wake = hello.wake if hello.wake is not None else s.wake
        if not known_wake(wake):
            wake = s.wake  # an unknown choice from the page falls back to the server's
        settings = replace(
            s.session,
            out_rate=out_rate,
            fill_silence=self.transport == "webrtc",
            # The page's WebSocket player keeps its own buffer: a lead rides over jitter.
            playout_lead_ms=WS_LEAD_MS if self.transport == "ws" else 0,
            wake=wake,
        )
        self.session = VoiceSession(
            room.conversation,
            gw.models,
            on_event=self._event,
            fetch=gw.directory.client.fetch,
            settings=settings,
            recorder=gw.voice_records,
            audio_url=lambda event_id: gw.signer.url(s.base_url, self.room_id, event_id),
            on_timing=self._timing,
        )
        # A page without audio gets the replies as text: synthesizing them would cost the shared
        # synthesizer (and every other person's first audio) for sound nobody hears.
        self.session.speak_replies = self.transport != "none"
        if hello.mode is not None:
            self.session.mode = hello.mode
        self.session.time_zone = zone_named(hello.time_zone)
        await self.send(
            Welcome(
                conversation_id=self.room_id,
                token=room.token,
                rejoined=rejoined,
                user=WelcomeUser(room.conversation.user.speaker_uri, "You"),
                audio=AudioRates(SAMPLE_RATE, out_rate),
                history=tuple(room.history),
                builtins=tuple(sorted(gw.directory.builtins)),
                wake=self.session.wake_name,
                wake_words=tuple(wake_words()),
                # Stated on the page: whether the person's voice is stored (serve --keep-audio).
                keep_audio=s.keep_audio and gw.recorder is not None,
            )
        )
        await records_watch.tell_newcomer(gw, self)
        if room.taken_up:  # the node this conversation was on stopped: say so, in words, once
            room.taken_up = False
            await self.send(PageNotice(TAKEN_UP, "@moved"))
        if room.floor is not None:
            await self.send(room.floor)
        elif rejoined:
            room.conversation.show_floor()  # taken up from the records
        if self.transport == "ws":
            self._pump = asyncio.get_running_loop().create_task(self._pump_audio())
        if not rejoined:
            await self.session.open_with(s.agents)
            if s.convener:
                await room.conversation.appoint_convener(self._invitable(s.convener))

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
        if self.room is not None:
            self.room.detach(self, self.gateway.clock())

    async def _handle(self, message: Message) -> None:
        """Do what the page asked (dispatched by the message's type)."""
        session = self.session
        assert session is not None
        match message:
            case SayText(text=text):
                self.gateway.metrics.utterances.labels("text").inc()
                await session.say_text(
                    text[:MAX_TEXT_CHARS], to=message.to, private=bool(message.private)
                )
            case Address():
                session.set_address(message.to, private=message.private, sticky=message.sticky)
            case Invite():
                await session.invite(self._invitable(message.url.strip()))
            case Discover():
                await self.send(
                    manifests(await session.discover(self._invitable(message.url.strip())))
                )
            case Uninvite(speaker_uri=speaker_uri):
                await session.uninvite(speaker_uri)
            case SetMode(mode=mode):
                session.mode = mode
            case PushToTalk(down=down):
                session.set_ptt(down)
            case StopSpeaking():
                session.stop_speaking()
            case SetWake():
                name = message.wake.strip()
                if not known_wake(name):
                    raise ValueError(
                        f"unknown wake word {name!r}; choose one of {', '.join(wake_words())}, "
                        f"{PHRASE_PREFIX}TEXT or {WAKE_OFF}"
                    )
                session.set_wake(name)
            case SdpOffer(sdp=sdp) if self.transport == "webrtc":
                if self.link is not None:
                    await self.link.close()
                self.link = WebRTCLink(
                    session.playout, session.feed, ice_servers=self.gateway.settings.ice_servers
                )
                await self.send(SdpAnswer(await self.link.answer(sdp)))
            case Ping():
                await self.send(Pong())
            case _:  # a hello again, an offer without WebRTC
                await self.send(RequestError(f"unknown or misplaced message {message.TYPE!r}"))

    def _invitable(self, url: str) -> str:
        """``url``, if the gateway may invite it; else ValueError quoting it short."""
        if len(url) > access.MAX_PATH:
            raise ValueError(f"the agent URL {clip_text(url)} is too long to invite")
        try:
            self.gateway.directory.resolve(url)  # refuses unknown schemes and policy at once
        except (ValueError, AgentError) as exc:  # quoted short: the URL may be huge
            raise ValueError(str(exc).replace(url, clip_text(url))) from None
        return url

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
        stages = TurnStages.from_ms(timing.as_ms())
        since = round(1000 * (time.monotonic() - timing.last_voiced), 1)
        await self.send(TurnTiming(stages_ms=stages, since_last_voiced_ms=since))

    async def _event(self, proxy_event: ProxyEvent) -> None:
        event = _bounded_html(page_message(proxy_event))
        if self.room is not None:
            self.room.remember(event)
        if isinstance(event, FinalTranscript) and not event.typed:
            self.gateway.metrics.utterances.labels("voice").inc()
        if isinstance(event, PageNotice) and event.reason in ("@error", "@timedOut"):
            self.gateway.metrics.agent_errors.labels(event.reason).inc()
        await self.send(event)

    async def send(self, message: Message) -> None:
        """Send one message; a closed connection is not an error here, and a message that
        cannot be encoded costs that message (logged), never the connection."""
        try:
            text = message.to_json()
        except (ValueError, TypeError, RecursionError) as exc:
            log.warning("a %s message for the page could not be encoded: %s", message.TYPE, exc)
            return
        with contextlib.suppress(ConnectionClosed):
            async with self._send_lock:
                await self.ws.send(text)


def _bounded_html(event: FromGateway) -> FromGateway:
    """An ``utterance`` with its html left out when over the bounds (guard.py)."""
    if not isinstance(event, AgentUtterance) or not event.html:
        return event
    kept, why = bound_html(list(event.html))
    if why is None:
        return event
    log.info("html of %s not shown: %s", clip_text(str(event.speaker_uri), 100), why)
    return replace(event, html=tuple(kept), html_omitted=why)
