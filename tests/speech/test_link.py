"""The Wyoming client's failure paths, against small Wyoming servers written here (a real
server cannot be made to end a stream on cue, or to hold a request until told): a stream that
ends before the transcript or audio-stop, a service that is down and comes back, a flood of
requests against the connection bound. No model is loaded."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import numpy as np
import pytest
from wyoming.event import Event, async_read_event, async_write_event

from gateway.errors import ConfigError
from gateway.render.tts import SynthesizerBusy, VoiceSettings
from gateway.speech.asr import RemoteTranscriber, transcript_from_event
from gateway.speech.link import LinkSettings, ServiceLink, SpeechServiceDown, parse_address
from gateway.speech.server import partial_event
from gateway.speech.tts import RemoteSynthesizer
from gateway.voice.stt import Partial, TranscriberBusy

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
CLIP = np.zeros(16_000, dtype=np.int16)
FAST = LinkSettings(
    timeout_s=5, connect_timeout_s=1, backoff_s=0.05, max_backoff_s=0.2, retry_s=0.5
)


async def until(event: str, reader: asyncio.StreamReader) -> bool:
    """Read until an event of type ``event``; False if the stream ended first."""
    while True:
        got = await async_read_event(reader)
        if got is None:
            return False
        if got.type == "describe":
            return event == "describe"
        if got.type == event:
            return True


@contextlib.asynccontextmanager
async def wyoming(handler: Handler, port: int = 0) -> AsyncIterator[int]:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()


async def answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """A server that answers describe, transcripts and synthesis (text only, like stock)."""
    while (event := await async_read_event(reader)) is not None:
        if event.type == "describe":
            await async_write_event(Event("info", {"asr": [], "tts": []}), writer)
        elif event.type == "audio-stop":
            await async_write_event(Event("transcript", {"text": "hello there"}), writer)
        elif event.type == "synthesize":
            await async_write_event(
                Event("audio-start", {"rate": 22050, "width": 2, "channels": 1}), writer
            )
            chunk = np.full(2048, 1000, np.int16).tobytes()
            await async_write_event(
                Event("audio-chunk", {"rate": 22050, "width": 2, "channels": 1}, chunk), writer
            )
            await async_write_event(Event("audio-stop"), writer)


async def dies_mid_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Reads the request and ends the stream: what a crashed server looks like."""
    await until("audio-stop", reader)


def test_addresses_are_checked() -> None:
    assert parse_address("wyoming://10.0.0.5:10300") == ("10.0.0.5", 10300)
    assert parse_address("tcp://speech.lan:10300") == ("speech.lan", 10300)
    for bad in ("http://x:1", "wyoming://x", "x:10300", "wyoming://:10300"):
        with pytest.raises(ConfigError, match="wyoming://HOST:PORT"):
            parse_address(bad)


async def test_a_stream_that_ends_before_the_transcript_is_a_clean_failure() -> None:
    async with wyoming(dies_mid_request) as port:
        link = ServiceLink("stt", f"wyoming://127.0.0.1:{port}", FAST)
        stt = RemoteTranscriber(link)
        with pytest.raises(SpeechServiceDown, match="stream ended before transcript"):
            await asyncio.wait_for(stt.transcribe(CLIP), 10)
        # Sent once more only if a probe found it answering within retry_s: these fake servers
        # never describe themselves, so it stays down (the probe's reason is the latest).
        assert link.down and "describing itself" in (link.down_reason or "")
        # While down, the next request fails at once instead of waiting on a dead server.
        with pytest.raises(SpeechServiceDown, match="is down"):
            await asyncio.wait_for(stt.transcribe(CLIP), 1)
        await link.close()


