"""Where the turn-taking benchmark puts a mid-sentence pause (gateway/testing/bench_turns.py):
between the two parts' words, as the synthesiser says them — not in the silent closure of the
dangling word's first consonant, which put "to" after the pause in "the report | to everyone".

Real voices (piper with its phoneme alignments, espeak-ng's word events) and real Whisper; the
sentences are clear ones, and each check is on the words, not on sample counts."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE
from gateway.testing import bench_turns
from gateway.testing.speech import espeak_split, espeak_words
from gateway.testing.turn_sets import TurnSet
from gateway.voice.stt import Transcriber
from gateway.voice.words import words

#: "to" after a word ending in a stop: the closure of its "t" is the quietest spot near the
#: end of the first part, where the benchmark used to put the pause.
FIRST, REST = "Could you send the report to", "everyone on the team?"


@pytest.fixture(scope="module")
def transcriber() -> Transcriber:
    return Transcriber()


def _heard(transcriber: Transcriber, pcm: np.ndarray) -> list[str]:
    text = asyncio.run(transcriber.transcribe(pcm.astype(np.float32) / 32768)).text
    return words(text)


def test_espeak_word_events_say_where_each_word_starts_in_the_commands_audio():
    text = f"{FIRST} {REST}"
    pcm, starts = espeak_words(text, voice="en-us")
    # Starts at words' first characters (espeak-ng says "on the" as one word), in order,
    # and one where the second part begins.
    firsts = {i for i, c in enumerate(text) if c != " " and (i == 0 or text[i - 1] == " ")}
    assert set(starts) <= firsts and len(starts) >= len(firsts) - 2
    assert len(FIRST) + 1 in starts
    positions = [starts[i] for i in sorted(starts)]
    assert positions == sorted(positions) and 0 <= positions[0] < positions[-1] < len(pcm)


def test_an_unknown_espeak_voice_is_refused_by_name():
    with pytest.raises(ValueError, match="no voice 'no-such-voice'"):
        espeak_words("Hello there.", voice="no-such-voice")


@pytest.mark.parametrize("speaker", ["piper:1.0:0.667", "espeak:en-us"])
def test_a_paused_sentence_is_cut_between_its_two_parts(transcriber, speaker):
    clips = bench_turns.make_turn_set(
        TurnSet("one", paused=((FIRST, REST),), complete=(), voices=(speaker,))
    )
    assert [c.pause_ms for c in clips] == list(bench_turns.PAUSES_MS)
    clip = clips[-1]
    gap = SAMPLE_RATE * clip.pause_ms // 1000
    assert not clip.pcm[clip.gap_at : clip.gap_at + gap].any()  # the pause is silence
    after = _heard(transcriber, clip.pcm[clip.gap_at + gap :])
    # What follows the pause is the second part, from its first word: the dangling "to" is
    # before the pause, where the person would have said it.
    assert after[:1] == ["everyone"], after
    before = _heard(transcriber, clip.pcm[: clip.gap_at])
    assert "report" in before, before


def test_the_pause_goes_in_a_closure_rather_than_after_the_burst():
    # A stop's closure is silent: from a start the synthesiser gives up to ~40 ms late, the
    # cut moves back into the quiet before the burst, and never further than the window.
    burst = np.concatenate(
        [np.full(800, 3000, np.int16), np.zeros(480, np.int16), np.full(1600, 3000, np.int16)]
    )
    at = 800 + 480 + 320  # 20 ms into the loud part after the 30 ms closure
    cut = bench_turns.quietest_near(burst, at)
    assert 800 <= cut <= 800 + 480
    loud = np.full(4000, 3000, np.int16)
    loud[100:260] = 0  # a quiet spot outside the 60 ms window is not taken
    assert abs(bench_turns.quietest_near(loud, 3000) - 3000) <= SAMPLE_RATE * 60 // 1000


def test_where_espeak_says_two_words_as_one_the_phonemes_place_the_pause(transcriber):
    # espeak-ng says "in the" as one word: "the" has no word event of its own.
    first, rest = "Please turn on the heating in", "the spare bedroom."
    starts = espeak_words(f"{first} {rest}", voice="en-us")[1]
    assert len(first) + 1 not in starts
    pcm, at = espeak_split(first, rest, voice="en-us")
    assert starts[len(first) - 2] < at < starts[len(first) + 5]  # after "in", before "spare"
    # "in" before the pause, "the" after it (Whisper hears an abrupt "the" as "a").
    before, after = _heard(transcriber, pcm[:at]), _heard(transcriber, pcm[at:])
    assert before[-1:] == ["in"], before
    assert len(after) >= 2 and after[0] != "in" and after[1] == "spare", after


def test_the_turn_sets_share_no_sentence_and_name_voices_that_exist():
    """A set reported on must hold sentences nothing was chosen on: none may repeat another
    set's, and each of its espeak-ng voices must be one espeak-ng has (an unknown name is
    silently said by another voice)."""
    from gateway.testing.turn_sets import SETS

    owner: dict[str, str] = {}
    for turns in SETS.values():
        for text in [f"{a} {b}" for a, b in turns.paused] + list(turns.complete):
            key = " ".join(words(text))
            assert key not in owner, f"{text!r} is in both {owner[key]} and {turns.name}"
            owner[key] = turns.name
        for voice in turns.voices:
            kind, *args = voice.split(":")
            assert kind in ("piper", "espeak"), voice
            if kind == "espeak":
                espeak_words("Hello.", voice=args[0])  # raises for a voice it does not have
