"""``serve --unfinished-wait-ms`` and ``--finished-wait-ms``: from the command line to when a
turn ends.

The command line is parsed as ``serve`` parses it, and the session settings it builds drive a
real :class:`TurnTaker` on synthetic VAD output (no model runs): what is asserted is the silence
at which the turn ended. Values that cannot work are refused by the real command, in one line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.cli import build_parser
from gateway.errors import EXIT_GATEWAY_ERROR
from gateway.proxy.turn_rule import Verdict
from gateway.proxy.turn_taker import EndTurn, StartDecode, TurnTaker
from gateway.server.cli import from_args
from gateway.voice.vad import CHUNK_MS, CHUNK_SAMPLES


def turn_taker(*options: str) -> TurnTaker:
    """The turn-taker a session of ``serve OPTIONS`` gets."""
    settings = from_args(build_parser().parse_args(["serve", *options]))
    return TurnTaker(settings.gateway.session)


def silence_at_end(
    turns: TurnTaker, text: str, prosody: float, semantic: float | None = None
) -> tuple[int, EndTurn]:
    """Speak 800 ms, fall silent; the decode's verdict is ``text`` with ``prosody`` (and the
    semantic signal's ``semantic``, a fake score). Returns the silence (ms) after which the turn
    ended, and how."""
    scores = (
        {"prosody": prosody} if semantic is None else {"prosody": prosody, "semantic": semantic}
    )
    now, silent_ms = 100.0, 0
    decodes: list[StartDecode] = []

    def hear(p: float) -> list:
        nonlocal now
        out = turns.hear(np.full(CHUNK_SAMPLES, p, np.float32), p, now, agent_audible=False)
        now += CHUNK_MS / 1000
        return out

    for _ in range(800 // CHUNK_MS):
        hear(0.9)
    while silent_ms < 5_000:
        out = hear(0.0)
        silent_ms += CHUNK_MS
        for a in out:
            if isinstance(a, StartDecode):
                decodes.append(a)
                out += turns.judged(a.id, Verdict(text, scores), now)
        ends = [a for a in out if isinstance(a, EndTurn)]
        if ends:
            assert decodes, "the turn ended without a verdict"
            return silent_ms, ends[0]
    raise AssertionError("the turn never ended")


def test_the_unfinished_wait_is_how_long_unfinished_words_are_waited_out() -> None:
    default_ms, default = silence_at_end(turn_taker(), "I would like to go to the", 0.2)
    longer_ms, longer = silence_at_end(
        turn_taker("--unfinished-wait-ms", "1500"), "I would like to go to the", 0.2
    )
    assert default.reason == longer.reason == "unfinished"
    assert (default.wait_ms, longer.wait_ms) == (900, 1500)
    assert default_ms < 1000 < 1500 <= longer_ms < 1500 + CHUNK_MS


def test_an_unfinished_wait_beyond_the_rules_bound_raises_the_bound() -> None:
    """A patience of 2 s bounds every turn; an unfinished wait longer than that moves the bound,
    so the option is not silently capped."""
    ms, end = silence_at_end(turn_taker("--unfinished-wait-ms", "3000"), "And then we", 0.2)
    assert end.reason == "unfinished" and end.wait_ms == 3000
    assert 3000 <= ms < 3000 + CHUNK_MS


def test_early_end_is_how_long_a_finished_sentence_waits() -> None:
    default_ms, default = silence_at_end(turn_taker(), "Turn on the lights.", 0.9)
    later_ms, later = silence_at_end(
        turn_taker("--finished-wait-ms", "400"), "Turn on the lights.", 0.9
    )
    assert default.reason == later.reason == "finished"
    assert (default.wait_ms, later.wait_ms) == (200, 400)
    assert default_ms < 400 <= later_ms < 400 + 2 * CHUNK_MS
    # A doubtful voice still waits longer than the finished wait.
    _, doubtful = silence_at_end(turn_taker("--finished-wait-ms", "400"), "Turn on the lights.", 0.2)
    assert doubtful.reason == "doubt" and doubtful.wait_ms == 1500
    # Words the semantic signal is sure of wait the early end in the rule's proportion (192
    # of 200 ms): twice the early end, twice their wait.
    _, sure_default = silence_at_end(turn_taker(), "What are you looking at?", 0.9, semantic=0.5)
    _, sure = silence_at_end(
        turn_taker("--finished-wait-ms", "400"), "What are you looking at?", 0.9, semantic=0.5
    )
    assert sure.reason == sure_default.reason == "semantic finished"
    assert (sure_default.wait_ms, sure.wait_ms) == (192, 384)
    # Sure bare words with a very sure voice wait between the two, never under the early end.
    _, bare = silence_at_end(turn_taker(), "Turn the lights off", 0.99, semantic=0.5)
    _, bare_later = silence_at_end(
        turn_taker("--finished-wait-ms", "600"), "Turn the lights off", 0.99, semantic=0.5
    )
    assert bare.reason == bare_later.reason == "semantic finished"
    assert (bare.wait_ms, bare_later.wait_ms) == (400, 600)


def test_end_silence_is_the_least_wait_for_clearly_unfinished_words() -> None:
    _, default = silence_at_end(turn_taker(), "Can you tell me.", 0.9, semantic=0.001)
    _, longer = silence_at_end(
        turn_taker("--unfinished-wait-ms", "1800"), "Can you tell me.", 0.9, semantic=0.001
    )
    assert default.reason == longer.reason == "semantic unfinished"
    assert (default.wait_ms, longer.wait_ms) == (1500, 1800)


def test_unsure_words_with_a_voice_not_very_sure_wait_the_unfinished_wait() -> None:
    text = "Text Maria that I am running."
    ms, default = silence_at_end(turn_taker(), text, 0.72, semantic=0.0072)
    shorter_ms, shorter = silence_at_end(
        turn_taker("--unfinished-wait-ms", "600"), text, 0.72, semantic=0.0072
    )
    assert default.reason == shorter.reason == "semantic unsure"
    assert (default.wait_ms, shorter.wait_ms) == (900, 600)
    assert 600 <= shorter_ms < 900 <= ms
    # A very sure voice ends it at the finished wait.
    _, sure = silence_at_end(turn_taker(), text, 0.97, semantic=0.0072)
    assert (sure.reason, sure.wait_ms) == ("finished", 200)


def test_no_semantic_ends_turns_on_the_transcript_and_the_voice_alone() -> None:
    """``--no-semantic``: words the signal would call clearly unfinished are not waited for
    (its score, were one given, is not read), and its model is not loaded."""
    _, with_signal = silence_at_end(turn_taker(), "Can you tell me.", 0.9, semantic=0.001)
    silence, without = silence_at_end(
        turn_taker("--no-semantic"), "Can you tell me.", 0.9, semantic=0.001
    )
    assert with_signal.reason == "semantic unfinished" and with_signal.wait_ms == 1500
    assert without.reason == "finished" and silence < 1500
    settings = from_args(build_parser().parse_args(["serve", "--no-semantic"]))
    assert not settings.gateway.session.turn_rule.semantic


def run_serve(*options: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    serve = [sys.executable, "-m", "gateway", "serve", "--allocator", "system", "--port", "0"]
    return subprocess.run(
        [*serve, *options],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--finished-wait-ms", "1000", "--unfinished-wait-ms", "800"], "the finished wait (1000 ms"),
        (["--unfinished-wait-ms", "100"], "the finished wait (200 ms, --finished-wait-ms) is longer"),
        (["--finished-wait-ms", "0"], "--finished-wait-ms 0 is not a silence"),
        (["--unfinished-wait-ms", "60000"], "--unfinished-wait-ms 60000 is not shorter"),
    ],
)
def test_values_that_cannot_work_are_refused_in_one_line(
    tmp_path: Path, options: list[str], said: str
) -> None:
    done = run_serve(*options, cwd=tmp_path)
    assert done.returncode == EXIT_GATEWAY_ERROR, done.stderr
    assert "Traceback" not in done.stderr
    [line] = done.stderr.strip().splitlines()
    assert line.startswith(f"ofp-gateway: {said}"), line
    assert done.stdout == ""  # never said it was ready
