"""The speech server's read-ahead bound (docs/bounds.md, ``_Connection._stash``): what a client
sends while one job runs is kept up to ``MAX_STASH_EVENTS`` events or ``MAX_STASH_BYTES``;
past that the server stops reading the connection (TCP pushes back on the client) and, when
the job ends, takes every event in order — nothing dropped.

The job here is a stand-in that ends when the test says (a decode cannot be held open on
demand); the connection is a real loopback socket and the events real Wyoming events."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event, async_write_event

from gateway.speech.server import MAX_STASH_BYTES, MAX_STASH_EVENTS, _Connection


@pytest.fixture
async def pair() -> AsyncIterator[tuple[_Connection, asyncio.StreamWriter]]:
    """A server-side connection and the client's writer, on loopback."""
    accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
        asyncio.get_running_loop().create_future()
    )

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.set_result((reader, writer))

    server = await asyncio.start_server(accept, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    _, client = await asyncio.open_connection("127.0.0.1", port)
    reader, writer = await asyncio.wait_for(accepted, 10)
    connection = _Connection(SimpleNamespace(cancelled=0), reader, writer)  # type: ignore[arg-type]
    yield connection, client
    client.close()
    writer.close()
    server.close()


async def _until(check: object, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():  # type: ignore[operator]
        assert time.monotonic() < deadline, "not reached in time"
        await asyncio.sleep(0.02)


async def test_events_past_the_count_bound_wait_in_the_socket_not_in_memory(
    pair: tuple[_Connection, asyncio.StreamWriter],
) -> None:
    connection, client = pair
    release = asyncio.Event()
    job = asyncio.ensure_future(connection._guarded(release.wait()))
    sent = MAX_STASH_EVENTS + 500

    async def flood() -> None:
        for i in range(sent):
            await async_write_event(Event(type="ping", data={"n": i}), client)

    writing = asyncio.ensure_future(flood())
    await _until(lambda: len(connection._stash) >= MAX_STASH_EVENTS)
    await asyncio.sleep(0.3)  # more has arrived on the socket by now; none of it is read
    assert len(connection._stash) == MAX_STASH_EVENTS
    assert not job.done()
    release.set()
    assert await asyncio.wait_for(job, 10) is True
    await asyncio.wait_for(writing, 20)
    got = [await asyncio.wait_for(connection._next(), 10) for _ in range(sent)]
    assert [e.data["n"] for e in got if e is not None] == list(range(sent))
    assert connection._stash_bytes == 0


async def test_events_past_the_byte_bound_wait_too(
    pair: tuple[_Connection, asyncio.StreamWriter],
) -> None:
    connection, client = pair
    release = asyncio.Event()
    job = asyncio.ensure_future(connection._guarded(release.wait()))
    chunk = bytes(1 << 20)  # 1 MB of audio per event: the byte bound comes first
    sent = MAX_STASH_BYTES // len(chunk) + 3

    async def flood() -> None:
        for _ in range(sent):
            await async_write_event(AudioChunk(16000, 2, 1, chunk).event(), client)

    writing = asyncio.ensure_future(flood())
    await _until(lambda: connection._stash_bytes >= MAX_STASH_BYTES)
    await asyncio.sleep(0.3)
    assert len(connection._stash) == MAX_STASH_BYTES // len(chunk)
    release.set()
    await asyncio.wait_for(job, 10)
    await asyncio.wait_for(writing, 20)
    got = [await asyncio.wait_for(connection._next(), 10) for _ in range(sent)]
    assert all(e is not None and len(e.payload or b"") == len(chunk) for e in got)


async def test_a_client_gone_behind_a_full_stash_is_seen_after_its_events(
    pair: tuple[_Connection, asyncio.StreamWriter],
) -> None:
    """At the bound the connection is not watched; the close is read after the events."""
    connection, client = pair
    release = asyncio.Event()
    job = asyncio.ensure_future(connection._guarded(release.wait()))
    for i in range(MAX_STASH_EVENTS + 10):
        await async_write_event(Event(type="ping", data={"n": i}), client)
    client.close()
    await _until(lambda: len(connection._stash) >= MAX_STASH_EVENTS)
    release.set()
    await asyncio.wait_for(job, 10)
    for i in range(MAX_STASH_EVENTS + 10):
        event = await asyncio.wait_for(connection._next(), 10)
        assert event is not None and event.data["n"] == i
    assert await asyncio.wait_for(connection._next(), 10) is None
