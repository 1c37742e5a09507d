"""One Wyoming speech service on the network: bounded connections, timeouts, backoff, health.

A :class:`ServiceLink` is the only way the gateway's remote speech parts (``speech.asr``,
``speech.tts``, ``speech.wake``) reach a server. It

- bounds the connections open at once (``max_connections``) and the requests waiting for one
  (``max_waiting``): beyond that a request is refused at once (:class:`ServiceBusy`) instead of
  queueing behind work whose answer would come too late;
- gives every request a deadline (``timeout_s``; connecting has ``connect_timeout_s``);
- marks the service **down** when it cannot be reached, stops mid-request (the stream just ends:
  Wyoming servers send no error event when they die), sends what is not Wyoming, or times out. While down, requests fail at
  once (:class:`SpeechServiceDown`), and one background probe (``describe``) tries again after
  ``backoff_s``, doubling up to ``max_backoff_s``; the first answer marks it up again.

``/readyz`` and ``/metrics`` read :attr:`ServiceLink.down` and the counters (see
``gateway.server.readiness``). Connections are not kept open between requests: the stock
``wyoming-faster-whisper`` takes one utterance per connection, and a loopback or LAN connect
costs well under a millisecond against a decode's hundreds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from urllib.parse import urlparse

from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import Describe, Info

from gateway.errors import Busy, ConfigError, SpeechError

log = logging.getLogger(__name__)

#: The schemes a speech service address may have (``tcp://`` is what Wyoming servers print).
SCHEMES = ("wyoming", "tcp")
#: Largest header line a server may send (its data and payload are read by length).
_LINE_LIMIT = 1 << 20


class SpeechServiceDown(SpeechError):
    """A speech service could not be reached, stopped answering mid-request, sent what is not
    Wyoming, or timed out; the message names it, and :attr:`service` alone ("the stt service at
    wyoming://…") says which to the person. The request can be tried again (the link
    reconnects by itself)."""

    def __init__(self, message: str, *, service: str = "") -> None:
        super().__init__(message)
        self.service = service


class ServiceBusy(Busy):
    """Every connection to a speech service is in use and ``max_waiting`` requests wait already."""


class BadServiceAddress(ConfigError):
    """A ``--stt``/``--tts``/``--wake-service`` address is not ``wyoming://host:port``."""


def parse_address(text: str) -> tuple[str, int]:
    """``(host, port)`` of ``wyoming://host:port`` or ``tcp://host:port``."""
    parsed = urlparse(text.strip())
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme not in SCHEMES or not parsed.hostname or port is None:
        raise BadServiceAddress(
            f"{text!r} is not a speech service address: give wyoming://HOST:PORT "
            "(e.g. wyoming://127.0.0.1:10300)"
        )
    return parsed.hostname, port


@dataclass(frozen=True)
class LinkSettings:
    """How one speech service is reached.

    Attributes:
        max_connections: requests in flight at once. A speech server decodes as many at once as
            it has workers; more connections only queue there, where nothing can refuse them.
        max_waiting: requests waiting for a connection; beyond that :class:`ServiceBusy`.
        timeout_s: the most one request may take, first byte to last.
        connect_timeout_s: the most connecting may take.
        backoff_s: the first wait before a down service is tried again (then doubled).
        max_backoff_s: the longest wait between tries.
        health_s: how often a service that is up is asked ``describe`` (see :meth:`ServiceLink.
            watch`), so ``/readyz`` knows it is gone before a person finds out.
    """

    max_connections: int = 4
    max_waiting: int = 16
    timeout_s: float = 15.0
    connect_timeout_s: float = 2.0
    backoff_s: float = 0.5
    max_backoff_s: float = 10.0
    health_s: float = 5.0
    #: How long a request whose connection broke (cut, the server gone, garbage, a timeout)
    #: waits for the service to answer a probe again before it is sent once more with the
    #: audio or text it still holds (:meth:`ServiceLink.wait_up`). The probes at 0.5, 1.5 and
    #: 3.5 s (the backoff doubling) fall inside it: a server restarted or a connection cut
    #: keeps the turn; one still down after it fails the request, and the person is told.
    retry_s: float = 5.0


