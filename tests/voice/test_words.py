"""The one word splitter shared by speech recognition, wake phrases and the session."""

from __future__ import annotations

from gateway.proxy.sentences import looks_final
from gateway.voice.wake import phrase_words
from gateway.voice.whisper_checks import repeats_itself
from gateway.voice.words import words


def test_lower_case_words_with_apostrophes_and_digits_punctuation_dropped() -> None:
    assert words("Don't stop, Floor! Call 911…") == ["don't", "stop", "floor", "call", "911"]
    assert words("Café — déjà vu?") == ["café", "déjà", "vu"]
    assert words(" .,!? ") == []


def test_its_users_agree_on_what_a_word_is() -> None:
    assert phrase_words("Hey, Floor's") == ["hey", "floors"]  # wake phrases drop apostrophes
    assert repeats_itself("How far is the moon? How far is")
    assert not repeats_itself("How far is the moon?")
    assert looks_final("Turn it off.") and not looks_final("Turn it and.")
