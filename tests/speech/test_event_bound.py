"""The speech server's reader (:func:`gateway.speech.server.read_event`): a Wyoming header may
name any length of data or payload, and the stock reader buffers all of it; this one refuses
more than ``MAX_EVENT_BYTES`` before reading any, and reads everything else as the stock one
does. Real bytes through a real ``StreamReader``; the whole server's answer (``error``
``too-large``) is in test_speech_server.py."""

from __future__ import annotations

import asyncio
import json

import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event

from gateway.errors import GatewayError
from gateway.speech.server import MAX_EVENT_BYTES, EventTooLarge, read_event


def _reader(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader(limit=1 << 20)
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def test_a_huge_payload_is_refused_before_it_is_read() -> None:
    reader = _reader(b'{"type": "audio-chunk", "payload_length": 10000000000}\n')
    with pytest.raises(EventTooLarge) as caught:
        await read_event(reader)
    assert isinstance(caught.value, GatewayError)
    assert str(MAX_EVENT_BYTES) in str(caught.value)


@pytest.mark.parametrize(
    "header",
    [
        b'{"type": "x", "data_length": 2000000}\n',
        b'{"type": "x", "payload_length": -5}\n',
        b'{"type": "x", "payload_length": "lots"}\n',
    ],
)
async def test_bad_lengths_are_refused(header: bytes) -> None:
    with pytest.raises(EventTooLarge):
        await read_event(_reader(header))


def _wire(event: Event) -> bytes:
    """An event as Wyoming puts it on the wire: header line, data, payload."""
    d = event.to_dict()
    data = json.dumps(d.pop("data")).encode()
    header = {**d, "data_length": len(data)}
    if event.payload:
        header["payload_length"] = len(event.payload)
    return json.dumps(header).encode() + b"\n" + data + (event.payload or b"")


async def test_events_within_the_bound_read_as_the_stock_reader_reads_them() -> None:
    chunk = AudioChunk(16000, 2, 1, bytes(MAX_EVENT_BYTES)).event()
    ping = Event(type="ping", data={"text": "é" * 10})
    reader = _reader(_wire(chunk) + _wire(ping))
    first = await read_event(reader)
    second = await read_event(reader)
    assert first is not None and first.type == "audio-chunk"
    assert len(first.payload or b"") == MAX_EVENT_BYTES and first.data["rate"] == 16000
    assert second is not None and second.data == {"text": "é" * 10}
    assert await read_event(reader) is None  # the end of the stream


async def test_garbage_ends_the_stream_as_the_stock_reader_does() -> None:
    assert await read_event(_reader(b"not json\n")) is None
    assert await read_event(_reader(b'["a list"]\n')) is None
