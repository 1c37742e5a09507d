"""Streamed model text to speakable sentences."""

from __future__ import annotations

from gateway.llm.speakable import SentenceSplitter, speakable


def split(text: str, step: int = 3) -> list[str]:
    s = SentenceSplitter()
    out: list[str] = []
    for i in range(0, len(text), step):
        out += s.feed(text[i : i + step])
    rest = s.flush()
    return [*out, rest] if rest else out


def test_sentences_come_out_as_soon_as_they_are_complete() -> None:
    s = SentenceSplitter()
    assert s.feed("Lisbon is hilly and warm") == []
    assert s.feed(" in summer. Bring good") == ["Lisbon is hilly and warm in summer."]
    assert s.feed(" shoes! And") == ["Bring good shoes!"]
    assert s.flush() == "And"


def test_abbreviations_numbers_and_short_pieces_do_not_end_a_sentence() -> None:
    got = split("Dr. Smith paid 3.5 euros, e.g. for coffee. Yes. Then he left the café.")
    assert got == ["Dr. Smith paid 3.5 euros, e.g. for coffee.", "Yes. Then he left the café."]


def test_list_lines_and_code_blocks() -> None:
    got = split("Pack:\n- shoes\n- a hat\n```\nx = 1. y = 2.\n```\nDone now.")
    assert got[:3] == ["Pack:", "- shoes", "- a hat"]
    assert any("x = 1. y = 2." in piece for piece in got)  # never cut inside the code


def test_markup_becomes_plain_words() -> None:
    assert speakable("**Bold** and _soft_ `code` [a link](http://x.test)") == (
        "Bold and soft code a link"
    )
    assert speakable("## Heading\n1. first\n2) second\n* third") == (
        "Heading. first. second. third"
    )
    assert speakable("See https://example.test/page for more.") == "See a link for more."
    assert speakable("<speak>hi <break time='1s'/></speak>") == "hi"
    assert speakable("```python\nprint(1)\n```") == "(some code, shown in the text)"
    assert speakable("   ") == ""


def test_a_long_first_sentence_is_sent_at_its_first_clause_and_only_the_first() -> None:
    text = (
        "A good idea would be to pack light clothes, comfortable shoes and a hat. "
        "Lisbon is hilly, so wear good shoes, and carry water."
    )
    got = split(text)
    assert got[0] == "A good idea would be to pack light clothes,"  # heard while it writes on
    assert got[1:] == [
        "comfortable shoes and a hat.",
        "Lisbon is hilly, so wear good shoes, and carry water.",
    ]
    assert split("Yes, sure. Here it is.") == ["Yes, sure. Here it is."]  # too short to cut
