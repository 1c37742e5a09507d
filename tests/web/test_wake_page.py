"""The wake word guards the microphone in the page (docs/turn-taking.md): ``serve --wake alexa``
with the parrot, whose greeting plays as the page opens, and Chromium's fake microphone saying a
request with no wake word in a loop (tests/web/conftest.py). Until the wake word is heard that
audio reaches nothing but the detector: no transcript, nothing to the floor, not after the
greeting, not after a rejoin. The same microphone is transcribed once the wake word is off, so
the silence is the gate's, not a deaf pipeline's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from gateway.testing.processes import PARROT_ON_LOOPBACK, Served

pytestmark = pytest.mark.slow

#: A word of the microphone's sentence (conftest.SPOKEN) that Whisper gets right.
HEARD = re.compile(r"kitchen", re.I)
#: Two loops of the microphone's file (1 s + the sentence + 7 s each): speech falls inside any
#: window a greeting would open (8 s, follow_up_ms). Waited only to let a defect show.
TWO_LOOPS_MS = 23_000


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("wake", *PARROT_ON_LOOPBACK, "--wake", "alexa")


def _asleep_through_two_loops(page) -> None:
    page.wait_for_timeout(TWO_LOOPS_MS)
    shown = page.locator("#conversation").inner_text()
    assert page.get_by_test_id("transcript").filter(has_text=HEARD).count() == 0, shown
    assert page.get_by_test_id("agent-utterance").filter(has_text=HEARD).count() == 0, shown


def _started(page) -> None:
    page.get_by_test_id("start").click()
    page.locator("#state[data-state=idle]").wait_for(timeout=20000)  # asleep: no wake word yet


def test_a_greeting_does_not_open_the_microphone_nor_does_a_rejoin(context, gateway) -> None:
    page = context.new_page()
    page.goto(f"{gateway.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    assert page.locator("#wake").input_value() == "alexa"
    _started(page)
    # An agent joins while the microphone is on: its greeting is spoken (what opened the
    # microphone for 8 s before the wake word was heard).
    floor = page.get_by_test_id("floor")
    floor.get_by_label("Invite an agent").fill("builtin:clock")
    floor.get_by_role("button", name="Invite", exact=True).click()
    page.get_by_test_id("agent-utterance").filter(has_text="I'm Clock").wait_for(timeout=20000)
    _asleep_through_two_loops(page)

    # After a rejoin, an answer to a typed request (no wake word was heard for it) is spoken.
    conversation = page.evaluate("ofpDebug.conversationId")
    page.reload()
    page.wait_for_function(f"() => ofpDebug.conversationId === {conversation!r}", timeout=10000)
    _started(page)
    page.get_by_label("Type a message").fill("Parrot, hello there.")
    page.get_by_label("Type a message").press("Enter")
    page.get_by_test_id("agent-utterance").filter(
        has_text="You said: Parrot, hello there."
    ).wait_for(timeout=20000)
    _asleep_through_two_loops(page)

    # The control: with the wake word off, the same microphone is heard and answered.
    page.select_option("#wake", "off")
    page.get_by_test_id("transcript").filter(has_text=HEARD).first.wait_for(timeout=30000)
    log = (gateway.data / "serve.log").read_text()
    assert "Traceback" not in log
