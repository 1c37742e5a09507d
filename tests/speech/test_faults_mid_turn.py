"""A speech server that fails in the middle of a person's turn (issue 41): its connection cut
after 20 KB, the server SIGKILLed, the server no longer answering, garbage on the wire.

Through the paths a person takes — ``talk --wav`` in a real process, a page's WebSocket client
of a real ``serve`` — against the real servers (stock ``wyoming-faster-whisper``, this project's
``speech serve``), with a small TCP proxy in the test between the gateway and the server that
cuts, kills or falls silent on cue. What must hold: no traceback anywhere; a request whose
connection broke is sent again with the audio it still holds, so the turn is kept when the
service answers again; when it does not, the person gets one line naming the service.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.audio import FRAME_SAMPLES, SAMPLE_RATE, read_wav
from gateway.proxy.events import Told, Transcribed
from gateway.proxy.session import SessionSettings, VoiceModels, VoiceSession
from gateway.render.tts import VoiceSettings
from gateway.speech.asr import RemoteTranscriber
from gateway.speech.link import LinkSettings, ServiceLink, SpeechServiceDown
from gateway.speech.services import SpeechServices
from gateway.speech.tts import RemoteSynthesizer
from gateway.talk.text import Talk
from gateway.testing.loopback import Site, capture_agent, utterances_received
from gateway.testing.page import Page
from gateway.testing.processes import free_port, serving
from gateway.testing.speech import espeak_16k, espeak_wav, silence
from tests.speech.conftest import WyomingServer, own_server
from tests.speech.test_talk_over_wyoming import REQUEST, clip, talk

pytestmark = pytest.mark.slow

#: Bytes from the gateway after which the proxy acts (the issue's 20 KB: mid-utterance).
CUT_AFTER = 20_000


class Proxy:
    """A TCP proxy on loopback in front of a Wyoming server, on a thread of its own (a ``serve``
    or ``talk`` process, or this test's loop, is its client).

    The first ``times`` requests that carry more than ``after`` bytes in ``direction``
    ("up": gateway to server; "down": server to gateway) are acted on: ``"cut"`` closes both
    sides at once, ``"hang"`` stops forwarding and keeps them open (a server that no longer
    answers), ``"kill"`` calls ``on_cue`` (SIGKILL the server) and lets the stream run out.
    ``describe`` connections (the link's warm-up, probes and health checks), smaller ones and
    later ones pass untouched: stock wyoming-piper's ``info`` lists every voice it knows
    (86 KB), and a cut there tests a probe's race with talk's warm-up, not a request's retry.
    """

    def __init__(
        self,
        port: int,
        *,
        action: str = "cut",
        after: int = CUT_AFTER,
        direction: str = "up",
        times: int = 1,
        on_cue: Callable[[], None] | None = None,
    ) -> None:
        self.target = port
        self.action = action
        self.after = after
        self.direction = direction
        self.times = times
        self.on_cue = on_cue
        self.port = free_port()
        self.acted = 0
        self.connections = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._held: list[asyncio.StreamWriter] = []

    @property
    def address(self) -> str:
        return f"wyoming://127.0.0.1:{self.port}"

    def __enter__(self) -> Proxy:
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(
            asyncio.start_server(self._client, "127.0.0.1", self.port)
        )
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()
            for w in self._held:
                w.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        state = {"bytes": 0, "stopped": False}
        # The first event's header line says what the connection is for (read here, passed on).
        first = b""
        with contextlib.suppress(OSError, ValueError):
            first = await reader.readline()
        up_w.write(first)
        acting = b'"describe"' not in first

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, counted: bool) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while not state["stopped"]:
                    data = await src.read(4096)
                    if not data:
                        break
                    if counted and acting:
                        state["bytes"] += len(data)
                        if state["bytes"] > self.after and self.acted < self.times:
                            self.acted += 1
                            if self.action == "kill" and self.on_cue is not None:
                                await asyncio.to_thread(self.on_cue)
                            elif self.action == "hang":
                                state["stopped"] = True
                                self._held += [writer, up_w]
                                return
                            else:  # cut: both sides closed, mid-stream
                                writer.transport.abort()
                                up_w.transport.abort()
                                return
                    dst.write(data)
                    await dst.drain()
            if not state["stopped"]:
                with contextlib.suppress(OSError):
                    dst.close()

        await asyncio.gather(
            pump(reader, up_w, self.direction == "up"),
            pump(up_r, writer, self.direction == "down"),
        )


def _port(server: WyomingServer) -> int:
    return server.port


def _no_traceback(log: str) -> None:
    assert "Traceback" not in log, log


# ---------------------------------------------------------------------------- talk --wav


async def test_talk_keeps_the_turn_when_the_stt_connection_is_cut(
    site: Site, tmp_path: Path, stock_whisper: WyomingServer
) -> None:
    """The issue's case: stock wyoming-faster-whisper, the connection cut after 20 KB of the
    person's audio. The request is sent again on the next connection: the agent gets the words,
    talk exits 0, and nothing prints a traceback."""
    url = capture_agent(site)
    wav = clip(tmp_path, espeak_wav(REQUEST))
    with Proxy(_port(stock_whisper)) as proxy:
        code, result, log = await talk(
            "--wav", wav, "--agent", url, "--stt", proxy.address, data=tmp_path
        )
    assert proxy.acted == 1, log  # the cut happened
    assert code == 0, log
    _no_traceback(log)
    heard = utterances_received(site)
    assert len(heard) == 1, log
    assert "lisbon" in json.dumps(heard[0]).lower()
    assert [n for n in result["notices"] if n["reason"] == "@error"] == [], result["notices"]


async def test_talk_names_the_stt_service_when_it_was_killed_mid_turn(
    site: Site, tmp_path: Path
) -> None:
    """The project's speech server SIGKILLed while the person's audio streams to it: it does
    not come back, so after the retry the person gets one line naming the service; talk exits
    1 (no answer), no traceback, and nothing reaches the agent."""
    server = own_server(tmp_path)
    server.start()
    try:
        url = capture_agent(site)
        wav = clip(tmp_path, espeak_wav(REQUEST))
        with Proxy(server.port, action="kill", on_cue=server.kill) as proxy:
            code, result, log = await talk(
                "--wav", wav, "--agent", url, "--stt", proxy.address, data=tmp_path
            )
        assert proxy.acted == 1, log
    finally:
        server.stop()
    assert code == 1, log
    _no_traceback(log)
    told = [n["text"] for n in result["notices"]]
    named = [t for t in told if f"stt service at {proxy.address}" in t]
    assert len(named) == 1 and "say that again" in named[0], told
    assert utterances_received(site) == []


async def test_talk_keeps_the_reply_when_the_tts_connection_is_cut(
    tmp_path: Path, stock_piper: WyomingServer
) -> None:
    """Synthesis: the parrot's spoken reply (about 2.5 s) cut after 20 KB of audio on its way
    back (under 0.5 s of it). The reply is asked again and the rest of it played: the reply
    audio is far longer than what came before the cut and near an uncut run's (Piper's timing
    varies between runs: a fifth is allowed), talk exits 0, no notice of an error, no
    traceback."""
    wav = clip(tmp_path, espeak_wav(REQUEST))
    lengths = []
    for action in ("none", "cut"):
        out = tmp_path / f"reply-{action}.wav"
        with Proxy(_port(stock_piper), direction="down", times=int(action == "cut")) as proxy:
            code, result, log = await talk(
                "--wav", wav, "--agent", "builtin:parrot", "--tts", proxy.address,
                "--out", str(out), data=tmp_path,
            )  # fmt: skip
        assert code == 0, log
        _no_traceback(log)
        assert proxy.acted == int(action == "cut"), log
        # The cut fell on the reply's audio, not on a describe (the link's probes and warm-up).
        # The link reads it as a reset mid-request, or, when the abort lands between two events
        # (the reset drops what was on its way), as the stream ending before the next chunk.
        broke = "mid-request" in log or "the stream ended before audio-chunk" in log
        assert broke == (action == "cut"), log
        assert [n for n in result["notices"] if n["reason"] == "@error"] == [], result["notices"]
        audio, rate = read_wav(out)
        lengths.append(len(audio) / rate)
    uncut, cut = lengths
    before_cut = CUT_AFTER / 2 / 22_050  # seconds of 16-bit 22.05 kHz audio in 20 KB, at most
    assert uncut > 4 * before_cut, lengths
    assert cut > 3 * before_cut and abs(cut - uncut) < 0.2 * uncut, lengths


# ---------------------------------------------------------------------------- a page of serve


@pytest.fixture
def speech_proxy(tmp_path: Path) -> Iterator[tuple[WyomingServer, Proxy]]:
    server = own_server(tmp_path)
    server.start()
    try:
        with Proxy(server.port, times=1) as proxy:
            yield server, proxy
    finally:
        server.stop()


async def _speak(page: Page, pcm: np.ndarray) -> None:
    pcm = np.concatenate([silence(300), pcm, silence(1500)])
    for i in range(0, len(pcm), 320):
        await page.ws.send(pcm[i : i + 320].astype("<i2").tobytes())
        await asyncio.sleep(0.02)


async def test_the_page_keeps_the_turn_then_is_told_which_service_died(
    tmp_path: Path, speech_proxy: tuple[WyomingServer, Proxy]
) -> None:
    """A page of ``serve --stt`` through the proxy. The first utterance's connection is cut
    after 20 KB: the turn is kept (its transcript and the parrot's answer come). Then the
    server is SIGKILLed: the next utterance brings one notice naming the service, and the
    serve log has no traceback."""
    server, proxy = speech_proxy
    (tmp_path / "gw").mkdir()
    with serving(
        tmp_path / "gw", "--agent", "builtin:parrot", "--stt", proxy.address, "--no-record"
    ) as gw:
        page = await Page.open(gw.ws, transport="ws")
        try:
            await page.wait_for(lambda e: e["type"] == "utterance" and "Parrot" in e["text"])
            await _speak(page, espeak_16k(REQUEST))
            final = await page.wait_for(
                lambda e: e["type"] == "transcript" and not e.get("typed"), timeout=60
            )
            assert "lisbon" in final["text"].lower()
            await page.wait_for(
                lambda e: e["type"] == "utterance" and e["text"].startswith("You said"), timeout=60
            )
            assert proxy.acted == 1
            server.kill()
            since = len(page.events)
            await _speak(page, espeak_16k(REQUEST))
            notice = await page.wait_for(
                lambda e: e["type"] == "notice" and "Speech recognition" in e["text"],
                since=since,
                timeout=90,
            )
            assert f"stt service at {proxy.address}" in notice["text"], notice
            notices = [
                e for e in page.events[since:] if e["type"] == "notice" and "Speech" in e["text"]
            ]
            assert len(notices) == 1, notices
        finally:
            await page.close()
        _no_traceback((gw.data / "serve.log").read_text())


# ---------------------------------------------------------------------------- in process


async def test_a_server_that_stops_answering_mid_turn_keeps_the_turn(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The connection falls silent after 20 KB (the server no longer answers it): the request
    times out, the link's probe finds the server answering new connections, and the same audio
    is transcribed on one of them. A session sees its transcript; no traceback is logged."""
    server = own_server(tmp_path)
    server.start()
    events: list[object] = []
    try:
        with Proxy(server.port, action="hang") as proxy:
            models = VoiceModels(
                services=SpeechServices(
                    stt_service=proxy.address,
                    link=LinkSettings(timeout_s=3, backoff_s=0.2, max_backoff_s=1),
                )
            )
            await models.warm_up()
            directory = AgentDirectory(AddressPolicy([]))
            talk_ = Talk(directory, None, None)
            await talk_.start(["builtin:parrot"], "(spoken)", 20)
            session = VoiceSession(
                talk_.conv,
                models,
                on_event=events.append,
                fetch=directory.client.fetch,
                settings=SessionSettings(paced=False),
            )
            session.speak_replies = False
            try:
                with caplog.at_level(logging.WARNING):
                    pcm = np.concatenate([silence(300), espeak_16k(REQUEST), silence(2500)])
                    for at in range(0, len(pcm), FRAME_SAMPLES):
                        session.feed(pcm[at : at + FRAME_SAMPLES])
                        await asyncio.sleep(0.02)
                    for _ in range(600):
                        if any(isinstance(e, (Transcribed, Told)) for e in events):
                            break
                        await asyncio.sleep(0.1)
            finally:
                await session.close()
                await talk_.finish()
                await directory.aclose()
            assert proxy.acted == 1
    finally:
        server.stop()
    finals = [e for e in events if isinstance(e, Transcribed)]
    assert len(finals) == 1 and "lisbon" in finals[0].text.lower(), events
    assert not [e for e in events if isinstance(e, Told)], events
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]


class Garbage:
    """A fake Wyoming server (this test's loop) that describes itself properly and answers
    every request with ``reply``: bytes that are not Wyoming."""

    def __init__(self, reply: bytes) -> None:
        self.reply = reply
        self.requests = 0
        self.port = free_port()

    async def __aenter__(self) -> Garbage:
        self._server = await asyncio.start_server(self._client, "127.0.0.1", self.port)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, ValueError):
            line = await reader.readline()
            if json.loads(line).get("type") == "describe":
                writer.write(b'{"type": "info", "data": {}}\n')
            else:
                self.requests += 1
                writer.write(self.reply)
            await writer.drain()
        writer.close()


