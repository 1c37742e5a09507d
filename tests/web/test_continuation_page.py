"""The page against a real ``serve`` when the person says a request in two parts: Chromium's
fake microphone says "Turn on the lights." and, 500 ms later, "in the kitchen please." (issue 38,
item 3), over the WebSocket and over WebRTC. The first part ends a turn and is sent (or, on a loaded
machine, the turn is still open when the second part begins); the whole request, transcribed as
one, takes its bubble's place (the page swaps it on ``replaces``) and the parrot's one answer is
to the whole request. A reload, which rejoins the conversation, draws the same: one bubble, one answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, resample, write_wav
from gateway.testing.browser import launch
from gateway.testing.overlap import speech
from gateway.testing.speech import normalise

pytestmark = pytest.mark.slow

MIC_RATE = 48_000
#: Silence before the request (the parrot's greeting is over by then), the pause between its
#: parts, and the silence after: longer than the test, so the looping microphone says it once.
LEAD_S, GAP_S, TAIL_S = 3.0, 0.5, 60.0


@pytest.fixture(scope="module")
def request_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    def quiet(seconds: float) -> np.ndarray:
        return np.zeros(int(seconds * SAMPLE_RATE), np.int16)

    pcm = np.concatenate(
        [
            quiet(LEAD_S),
            speech("Turn on the lights.", "piper"),
            quiet(GAP_S),
            speech("in the kitchen please.", "piper"),
            quiet(TAIL_S),
        ]
    )
    path = tmp_path_factory.mktemp("mic") / "two-parts.wav"
    write_wav(path, resample(pcm, SAMPLE_RATE, MIC_RATE), MIC_RATE)
    return path


@pytest.fixture(scope="module")
def browser(playwright_instance: object, request_wav: Path) -> Iterator[object]:
    """Chromium whose microphone says the request once (this module's own, not conftest's)."""
    b = launch(
        playwright_instance,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={request_wav}",
    )
    yield b
    b.close()


def _bubbles(page: Any, testid: str) -> list[str]:
    return [t.inner_text() for t in page.get_by_test_id(testid).all()]


@pytest.mark.parametrize("transport", ["ws", "webrtc"])
def test_a_request_in_two_parts_is_one_bubble_with_one_answer(context, gateway, transport):
    page = context.new_page()
    sent: list[dict[str, Any]] = []  # what the gateway told the page, as it came
    page.on(
        "websocket",
        lambda ws: ws.on(
            "framereceived",
            lambda frame: sent.append(json.loads(frame)) if isinstance(frame, str) else None,
        ),
    )
    page.goto(f"{gateway.url}/?transport={transport}")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    page.get_by_test_id("agent-utterance").filter(has_text="I'm Parrot").wait_for(timeout=15000)
    page.get_by_test_id("start").click()  # the microphone starts: the request in about 3 s
    answer = page.get_by_test_id("agent-utterance").filter(has_text="kitchen")
    answer.wait_for(timeout=60000)
    page.locator("#state[data-state=listening]").wait_for(timeout=30000)
    assert page.evaluate("ofpDebug.transport") == transport
    # Usually the first part ends a turn and is sent, then the whole request replaces it. On a
    # loaded machine the turn-taker may still be deciding when the second part begins (CI's
    # fresh-clone run, 2026-11-27): then it was one turn from the start. Either way the page must
    # end with one bubble and one answer; when there were two transcripts, the second replaced
    # the first (the reducer's swap itself: tests/web/js/state.test.js).
    transcripts = [m for m in sent if m.get("type") == "transcript"]
    assert len(transcripts) in (1, 2), transcripts
    if len(transcripts) == 2:
        first, whole = transcripts
        assert whole["replaces"] == first["id"], transcripts
    else:
        assert {"lights", "kitchen"} <= set(normalise(transcripts[0]["text"])), transcripts
    [shown] = _bubbles(page, "transcript")
    assert {"lights", "kitchen"} <= set(normalise(shown)), shown
    answers = [a for a in _bubbles(page, "agent-utterance") if "I'm Parrot" not in a]
    assert len(answers) == 1 and {"lights", "kitchen"} <= set(normalise(answers[0])), answers
    # A reload rejoins the conversation: the gateway's history draws the same.
    conversation = page.evaluate("ofpDebug.conversationId")
    page.reload()
    page.wait_for_function(
        f"() => ofpDebug.conversationId === {json.dumps(conversation)}", timeout=10000
    )
    page.get_by_test_id("agent-utterance").filter(has_text="kitchen").wait_for(timeout=10000)
    [again] = _bubbles(page, "transcript")
    assert {"lights", "kitchen"} <= set(normalise(again)), again
    [answered] = [a for a in _bubbles(page, "agent-utterance") if "I'm Parrot" not in a]
    assert {"lights", "kitchen"} <= set(normalise(answered)), answered
