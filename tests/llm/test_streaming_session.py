"""A streamed reply through the person's voice session (real Piper, real floor): sentences are
spoken as they come, the page is shown the text growing, the envelope that follows is not spoken
twice, and a barge-in cancels the generation, not only the playout.

The model is the OpenAI-compatible stub in its ``slow`` mode (a word every 200 ms), so that a
reply is certainly still being written when its first sentence plays; the real model streams
through the same path in test_embedded_assistant.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, user_identity
from gateway.llm.settings import LlmSettings
from gateway.proxy.events import AgentSaid, Flushed
from gateway.proxy.models import VoiceModels
from gateway.proxy.session import VoiceSession
from gateway.proxy.settings import SessionSettings
from gateway.testing.openai_stub import OK_ANSWER, openai_stub
from gateway.testing.outlet import Collector

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models() -> VoiceModels:
    return VoiceModels()


async def _session(models: VoiceModels, url: str):
    directory = AgentDirectory(
        AddressPolicy([]), llm=LlmSettings(url=url, first_token_s=5, token_gap_s=5)
    )
    conv = FloorHost(
        "stream", user=user_identity(), resolve=directory.resolve, outlet=Collector()
    )
    events: list[tuple[float, object]] = []
    session = VoiceSession(
        conv,
        models,
        on_event=lambda e: events.append((time.monotonic(), e)),
        fetch=None,
        settings=SessionSettings(out_rate=16000, partial_interval_ms=0),
    )
    released: list[float] = []

    async def play() -> None:
        async for _ in session.playout:
            released.append(time.monotonic())

    player = asyncio.get_running_loop().create_task(play())
    await session.invite("builtin:assistant")
    await conv.wait_idle(10)
    await session.wait_quiet(20)  # the greeting, spoken
    return directory, conv, session, events, released, player


async def _close(directory, conv, session, player) -> None:
    player.cancel()
    await session.close()
    await conv.close()
    await directory.aclose()


def _assistant_lines(events, since: float) -> list[AgentSaid]:
    return [e for t, e in events if t >= since and isinstance(e, AgentSaid) and "Hi," not in e.text]


async def test_sentences_are_spoken_as_they_stream_and_the_page_sees_the_text_grow(models) -> None:
    with openai_stub("slow") as stub:
        directory, conv, session, events, released, player = await _session(models, stub.url)
        try:
            asked = time.monotonic()
            await session.say_text("Tell me something.")
            assert await session.wait_quiet(30)
            stub_done = stub.requests[-1]
        finally:
            await _close(directory, conv, session, player)
    lines = _assistant_lines(events, asked)
    ids = {u.id for u in lines}
    assert len(ids) == 1, lines  # one utterance, shown as it grew
    texts = [u.text for u in lines]
    assert texts[:3] == [
        "The stub model is answering.",
        "The stub model is answering. Its second sentence follows.",
        OK_ANSWER,
    ]
    assert texts[-1] == OK_ANSWER  # the envelope's own, shown once more, not spoken again
    # Audio began before the model finished: the first sentence played while it wrote on.
    first_audio = min(t for t in released if t > asked)
    last_text = max(t for t, e in events if isinstance(e, AgentSaid) and e.text == OK_ANSWER)
    assert first_audio < last_text
    assert stub_done["body"]["stream"] is True


async def test_a_barge_in_cancels_the_generation(models) -> None:
    with openai_stub("slow") as stub:
        directory, conv, session, events, _released, player = await _session(models, stub.url)
        try:
            asked = time.monotonic()
            await session.say_text("Tell me something.")
            deadline = time.monotonic() + 20
            while not _assistant_lines(events, asked) and time.monotonic() < deadline:
                await asyncio.sleep(0.02)
            session.stop_speaking()  # what a barge-in does
            # The model's server saw its client go: generation stopped, not only playout.
            assert await asyncio.to_thread(stub.disconnected.wait, 5)
            await conv.wait_idle(5)
            await asyncio.sleep(0.3)
        finally:
            await _close(directory, conv, session, player)
    assert any(isinstance(e, Flushed) for t, e in events if t >= asked)
    final = _assistant_lines(events, asked)[-1]
    assert final.text.startswith("The stub model is answering.") and "third" not in final.text
