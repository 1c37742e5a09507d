"""The say-as readers, on strings alone (through a document: tests/render/test_ssml.py)."""

from __future__ import annotations

import pytest

from gateway.render.say_as import (
    READERS,
    say_cardinal,
    say_date,
    say_digits,
    say_ordinal,
    say_telephone,
    say_time,
    spell_out,
)


@pytest.mark.parametrize(
    ("reader", "text", "fmt", "spoken"),
    [
        (spell_out, "A.B-1", "", "ay, bee, one"),
        (say_digits, "4 0-7", "", "four zero seven"),
        (say_cardinal, "1,234", "", "one thousand, two hundred and thirty-four"),
        (say_cardinal, "-2.5", "", "minus two point five"),
        (say_cardinal, "lots", "", None),
        (say_ordinal, "22nd", "", "twenty-second"),
        (say_ordinal, "2.5", "", None),
        (say_date, "2025-03-14", "", "March fourteenth, twenty twenty-five"),
        (say_date, "03/14/2025", "mdy", "March fourteenth, twenty twenty-five"),
        (say_date, "14.03.2025", "dmy", "March fourteenth, twenty twenty-five"),
        (say_date, "20250314", "yyyymmdd", "March fourteenth, twenty twenty-five"),
        (say_date, "12/25", "md", "December twenty-fifth"),
        (say_date, "1999", "y", "nineteen ninety-nine"),
        (say_date, "13/40/2025", "mdy", None),
        (say_time, "14:30", "", "two thirty pee em"),
        (say_time, "9:05 am", "", "nine oh five ay em"),
        (say_time, "7", "", "seven o'clock"),
        (say_time, "12pm", "", "twelve pee em"),
        (say_time, "0:15", "", "twelve fifteen ay em"),
        (say_time, "09:00", "hms24", "oh nine hundred"),
        (say_time, "25:00", "", None),
        (
            say_telephone,
            "+1 (555) 010-0199",
            "",
            "plus one, five five five, zero one zero, zero one nine nine",
        ),
    ],
)
def test_say_as_readers(reader, text, fmt, spoken):
    assert reader(text, fmt) == spoken


def test_every_reader_is_named_by_its_interpret_as():
    assert READERS["characters"] is READERS["spell-out"] is spell_out
    assert READERS["number"] is READERS["cardinal"] is say_cardinal
    assert {READERS[k] for k in ("digits", "ordinal", "date", "time", "telephone")} == {
        say_digits,
        say_ordinal,
        say_date,
        say_time,
        say_telephone,
    }