async def test_synthesis_that_ends_before_audio_stop_is_a_clean_failure() -> None:
    async def dies_after_audio_start(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await until("synthesize", reader)
        await async_write_event(
            Event("audio-start", {"rate": 22050, "width": 2, "channels": 1}), writer
        )

    async with wyoming(dies_after_audio_start) as port:
        link = ServiceLink("tts", f"wyoming://127.0.0.1:{port}", FAST)
        tts = RemoteSynthesizer(link)
        with pytest.raises(SpeechServiceDown, match="audio-chunk or audio-stop"):
            async for _ in tts.stream("Hello there.", VoiceSettings(), rate=22050):
                pass
        assert link.down
        await link.close()


async def test_a_down_service_is_found_again_with_backoff() -> None:
    """Nothing listens: down at once; a server appears on the port: the probe finds it and the
    next request goes through."""
    async with wyoming(answers) as port:
        pass  # a free port, now closed
    link = ServiceLink("stt", f"wyoming://127.0.0.1:{port}", FAST)
    stt = RemoteTranscriber(link)
    with pytest.raises(SpeechServiceDown, match="cannot connect"):
        await stt.transcribe(CLIP)
    assert link.down
    async with wyoming(answers, port):
        for _ in range(100):
            if not link.down:
                break
            await asyncio.sleep(0.05)
        assert not link.down
        transcript = await stt.transcribe(CLIP)
    assert transcript.text == "hello there"
    assert not transcript.detailed and transcript.words == ()  # a text-only server
    await link.close()


async def test_a_timeout_is_a_clean_failure() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await until("audio-stop", reader)
        await asyncio.sleep(30)

    async with wyoming(silent) as port:
        settings = LinkSettings(timeout_s=0.5, retry_s=0.5)
        link = ServiceLink("stt", f"wyoming://127.0.0.1:{port}", settings)
        with pytest.raises(SpeechServiceDown, match="no transcript within"):
            await asyncio.wait_for(RemoteTranscriber(link).transcribe(CLIP), 5)
        await link.close()


async def test_a_flood_is_held_to_the_bound() -> None:
    """20 requests at once, 2 connections and 3 waiting allowed: 15 are refused at once
    (TranscriberBusy), the server never holds more than 2, and the 5 admitted all finish."""
    release = asyncio.Event()
    open_now = 0
    most = 0

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal open_now, most
        open_now += 1
        most = max(most, open_now)
        try:
            if await until("audio-stop", reader):
                await release.wait()
                await async_write_event(Event("transcript", {"text": "ok"}), writer)
        finally:
            open_now -= 1

    async with wyoming(held) as port:
        bound = LinkSettings(max_connections=2, max_waiting=3, timeout_s=10)
        stt = RemoteTranscriber(ServiceLink("stt", f"wyoming://127.0.0.1:{port}", bound))
        tasks = [asyncio.ensure_future(stt.transcribe(CLIP)) for _ in range(20)]
        await asyncio.sleep(0.3)
        refused = [t for t in tasks if t.done()]
        assert len(refused) == 15
        assert all(isinstance(t.exception(), TranscriberBusy) for t in refused)
        assert most == 2 and stt.pending == 2
        release.set()
        done = await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 10)
        texts = [d.text for d in done if not isinstance(d, BaseException)]
        assert texts == ["ok"] * 5 and most == 2
        assert stt.link.refused == 15


