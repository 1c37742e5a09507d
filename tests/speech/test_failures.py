"""Remote speech failing for real: the project's speech server killed (SIGKILL) mid-turn and
started again, seen by a gateway node's ``/readyz`` and ``/metrics`` and by the person (a
notice, then a turn that works once the server is back); a flood against a real server's
bound; a client that goes away mid-decode; live partials for a stock-style client."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.audio import FRAME_SAMPLES
from gateway.proxy.events import AgentSaid, Told, Transcribed
from gateway.proxy.models import VoiceModels
from gateway.proxy.session import VoiceSession
from gateway.proxy.settings import SessionSettings
from gateway.speech.asr import RemoteTranscriber
from gateway.speech.link import LinkSettings, ServiceLink, SpeechServiceDown
from gateway.speech.services import SpeechServices
from gateway.talk.text import Talk
from gateway.testing.processes import metric_samples, serving
from gateway.testing.speech import espeak_16k, silence
from tests.speech.conftest import WyomingServer, own_server

pytestmark = pytest.mark.slow

LONG = "Please tell me everything you know about the history of the city of Lisbon in Portugal."


def readyz(url: str) -> dict:
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return json.loads(exc.read())


def wait_for(check, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return False


async def test_killed_mid_request_then_restarted(tmp_path: Path) -> None:
    """SIGKILL while a transcription runs: the request fails at once and cleanly (no hang),
    the link says down; the server restarted on the same port is found again by the link's
    probe, and the next transcription works."""
    server = own_server(tmp_path)
    server.start()
    try:
        link = ServiceLink(
            "stt", server.address, LinkSettings(timeout_s=60, backoff_s=0.2, max_backoff_s=1)
        )
        stt = RemoteTranscriber(link)
        speech = espeak_16k(LONG)
        request = asyncio.ensure_future(stt.transcribe(speech))
        await asyncio.sleep(0.05)  # sent, and being decoded
        server.kill()
        # Noticed by the stream ending, not a timeout: the link's timeout is 60 s, and
        # SpeechServiceDown must come before the 20 s guard ends the wait.
        with pytest.raises(SpeechServiceDown):
            await asyncio.wait_for(request, 20)
        assert link.down
        server.start()
        for _ in range(300):
            if not link.down:
                break
            await asyncio.sleep(0.1)
        assert not link.down
        transcript = await stt.transcribe(speech)
        assert "lisbon" in transcript.text.lower() and transcript.detailed
        await link.close()
    finally:
        server.stop()


def test_readyz_and_metrics_name_the_service_that_is_down(tmp_path: Path) -> None:
    """A node with --stt on a speech server: ready while it runs; SIGKILL: /readyz says
    "speech service down" naming stt and its address, /metrics has it at 0 (the node's health
    probe finds out without a person's turn failing first); restarted: ready again."""
    server = own_server(tmp_path)
    server.start()
    (tmp_path / "data").mkdir()
    try:
        with serving(
            tmp_path / "data", "--stt", server.address, "--agent", "builtin:parrot"
        ) as node:
            assert wait_for(lambda: readyz(node.url)["state"] == "ready"), readyz(node.url)
            assert readyz(node.url)["speechServices"] == [
                {"service": "stt", "address": server.address, "up": True}
            ]
            server.kill()
            assert wait_for(lambda: readyz(node.url)["state"] == "speech service down")
            (down,) = readyz(node.url)["speechServices"]
            assert down["service"] == "stt" and down["up"] is False and down["reason"]
            with urllib.request.urlopen(node.url + "/metrics", timeout=5) as r:
                metrics = metric_samples(r.read())
            key = f"ofp_gateway_speech_service_up{{address={server.address},service=stt}}"
            assert metrics[key] == 0, metrics
            server.start()
            assert wait_for(lambda: readyz(node.url)["state"] == "ready"), readyz(node.url)
    finally:
        server.stop()


async def test_the_person_is_told_and_can_say_it_again(tmp_path: Path) -> None:
    """A session with remote speech recognition whose server dies: the utterance is not lost
    silently — the page gets a notice, the session listens again — and once the server is
    back the same words are heard."""
    server = own_server(tmp_path)
    server.start()
    events: list[object] = []
    models = VoiceModels(
        services=SpeechServices(
            stt_service=server.address,
            link=LinkSettings(timeout_s=30, backoff_s=0.2, max_backoff_s=1),
        )
    )
    await models.warm_up()
    directory = AgentDirectory(AddressPolicy([]))
    talk = Talk(directory, None, None)
    await talk.start(["builtin:parrot"], "(spoken)", 20)
    session = VoiceSession(
        talk.conv,
        models,
        on_event=events.append,
        fetch=directory.client.fetch,
        settings=SessionSettings(paced=False),
    )
    session.speak_replies = False

    async def say(pcm: np.ndarray) -> None:
        pcm = np.concatenate([silence(300), pcm, silence(2500)])
        for at in range(0, len(pcm), FRAME_SAMPLES):
            session.feed(pcm[at : at + FRAME_SAMPLES])
            await asyncio.sleep(0.02)

    try:
        server.kill()
        await say(espeak_16k("What time is it in Lisbon?"))
        notices = [e for e in events if isinstance(e, Told)]
        assert any("unavailable" in n.text and "say that again" in n.text for n in notices), events
        assert not [e for e in events if isinstance(e, Transcribed)]
        assert session.state == "listening"
        link = models.services[0]
        assert link.down and link.kind == "stt"
        server.start()
        for _ in range(300):
            if not link.down:
                break
            await asyncio.sleep(0.1)
        await say(espeak_16k("What time is it in Lisbon?"))
        finals = [e for e in events if isinstance(e, Transcribed)]
        assert len(finals) == 1 and "lisbon" in finals[0].text.lower(), events
        assert finals[0].confidence is not None  # the project's server measures it
    finally:
        await session.close()
        await talk.finish()
        await directory.aclose()
        server.stop()


async def test_the_page_is_told_what_a_stock_server_loses(stock_whisper: WyomingServer) -> None:
    """With stock wyoming-faster-whisper the page hears once that recognition is text only,
    and the transcript it shows carries no confidence (none was measured)."""
    events: list[object] = []
    models = VoiceModels(services=SpeechServices(stt_service=stock_whisper.address))
    await models.warm_up()
    directory = AgentDirectory(AddressPolicy([]))
    talk = Talk(directory, None, None)
    await talk.start(["builtin:parrot"], "(spoken)", 20)
    session = VoiceSession(
        talk.conv,
        models,
        on_event=events.append,
        fetch=directory.client.fetch,
        settings=SessionSettings(paced=False),
    )
    session.speak_replies = False
    try:
        pcm = np.concatenate(
            [silence(300), espeak_16k("What time is it in Lisbon?"), silence(2500)]
        )
        for at in range(0, len(pcm), FRAME_SAMPLES):
            session.feed(pcm[at : at + FRAME_SAMPLES])
            await asyncio.sleep(0.02)
        for _ in range(100):
            if any(isinstance(e, Transcribed) for e in events):
                break
            await asyncio.sleep(0.1)
        notices = [e.text for e in events if isinstance(e, Told)]
        assert sum("text only" in n for n in notices) == 1, notices
        (final,) = [e for e in events if isinstance(e, Transcribed)]
        assert "lisbon" in final.text.lower() and final.confidence is None
    finally:
        await session.close()
        await talk.finish()
        await directory.aclose()


async def test_synthesis_dying_mid_reply_is_shown_as_text(tmp_path: Path) -> None:
    """The speech server killed before a reply is spoken (its stream ending mid-reply is
    tests/speech/test_link.py's): the reply's text is on the page, a notice says synthesis is
    unavailable, the session goes on; the next reply, once the server is back, is spoken."""
    server = own_server(tmp_path)
    server.start()
    events: list[object] = []
    models = VoiceModels(
        services=SpeechServices(
            stt_service=server.address,
            tts_service=server.address,
            link=LinkSettings(timeout_s=30, backoff_s=0.2, max_backoff_s=1),
        )
    )
    await models.warm_up()
    directory = AgentDirectory(AddressPolicy([]))
    talk = Talk(directory, None, None)
    await talk.start(["builtin:parrot"], "(spoken)", 20)
    session = VoiceSession(
        talk.conv,
        models,
        on_event=events.append,
        fetch=directory.client.fetch,
        settings=SessionSettings(paced=False),
    )
    played: list[np.ndarray] = []

    async def collect() -> None:
        async for frame in session.playout:
            played.append(frame)

    collector = asyncio.ensure_future(collect())
    try:
        server.kill()
        await session.say_text("Please repeat this rather long sentence back to me.")
        for _ in range(100):
            if any(isinstance(e, Told) and "synthesis" in e.text for e in events):
                break
            await asyncio.sleep(0.1)
        assert any(
            isinstance(e, Told) and "Speech synthesis is unavailable" in e.text for e in events
        ), events
        assert any(isinstance(e, AgentSaid) for e in events)  # shown as text
        server.start()
        link = next(link for link in models.services if link.kind == "tts")
        for _ in range(300):
            if not link.down:
                break
            await asyncio.sleep(0.1)
        before = len(played)
        await session.say_text("And this one?")
        for _ in range(200):
            if len(played) > before and await session.wait_quiet(0.1):
                break
            await asyncio.sleep(0.1)
        sound = np.concatenate(played[before:]) if played[before:] else np.zeros(0)
        assert np.abs(sound).max() > 1000  # the second reply was spoken
    finally:
        collector.cancel()
        await session.close()
        await talk.finish()
        await directory.aclose()
        server.stop()
