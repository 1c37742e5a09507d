"""A request said in two parts against a real ``serve`` (issue 38, item 3): the person goes on
within a second, before the answer to the first part is heard; the whole request goes to the
floor as one utterance, which takes the first part's place on the page, and the parrot's
answer the person hears is to the whole request."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from gateway.testing.overlap import say_in_parts, speech
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.speech import normalise

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("continuation", *PARROT_ON_LOOPBACK)


@pytest.fixture(scope="module")
def never(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("no-continuation", *PARROT_ON_LOOPBACK, "--continuation-ms", "0")


async def test_a_request_resumed_within_a_second_is_one_turn_and_answered_once(gateway):
    trial = await say_in_parts(
        gateway.ws,
        speech("Turn on the lights.", "piper"),
        speech("in the kitchen please.", "piper"),
    )
    # One bubble: the whole request (the first part, if it was sent, is replaced by it).
    [shown] = trial.shown()
    assert {"lights", "kitchen"} <= set(normalise(shown)), trial
    # The first part ended its turn (a finished sentence, 500 ms of silence: the rule ends it at
    # 192-200 ms) and was sent; the whole request takes its place.
    first, whole = trial.transcripts
    assert whole["replaces"] == first["id"] and whole["id"] != first["id"], trial
    # The parrot answers the whole request once; what it said to the first part (if it came
    # before the person went on) follows the replaced transcript, so the page drops it too.
    [answer] = trial.answered
    assert {"lights", "kitchen"} <= set(normalise(answer)), trial
    assert sum("kitchen" in normalise(a) for a in trial.answers) == 1, trial


async def test_with_continuations_off_the_two_parts_are_two_turns(never):
    trial = await say_in_parts(
        never.ws, speech("Turn on the lights.", "piper"), speech("in the kitchen please.", "piper")
    )
    assert len(trial.shown()) == 2, trial
    assert all(t.get("replaces") is None for t in trial.transcripts), trial
