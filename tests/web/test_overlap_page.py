"""The page against a real ``serve`` when the person says "Yeah." over a reply: Chromium's fake
microphone says it about four seconds after voice starts, while the parrot reads a long text.
The reply is paused, resumed and finishes; the bubble says so and why, and "Yeah." is a faint
aside, not a turn."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import resample, write_wav
from gateway.testing.browser import launch
from gateway.testing.overlap import LONG_TEXT
from gateway.testing.speech import piper_wav

pytestmark = pytest.mark.slow

MIC_RATE = 48_000
#: Silence before "Yeah." (the reply is under way by then), and after it: longer than the reply,
#: so the looping fake microphone does not say it again while the test watches.
LEAD_S, TAIL_S = 4.0, 40.0


@pytest.fixture(scope="module")
def yeah_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pcm, rate = piper_wav("Yeah.")
    lead = np.zeros(int(LEAD_S * MIC_RATE), np.int16)
    tail = np.zeros(int(TAIL_S * MIC_RATE), np.int16)
    path = tmp_path_factory.mktemp("mic") / "yeah.wav"
    write_wav(path, np.concatenate([lead, resample(pcm, rate, MIC_RATE), tail]), MIC_RATE)
    return path


@pytest.fixture(scope="module")
def browser(playwright_instance: object, yeah_wav: Path) -> Iterator[object]:
    """Chromium whose microphone says "Yeah." once (this module's own, not conftest's)."""
    b = launch(
        playwright_instance,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={yeah_wav}",
    )
    yield b
    b.close()


def test_yeah_over_a_reply_pauses_it_resumes_it_and_it_finishes(context, gateway):
    page = context.new_page()
    page.goto(f"{gateway.url}/?transport=ws")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    page.get_by_test_id("agent-utterance").filter(has_text="I'm Parrot").wait_for(timeout=15000)
    page.get_by_test_id("start").click()  # the microphone starts: "Yeah." in about 4 s
    page.get_by_label("Type a message").fill(LONG_TEXT)
    page.get_by_label("Type a message").press("Enter")
    reply = page.get_by_test_id("agent-utterance").filter(has_text="lighthouse keeper")
    reply.wait_for(timeout=15000)
    resumed = reply.locator("[data-testid=playback]")
    # "resumed" may come first with no why (the agent went on before the decision): wait for it.
    reply.locator("[data-testid=playback][data-why=backchannel]").wait_for(timeout=30000)
    assert "resumed" in resumed.inner_text()
    aside = page.locator("[data-testid=aside][data-why=backchannel]")
    assert aside.count() == 1 and re.search("yeah", aside.inner_text(), re.I)
    # Nothing else was made of it. The echo guard may take the word's first 96 ms for the
    # agent's own voice (seen once in CI: "echo", then "backchannel" on 'yeah'): that is an
    # aside of its own, never a noise or an interruption.
    whys = page.get_by_test_id("aside").evaluate_all("els => els.map(e => e.dataset.why)")
    assert set(whys) <= {"backchannel", "echo"}, whys
    # The reply played on to its end: the session goes back to listening, nothing was flushed,
    # and "Yeah." never became a turn (the one transcript is the typed line).
    page.wait_for_function("() => !ofpDebug.paused", timeout=5000)
    page.locator("#state[data-state=listening]").wait_for(timeout=30000)
    assert page.evaluate("ofpDebug.flushes") == 0
    transcripts = page.get_by_test_id("transcript")
    assert transcripts.count() == 1 and "lighthouse" in transcripts.first.inner_text()
    assert reply.get_attribute("data-playback") == "resumed"