#: What a broken or hostile server might send instead of an event.
GARBAGE = {
    "not json": b"\xff\xfe this is not json\n",
    "a list": b"[1, 2, 3]\n",
    "no type": b'{"data": {}}\n',
    "a length that is text": b'{"type": "transcript", "data_length": "lots"}\n',
    "data that is not an object": b'{"type": "transcript", "data": "hello"}\n',
    "words that are not words": (
        b'{"type": "transcript", "data": {"text": "hi", "ofp": {"words": [{"x": 1}]}}}\n'
    ),
    "audio of no rate": b'{"type": "audio-start", "data": {"rate": 0}}\n',
}


@pytest.mark.parametrize("name", list(GARBAGE))
async def test_garbage_frames_fail_the_request_in_one_line(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Whatever a server sends instead of Wyoming, speech to text and synthesis fail with
    SpeechServiceDown naming the service (after sending the request once more), and nothing
    logs a traceback."""
    async with Garbage(GARBAGE[name]) as fake:
        address = f"wyoming://127.0.0.1:{fake.port}"
        settings = LinkSettings(timeout_s=3, backoff_s=0.05, max_backoff_s=0.2, retry_s=3)
        stt = RemoteTranscriber(ServiceLink("stt", address, settings))
        tts = RemoteSynthesizer(ServiceLink("tts", address, settings))
        with caplog.at_level(logging.DEBUG):
            with pytest.raises(SpeechServiceDown) as err:
                await asyncio.wait_for(stt.transcribe(espeak_16k("Hello.")), 30)
            assert err.value.service == f"the stt service at {address}"
            with pytest.raises(SpeechServiceDown) as err:
                chunks = tts.stream("Hello there.", VoiceSettings(), rate=SAMPLE_RATE)
                await asyncio.wait_for(_drain(chunks), 30)
            assert err.value.service == f"the tts service at {address}"
        assert fake.requests == 4  # each request sent twice: the retry, then the failure
        assert not [r for r in caplog.records if r.exc_info]
        await stt.link.close()
        await tts.link.close()


async def _drain(chunks) -> None:
    async for _ in chunks:
        pass


@pytest.mark.parametrize("hangs", [1, 10])
async def test_talk_with_a_silent_stt_server_and_speech_timeout(
    site: Site, tmp_path: Path, own_speech: WyomingServer, hangs: int
) -> None:
    """``--speech-timeout``: the speech server falls silent after 20 KB of the person's audio
    (the proxy stops forwarding, the connection stays open). Once (``hangs=1``): the request
    times out (2 s) and is sent again: the turn is kept. Every time:
    the person gets one line naming the service; talk exits 1. No traceback either way."""
    url = capture_agent(site)
    wav = clip(tmp_path, espeak_wav(REQUEST))
    with Proxy(_port(own_speech), action="hang", times=hangs) as proxy:
        code, result, log = await talk(
            "--wav", wav, "--agent", url, "--stt", proxy.address, "--speech-timeout", "2",
            "--timeout", "12", data=tmp_path,
        )  # fmt: skip
    assert proxy.acted >= 1, log
    _no_traceback(log)
    errors = [n["text"] for n in result["notices"] if n["reason"] == "@error"]
    if hangs == 1:
        assert code == 0, log
        assert errors == [], errors
        heard = utterances_received(site)
        assert len(heard) == 1 and "lisbon" in json.dumps(heard[0]).lower(), log
    else:
        assert code == 1, log
        named = [t for t in errors if f"stt service at {proxy.address}" in t]
        assert len(named) == 1 and "say that again" in named[0], errors
        assert utterances_received(site) == []
