"""Whisper's failures recognised in its output: loops, restarts, a fitted window stopped early."""

from __future__ import annotations

from gateway.voice.stt import Word
from gateway.voice.whisper_checks import needs_full_window, repeats_itself, restart_at


def test_guard_rules():
    words = (Word("hello", 0.1, 0.5, 0.9), Word("there", 0.6, 1.0, 0.9))
    ok = {"speech_end_s": 1.2, "tolerance_s": 0.8}
    assert not needs_full_window("hello there", words, **ok)
    assert needs_full_window("hello there", words, speech_end_s=3.0, tolerance_s=0.8)
    assert needs_full_window("", (), **ok)
    assert not needs_full_window("", (), speech_end_s=0.5, tolerance_s=0.8)
    assert needs_full_window("to the airport? How long does it take to the airport", words, **ok)
    # Whisper stopped at "the" and stretched it over the rest of the speech (found in a test).
    dragged = (Word("go", 0.8, 0.94, 0.9), Word("to", 0.94, 1.4, 0.9), Word("the", 1.4, 3.5, 0.4))
    assert needs_full_window("go to the", dragged, speech_end_s=3.39, tolerance_s=0.8)
    drawn_out = (Word("so", 0.2, 1.1, 0.9), Word("long", 1.1, 2.2, 0.9))  # 1.1 s words exist
    assert not needs_full_window("so long", drawn_out, speech_end_s=2.2, tolerance_s=0.8)


def test_restart_at_cuts_whisper_starting_over_in_the_silence():
    said = [
        "Tell",
        "me",
        "a",
        "fun",
        "fact",
        "and",
        "I'll",
        "talk",
        "to",
        "you",
        "soon.",
        "Tell",
        "me",
    ]
    assert restart_at(said) == 11 and said[:11][-1] == "soon."
    assert restart_at(["No.", "No."]) == 1
    assert restart_at(["Stop!", "Stop!", "Stop!"]) == 1
    # Whisper's word split keeps punctuation as its own piece at times.
    assert restart_at(["Yes", ".", "Yes", "."]) == 2


def test_restart_at_keeps_new_sentences_and_unpunctuated_repeats():
    assert restart_at(["Call", "mom.", "Call", "dad."]) is None
    assert restart_at(["Yes,", "yes."]) is None
    assert restart_at(["Turn", "on", "the", "light"]) is None
    assert restart_at(["Stop.", "Please", "stop."]) is None
    assert restart_at([]) is None


def test_repeats_itself():
    assert repeats_itself("How long does it take. How long does it take")
    assert not repeats_itself("The castle was old and the cats were young.")
