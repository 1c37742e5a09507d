"""A listener's read-back (gateway.proxy.overlap.read_back): words that repeat what the agent
just said are feedback; a word of the person's own is not a read-back."""

from __future__ import annotations

import pytest

from gateway.proxy.overlap import READ_BACK_WORDS, feedback_words, read_back

REPLY = (
    "Turn left just past the petrol station and its carpark, and the library is open 9am "
    "till 5pm."
)


@pytest.mark.parametrize(
    "said",
    [
        "Okay, past the petrol station.",
        "Uh-huh, nine till five.",  # the reply's digits, in words
        "Right, the library then.",
        "Yeah, left at the station.",
        "Mm, opens at nine.",  # "opens" of "open"
        "Okay, the petrol station car park.",  # "carpark", a compound written as two
        "Right, left at the library's car park.",
    ],
)
def test_words_the_agent_said_are_read_back(said):
    words = feedback_words(said)
    assert words is not None and read_back(words, REPLY)


@pytest.mark.parametrize(
    "said",
    [
        "Okay, past the fire station.",  # a word of their own: a correction
        "Uh-huh, nine till six.",
        "Yeah, the library's shut today.",
        "Right, that one then.",  # no word with content: nothing repeated
    ],
)
def test_a_word_of_the_persons_own_is_no_read_back(said):
    words = feedback_words(said)
    assert words is not None and not read_back(words, REPLY)


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("Right, nine till five, not bad.", True),  # the listener's judgement of it
        ("Okay, past the petrol station, perfect.", True),
        ("Mm, the library, very handy.", True),
        ("Yeah, not bad.", False),  # nothing repeated: the reader reads it
        ("Okay, nine till five, too late.", False),  # a complaint asks for another
        ("Okay, the fire station, perfect.", False),  # a word of their own still is one
    ],
)
def test_a_read_back_may_end_with_the_listeners_judgement_of_it(said, read):
    words = feedback_words(said)
    assert words is not None and read_back(words, REPLY) is read


def test_nothing_heard_reads_nothing_back():
    words = feedback_words("Okay, past the petrol station.")
    assert words is not None
    assert not read_back(words, None) and not read_back(words, "")


def test_only_the_agents_last_words_are_matched():
    """What the agent said long before is not what the person repeats now."""
    words = feedback_words("Okay, the petrol station.")
    assert words is not None
    long_ago = "the petrol station " + "and then it went on " * (READ_BACK_WORDS // 5 + 1)
    assert read_back(words, "the petrol station and then")
    assert not read_back(words, long_ago)


def test_a_compound_is_one_word_written_as_two_either_way():
    """Both recognisers wrote "tablespoons" as "table spoons" (the fortieth held-out set)."""
    words = feedback_words("Okay, two table spoons of miso.")
    assert words is not None
    assert read_back(words, "whisk together 2 tablespoons of white miso with honey")
    assert not read_back(words, "whisk together 2 tables of white miso with honey")
    joined = feedback_words("Okay, the tablespoons of miso.")
    assert joined is not None and read_back(joined, "two table spoons of miso")


@pytest.mark.parametrize(
    ("said", "reply"),
    [
        ("Oh, wow, seven hundred years.", "The castle was built 700 years ago by monks."),
        ("Okay, 45 minutes then.", "Bake it for forty-five minutes at 180 degrees."),
    ],
)
def test_a_number_is_one_written_in_digits_or_in_words(said, reply):
    words = feedback_words(said)
    assert words is not None and read_back(words, reply)
    assert not read_back(words, reply.replace("7", "8").replace("forty-five", "fifty-five"))
