"""The semantic end-of-turn signal with its real model (SmolLM2-135M on llama.cpp).

Clear cases only, each with a wide margin: a sentence cut after "the" or "to" against a whole
question. Where the model's numbers sit between (the thresholds, the borderline sentences) is for
``scripts/bench_semantic.py``, not for a test that must pass on any CPU.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest

from gateway.voice.semantic import SemanticSettings, SemanticSignal, plain

pytestmark = pytest.mark.slow

UNFINISHED = ("i would like to go to the", "can you remind me to", "set a timer for")
FINISHED = ("what time is it", "what are you looking at", "how old is the universe")


@pytest.fixture(scope="module")
def semantic() -> Iterator[SemanticSignal]:
    signal = SemanticSignal(replace(SemanticSettings(), timeout_ms=5000))
    signal.warm_up()
    yield signal
    signal.close()


def test_cut_off_words_score_far_below_whole_sentences(semantic: SemanticSignal) -> None:
    cut = {t: semantic.score(t) for t in UNFINISHED}
    whole = {t: semantic.score(t) for t in FINISHED}
    # Measured: cut ≤ 0.0001, whole 0.34–0.73. A hundredfold margin either way of 0.01.
    assert max(cut.values()) < 0.01 < min(whole.values()) / 10, (cut, whole)


def test_the_words_are_judged_not_the_punctuation(semantic: SemanticSignal) -> None:
    assert plain("I would like to go to the…") == "i would like to go to the"
    assert semantic.prompt("What time is it?") == semantic.prompt("what time is it")
    assert semantic.score("I would like to go to the.") == semantic.score(
        "i would like to go to the"
    )


def test_numbers_are_read_as_said() -> None:
    """Whisper writes what a person says as digits; the model reads words ("Set an alarm for
    6.30." scored 0.0022, "…for six thirty" 0.090)."""
    assert plain("Set an alarm for 6.30.") == "set an alarm for six thirty"
    assert plain("Wake me at 7:05, please") == "wake me at seven oh five please"
    assert plain("It is 12:00") == "it is twelve o'clock"
    assert plain("Convert 10 miles") == "convert ten miles"
    assert plain("the 21st of May") == "the twenty first of may"
    assert plain("1,234 people") == "one thousand two hundred and thirty four people"
    assert plain("2.5 kilos") == "two point five kilos"
    assert plain("call 99999999999999999999") == "call 99999999999999999999"  # no one says it


def test_a_time_in_digits_is_judged_as_the_words(semantic: SemanticSignal) -> None:
    assert semantic.score("Set an alarm for 6.30.") == semantic.score(
        "set an alarm for six thirty"
    )


def test_the_agents_last_words_are_the_context(semantic: SemanticSignal) -> None:
    prompt = semantic.prompt("paris", "Which city would you like to visit?")
    assert prompt.index("Which city") < prompt.index("<|im_start|>user\nparis")
    assert prompt.endswith("paris"), "the person's turn is left open"
    # Clear after the question, as a single word.
    assert semantic.score("paris", "Which city would you like to visit?") > 0.05


def test_no_words_and_no_answer_give_no_score(semantic: SemanticSignal) -> None:
    assert semantic.score("") is None and semantic.score(" … ") is None
    dead = SemanticSignal(replace(SemanticSettings(), timeout_ms=200))
    dead._end_ids = frozenset({2})  # started, but its server is gone (nothing on this port)
    dead._llm.port = 9  # discard: nothing listens there on loopback
    assert dead.score("what time is it") is None


def test_a_signal_that_does_not_answer_is_logged_once_without_a_traceback(
    semantic: SemanticSignal, caplog: pytest.LogCaptureFixture
) -> None:
    """Under load a call can miss its deadline at every pause: one line per episode, no
    traceback (a serve log is checked for tracebacks), and a line when it answers again."""
    port = semantic._llm.port
    failures = semantic.failures
    caplog.set_level("INFO", logger="gateway.voice.semantic")
    try:
        semantic._llm.port = 9  # discard: nothing listens there on loopback
        assert [semantic.score("what time is it") for _ in range(3)] == [None] * 3
    finally:
        semantic._llm.port = port
    assert semantic.failures == failures + 3
    assert semantic.score("what time is it") is not None
    said = [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records]
    assert [(level, exc) for level, _, exc in said] == [("WARNING", None), ("INFO", None)], said
    assert "did not answer" in said[0][1] and "answers again" in said[1][1]


def test_a_call_that_would_queue_is_not_made(semantic: SemanticSignal) -> None:
    """At 12 people calls queued on the server delayed every turn: a busy signal answers None
    at once (the turn is judged without it) and counts the call it skipped."""
    skipped = semantic.skipped
    busy = semantic._take("someone else", prompt="", prime=False)
    assert busy is not None, "no call is running"
    try:
        assert semantic.score("what time is it", key="me") is None
        assert semantic.skipped == skipped + 1 and semantic.last_ms == 0.0
        assert semantic.prime("What can I do for you?", key="me") == "busy", "nor a prime"
    finally:
        semantic._give_back(busy, None, prime=False)
    assert semantic.score("what time is it", key="me") is not None, "free again"


def test_a_prime_never_costs_a_pause_its_score(semantic: SemanticSignal) -> None:
    """A prime in flight (another person's, or this person's own) does not make a pause's call
    be skipped: another person's score runs beside it, and a score whose own slot is being
    primed waits for the prime and then runs."""
    erin, frank = object(), object()
    assert semantic.score("hello there", key=erin) is not None  # erin and frank own slots
    assert semantic.score("hello there", key=frank) is not None
    priming = semantic._take(erin, prompt="x", prime=True)
    assert priming is not None
    try:
        assert semantic.score("what time is it", key=frank) is not None, "another person's"
        done = threading.Timer(0.2, semantic._give_back, (priming, None), {"prime": True})
        done.start()
        assert semantic.score("what time is it", key=erin) is not None, "waited for its prime"
    finally:
        done.join()
    assert semantic._primes == 0 and semantic._scores == 0


LONG_LINE = (
    "You said: please turn on the lights in the living room and the kitchen, then play some "
    "quiet music until I fall asleep."
)


def words_tokens(semantic: SemanticSignal, text: str) -> int:
    """Prompt tokens of the person's words alone (what a warm call processes)."""
    return len(semantic._post("/tokenize", {"content": text}, 5000)["tokens"])


def test_each_person_keeps_their_own_prompt_warm(semantic: SemanticSignal) -> None:
    """Twelve people's different agent lines on one slot made nearly every call cold; with a
    slot each, two people's calls interleaved still pay only for their words."""
    alice, bob = object(), object()
    for key, n in ((alice, 1), (bob, 2), (alice, 3), (bob, 4)):
        assert semantic.score(f"play song number {n}", f"{LONG_LINE} {key!r}", key=key) is not None
        if n <= 2:  # a person's first call pays for the agent's line
            assert semantic.last_new_tokens > 25, semantic.last_new_tokens
        else:  # their next one finds it in their slot, though the other called in between
            assert semantic.last_new_tokens <= words_tokens(semantic, f" song number {n}") + 2


def test_a_prime_puts_the_agents_line_in_the_persons_slot(semantic: SemanticSignal) -> None:
    """The agent's new line is read while the person speaks (a prime), so their pause's call
    pays only for their words; the same line is not read twice."""
    carol = object()
    primed = semantic.primed
    assert semantic.prime(f"{LONG_LINE} carol", key=carol) == "primed"
    assert semantic.prime(f"{LONG_LINE} carol", key=carol) == "held", "already in the slot"
    assert semantic.primed == primed + 1
    assert semantic.score("set a timer for", f"{LONG_LINE} carol", key=carol) is not None
    assert semantic.last_new_tokens <= words_tokens(semantic, " a timer for") + 2


def test_what_the_person_said_so_far_can_be_read_ahead_too(semantic: SemanticSignal) -> None:
    """A partial transcript read into the slot while the person speaks: the pause's call reads
    only the words after it."""
    dave = object()
    assert semantic.prime(f"{LONG_LINE} dave", "set a timer for ten", key=dave) == "primed"
    assert semantic.prime(f"{LONG_LINE} dave", "set a timer", key=dave) == "held"
    assert semantic.score("Set a timer for ten minutes.", f"{LONG_LINE} dave", key=dave)
    assert semantic.last_new_tokens <= words_tokens(semantic, " minutes") + 2


def test_no_prime_while_the_calls_come_too_late(semantic: SemanticSignal) -> None:
    """A saturated machine leaves pauses no time for a call: primes then only cost CPU, and are
    not made until calls are made in time again."""
    grace = object()
    try:
        for _ in range(30):
            semantic.attempted(False)
        assert semantic.prime(f"{LONG_LINE} grace", key=grace) == "late"
        for _ in range(30):
            semantic.attempted(True)
        assert semantic.prime(f"{LONG_LINE} grace", key=grace) == "primed"
    finally:
        semantic.made_share = 1.0
