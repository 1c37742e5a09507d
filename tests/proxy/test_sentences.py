"""English sentence heuristics (gateway/proxy/sentences.py): whether Whisper's transcript reads
as a finished sentence, on clear cases."""

from __future__ import annotations

import pytest

from gateway.proxy.sentences import looks_final, marked_final, said_words, unpunctuated_final


@pytest.mark.parametrize(
    ("text", "final"),
    [
        ("Turn on the lights.", True),
        ("Is it raining?", True),
        ('He said "stop."', True),  # a closing quote after the mark
        ("Turn on the lights in the", False),  # no mark
        ("Book a table for.", False),  # a sentence does not end on "for"
        ("Well...", False),
        ("Well…", False),
        ("", False),
    ],
)
def test_a_finished_sentence_has_its_final_mark_and_a_last_word_that_can_end_one(text, final):
    assert looks_final(text) is final


def test_one_word_is_final_only_when_one_word_is_enough():
    assert looks_final("Yes.") and not looks_final("Yes.", min_words=2)
    assert not looks_final("No. No.", min_words=2), "one word heard twice is one word"
    assert said_words("No. No.") == ["no"] and said_words("Go home.") == ["go", "home"]


def test_words_missing_only_their_final_mark():
    assert unpunctuated_final("Open the garage door")
    assert not unpunctuated_final("Open the garage door.")  # it has its mark: looks_final's
    assert not unpunctuated_final("Turn on the lights,")
    assert not unpunctuated_final("Book a table for")
    assert not unpunctuated_final("Open", min_words=2)


def test_a_final_mark_whatever_the_last_word():
    assert marked_final("What are you looking at?", min_words=2)
    assert not looks_final("What are you looking at?"), "the word list alone would wait"
    assert not marked_final("Well...", min_words=1)
    assert not marked_final("Yes.", min_words=2)