class Connection:
    """One open connection: events in and out (timeouts are the request's, see
    :meth:`ServiceLink.connection`)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        self.reader = reader
        self.writer = writer
        self._on_close = on_close

    async def send(self, event: Event) -> None:
        """Write one event."""
        await async_write_event(event, self.writer)

    async def receive(self) -> Event | None:
        """The next event, or None when the server ended the stream."""
        return await async_read_event(self.reader)

    def close(self) -> None:
        """Close it (at once: nothing is flushed)."""
        self.writer.close()
        if self._on_close is not None:
            self._on_close()
            self._on_close = None


class ServiceLink:
    """A bounded, self-healing way to one Wyoming server (see the module docstring).

    ``kind`` names the service in messages, ``/readyz`` and ``/metrics`` (``stt``, ``tts``,
    ``wake``).
    """

    def __init__(self, kind: str, address: str, settings: LinkSettings | None = None) -> None:
        self.kind = kind
        self.address = address
        self.host, self.port = parse_address(address)
        self.settings = s = settings or LinkSettings()
        self._slots = asyncio.Semaphore(s.max_connections)
        self._waiting = 0
        self.in_flight = 0
        #: Why the service is down (None: up, or not yet tried).
        self.down_reason: str | None = None
        self.failures = 0  # requests failed because the service was down or broke
        self.refused = 0  # requests refused because every connection was in use
        self._backoff = s.backoff_s
        self._probe: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self.info: Info | None = None
        self._closed = False
        #: Set while the service is up (or not yet tried): what :meth:`wait_up` waits on.
        self._up = asyncio.Event()
        self._up.set()
        #: What the server's ``info`` says of itself beyond Wyoming's fields (our own server's
        #: ``ofp`` object; empty for a stock server).
        self.extras: dict[str, object] = {}

    @property
    def down(self) -> bool:
        """Whether the service is known to be unreachable right now."""
        return self.down_reason is not None

    def __repr__(self) -> str:
        return f"ServiceLink({self.kind}, {self.address})"

    @property
    def service(self) -> str:
        """The service in words, as the person is told it: "the stt service at wyoming://…"."""
        return f"the {self.kind} service at {self.address}"

    def down_error(self, message: str) -> SpeechServiceDown:
        """A :class:`SpeechServiceDown` naming this service."""
        return SpeechServiceDown(message, service=self.service)

    async def wait_up(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` s, default :attr:`LinkSettings.retry_s`) until the service
        answers again; whether it does."""
        if self.down_reason is None:
            return True
        wait = self.settings.retry_s if timeout is None else timeout
        try:
            await asyncio.wait_for(self._up.wait(), wait)
        except TimeoutError:
            return False
        return self.down_reason is None

    @contextlib.asynccontextmanager
    async def connection(self) -> AsyncIterator[Connection]:
        """A connection for one request, closed afterwards.

        Raises :class:`SpeechServiceDown` at once while the service is down, and when it cannot
        be reached; :class:`ServiceBusy` when ``max_waiting`` requests wait already. Errors of
        the request itself (a timeout, the stream ending early) should go through :meth:`broke`.
        """
        if self.down_reason is not None:
            self.failures += 1
            raise self.down_error(f"{self.service} is down ({self.down_reason})")
        # Counted before the first await: requests made in the same instant see each other.
        if (
            self._waiting + self.in_flight
            >= self.settings.max_connections + self.settings.max_waiting
        ):
            self.refused += 1
            raise ServiceBusy(
                f"the {self.kind} service at {self.address} has {self.in_flight} requests "
                f"in flight and {self._waiting} waiting"
            )
        self._waiting += 1
        try:
            await asyncio.wait_for(self._slots.acquire(), self.settings.timeout_s)
        except TimeoutError:
            self.refused += 1
            raise ServiceBusy(
                f"no connection to the {self.kind} service at {self.address} came free "
                f"within {self.settings.timeout_s:g} s"
            ) from None
        finally:
            self._waiting -= 1
        self.in_flight += 1
        conn: Connection | None = None
        try:
            conn = await self._open()
            yield conn
        finally:
            self.in_flight -= 1
            self._slots.release()
            if conn is not None:
                conn.close()

    async def open_stream(self) -> Connection:
        """A long-lived connection (a wake word stream), counted against ``max_connections``
        until it is closed; raises :class:`ServiceBusy` when none is free (it does not wait)
        and :class:`SpeechServiceDown` while the service is down."""
        if self.down_reason is not None:
            raise self.down_error(f"{self.service} is down ({self.down_reason})")
        if self.in_flight >= self.settings.max_connections:
            self.refused += 1
            raise ServiceBusy(f"all {self.in_flight} connections to {self.address} are in use")
        self.in_flight += 1
        try:
            conn = await self._open()
        except BaseException:
            self.in_flight -= 1
            raise

        def release() -> None:
            self.in_flight -= 1

        conn._on_close = release
        return conn

    async def _open(self) -> Connection:
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=_LINE_LIMIT),
                self.settings.connect_timeout_s,
            )
        except (OSError, TimeoutError) as exc:
            raise self.broke(f"cannot connect: {exc or 'timed out'}") from None
        return Connection(reader, writer)

    def broke(self, reason: str) -> SpeechServiceDown:
        """Mark the service down (a probe tries it again after the backoff) and return the
        error to raise."""
        self.failures += 1
        if self.down_reason is None:
            log.warning("%s service at %s is down: %s", self.kind, self.address, reason)
        self.down_reason = reason
        self._up.clear()
        if self._probe is None or self._probe.done():
            self._probe = asyncio.get_running_loop().create_task(
                self._recover(), name=f"speech-probe-{self.kind}"
            )
        return self.down_error(f"{self.service} failed: {reason}")

    def worked(self) -> None:
        """A request went through: the service is up."""
        if self.down_reason is not None:
            log.warning("%s service at %s is back", self.kind, self.address)
        self.down_reason = None
        self._up.set()
        self._backoff = self.settings.backoff_s

    async def describe(self) -> Info:
        """Ask the server what it serves (``describe`` → ``info``); marks it up or down."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port, limit=_LINE_LIMIT),
                self.settings.connect_timeout_s,
            )
        except (OSError, TimeoutError) as exc:
            raise self.broke(f"cannot connect: {exc or 'timed out'}") from None
        try:
            await async_write_event(Describe().event(), writer)
            deadline = time.monotonic() + self.settings.timeout_s
            while True:
                left = deadline - time.monotonic()
                event = await asyncio.wait_for(async_read_event(reader), max(0.01, left))
                if event is None:
                    raise self.broke("it closed the connection before describing itself")
                if Info.is_type(event.type):
                    self.info = Info.from_event(event)
                    self.extras = dict(event.data.get("ofp") or {})
                    self.worked()
                    return self.info
        except TimeoutError:
            raise self.broke("no answer to describe") from None
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise self.broke(f"connection failed: {exc}") from None
        except NOT_WYOMING as exc:
            raise self.broke(not_wyoming(exc)) from None
        finally:
            writer.close()

    def watch(self) -> None:
        """Ask the service ``describe`` every ``health_s`` while it is up (started once, by
        the models' warm-up): a server that died between requests is known down at once."""
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(
                self._health(), name=f"speech-health-{self.kind}"
            )

    async def _health(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.settings.health_s)
            if self.down_reason is None:
                with contextlib.suppress(SpeechServiceDown):
                    await self.describe()

    async def _recover(self) -> None:
        """Probe the down service with growing waits until it answers."""
        # Checked each round, not only cancelled: Python 3.11's wait_for can turn a
        # cancellation that lands during its own timeout into TimeoutError, which a probe takes
        # for "no answer" and would go on probing after close().
        while self.down_reason is not None and not self._closed:
            await asyncio.sleep(self._backoff)
            self._backoff = min(self._backoff * 2, self.settings.max_backoff_s)
            with contextlib.suppress(SpeechServiceDown):
                await self.describe()

    async def close(self) -> None:
        """Stop probing."""
        self._closed = True
        for task in (self._probe, self._watch):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


#: What reading an event raises on bytes that are not Wyoming: a header that is not JSON (or
#: not an object), a line over the limit, a length that is not a number, text that is not UTF-8.
NOT_WYOMING = (ValueError, TypeError, KeyError, AttributeError, asyncio.LimitOverrunError)


def not_wyoming(exc: BaseException) -> str:
    """Why a stream is given up on that sent ``exc``-raising bytes (no traceback: one line)."""
    return f"it sent something that is not Wyoming ({type(exc).__name__}: {str(exc)[:80]})"


async def read_until(
    link: ServiceLink, conn: Connection, wanted: tuple[str, ...], *, deadline: float
) -> tuple[Event, list[Event]]:
    """Events from ``conn`` until one of the ``wanted`` types; returns it and those before it.

    An ``error`` event raises :class:`SpeechError` (``ServiceBusy`` for code ``busy``); the
    stream ending first, or the deadline passing, marks the service down
    (:meth:`ServiceLink.broke`) and raises :class:`SpeechServiceDown`.
    """
    before: list[Event] = []
    while True:
        left = deadline - time.monotonic()
        try:
            event = await asyncio.wait_for(conn.receive(), max(0.001, left))
        except TimeoutError:
            raise link.broke(
                f"no {' or '.join(wanted)} within {link.settings.timeout_s:g} s"
            ) from None
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise link.broke(f"connection failed mid-request: {exc}") from None
        except NOT_WYOMING as exc:
            raise link.broke(not_wyoming(exc)) from None
        if event is None:
            raise link.broke(f"the stream ended before {' or '.join(wanted)}")
        if event.type == "error":
            text = str(event.data.get("text", "error"))
            link.worked()  # it answered: up, just unwilling
            if event.data.get("code") == "busy":
                raise ServiceBusy(f"{link.service} is busy: {text}")
            raise SpeechError(f"{link.service} said: {text}")
        if event.type in wanted:
            return event, before
        before.append(event)