async def test_synthesis_flood_is_refused_as_busy() -> None:
    release = asyncio.Event()

    async def held(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if await until("synthesize", reader):
            await release.wait()

    async with wyoming(held) as port:
        bound = LinkSettings(max_connections=1, max_waiting=0, timeout_s=10)
        tts = RemoteSynthesizer(ServiceLink("tts", f"wyoming://127.0.0.1:{port}", bound))

        async def say() -> None:
            async for _ in tts.stream("Hi.", VoiceSettings(), rate=22050):
                pass

        first = asyncio.ensure_future(say())
        await asyncio.sleep(0.2)
        with pytest.raises(SynthesizerBusy):
            await say()
        first.cancel()


async def test_a_caller_that_stops_waiting_closes_the_connection() -> None:
    """A speculative decode overtaken by speech: cancelling it closes its connection (so the
    project's server abandons the decode) and counts it."""
    closed = asyncio.Event()

    async def watch(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await until("audio-stop", reader)
        if await async_read_event(reader) is None:
            closed.set()

    async with wyoming(watch) as port:
        stt = RemoteTranscriber(ServiceLink("stt", f"wyoming://127.0.0.1:{port}", FAST))
        task = asyncio.ensure_future(stt.transcribe(CLIP))
        await asyncio.sleep(0.2)
        task.cancel()
        await asyncio.wait_for(closed.wait(), 5)
        assert stt.abandoned == 1 and stt.pending == 0 and not stt.link.down


async def test_remote_synthesis_streams_at_the_asked_rate() -> None:
    async with wyoming(answers) as port:
        tts = RemoteSynthesizer(ServiceLink("tts", f"wyoming://127.0.0.1:{port}", FAST))
        chunks = [c async for c in tts.stream("Hello.", VoiceSettings(), rate=16_000)]
    audio = np.concatenate(chunks)
    assert abs(len(audio) - 2048 * 16_000 / 22_050) < 200
    # A stock voice peaks at full scale; it is brought to the in-process headroom.
    assert 400 < np.abs(audio[100:-100]).max() <= 600


async def test_a_reply_paced_by_its_listener_outlasts_the_request_timeout() -> None:
    """A reply is read as its audio plays: a stream longer than ``timeout_s`` is fine as long
    as each chunk comes in time."""

    async def sentences(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await until("synthesize", reader)
        fmt = {"rate": 22050, "width": 2, "channels": 1}
        await async_write_event(Event("audio-start", fmt), writer)
        for _ in range(6):
            await async_write_event(
                Event("audio-chunk", fmt, np.zeros(2048, np.int16).tobytes()), writer
            )
        await async_write_event(Event("audio-stop"), writer)

    async with wyoming(sentences) as port:
        link = ServiceLink("tts", f"wyoming://127.0.0.1:{port}", LinkSettings(timeout_s=0.5))
        chunks = 0
        async for _ in RemoteSynthesizer(link).stream("Hi.", VoiceSettings(), rate=22050):
            chunks += 1
            await asyncio.sleep(0.2)  # the listener's playout: 1.2 s in all
        assert chunks >= 6 and not link.down


async def test_wake_detections_are_de_duplicated() -> None:
    """A server that reports the same phrase twice 300 ms apart (a stock detector firing on
    consecutive chunks) and once more 3 s later: the session hears two wake-ups, each placed
    in its own stream's samples."""
    from gateway.speech.services import WAKE_LINK
    from gateway.speech.wake import RemoteWakeListener

    async def detector(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await until("audio-start", reader)
        while (event := await async_read_event(reader)) is not None:
            stamp = event.data.get("timestamp")
            if event.type == "audio-chunk" and stamp in (1000, 1300, 4300):
                await async_write_event(
                    Event("detection", {"name": "alexa", "timestamp": stamp}), writer
                )

    async with wyoming(detector) as port:
        link = ServiceLink("wake", f"wyoming://127.0.0.1:{port}", WAKE_LINK)
        wake = RemoteWakeListener(link, "alexa")
        heard = []
        frame = np.zeros(320, np.int16)  # 20 ms
        for _ in range(300):  # 6 s
            heard += await wake.listen(frame)
            await asyncio.sleep(0.002)
        await asyncio.sleep(0.2)
        heard += await wake.listen(frame)
        wake.close()
    assert [d.detected_at for d in heard] == [16_000, 68_800]
    assert all(d.model == "alexa" and d.end < d.detected_at for d in heard)


async def test_a_partials_prompt_goes_with_its_request() -> None:
    """The overlap's decodes name backchannels in Whisper's prompt (``OverlapSettings.prompt``):
    over Wyoming the prompt travels in the request's ``ofp`` beside ``partial``, as a final
    transcript's does; without one, none is sent."""
    asked: list[dict[str, object]] = []

    async def offers_partials(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (event := await async_read_event(reader)) is not None:
            if event.type == "describe":
                info = {"asr": [], "tts": [], "ofp": {"partials": True}}
                await async_write_event(Event("info", info), writer)
            elif event.type == "transcribe":
                asked.append(dict(event.data.get("ofp") or {}))
            elif event.type == "audio-stop":
                await async_write_event(Event("transcript", {"text": "mm-hmm"}), writer)

    async with wyoming(offers_partials) as port:
        link = ServiceLink("stt", f"wyoming://127.0.0.1:{port}", FAST)
        await link.describe()
        stt = RemoteTranscriber(link)
        # Text only (no ``ofp`` in the transcript): no log probability to give.
        assert await stt.transcribe_partial(CLIP, prompt="Mm-hmm. Uh-huh.") == Partial(
            "mm-hmm", None
        )
        assert await stt.transcribe_partial(CLIP) == Partial("mm-hmm", None)
        assert await stt.transcribe_partial(CLIP, beam=5) == Partial("mm-hmm", None)
        await link.close()
    assert asked == [
        {"partial": True, "prompt": "Mm-hmm. Uh-huh."},
        {"partial": True},
        {"partial": True, "beam": 5},
    ]


def test_a_partials_log_probability_is_read_only_from_ofp() -> None:
    """What this project's server answers a partial with (:func:`partial_event`) reads back as
    detailed with its ``avg_logprob``; a transcript of text only (a stock server's) is not
    detailed, so ``RemoteTranscriber.transcribe_partial`` gives None, not the 0.0 that
    ``Transcript`` holds there (0.0 would read as the surest decode there is)."""
    sent = partial_event(Partial("mm-hmm", -0.73219))
    assert sent.data["ofp"] == {"avg_logprob": -0.7322}
    heard = transcript_from_event(sent.data, 1.0)
    assert (heard.text, heard.detailed, heard.avg_logprob) == ("mm-hmm", True, -0.7322)
    plain = partial_event(Partial("mm-hmm", None))
    assert "ofp" not in plain.data
    text_only = transcript_from_event(plain.data, 1.0)
    assert (text_only.text, text_only.detailed) == ("mm-hmm", False)


async def test_a_partials_log_probability_comes_over_the_wire() -> None:
    """A server that sends ``ofp.avg_logprob`` with a partial's transcript: the Partial has
    it; one that sends none: None."""
    answers = iter([{"text": "uh-huh", "ofp": {"avg_logprob": -1.25}}, {"text": "uh-huh"}])

    async def offers_partials(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while (event := await async_read_event(reader)) is not None:
            if event.type == "describe":
                info = {"asr": [], "tts": [], "ofp": {"partials": True}}
                await async_write_event(Event("info", info), writer)
            elif event.type == "audio-stop":
                await async_write_event(Event("transcript", next(answers)), writer)

    async with wyoming(offers_partials) as port:
        link = ServiceLink("stt", f"wyoming://127.0.0.1:{port}", FAST)
        await link.describe()
        stt = RemoteTranscriber(link)
        assert await stt.transcribe_partial(CLIP) == Partial("uh-huh", -1.25)
        assert await stt.transcribe_partial(CLIP) == Partial("uh-huh", None)
        await link.close()
