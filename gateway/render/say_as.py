"""SSML's ``say-as``: numbers, dates, times, telephone numbers and letters read aloud.

Each reader takes an element's text and its ``format`` and gives the words to speak, or None
when it cannot read the text (:mod:`gateway.render.ssml` then speaks the text as it is);
:data:`READERS` names them by ``interpret-as``.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation

from num2words import num2words

_LETTERS = {
    "a": "ay", "b": "bee", "c": "see", "d": "dee", "e": "ee", "f": "eff", "g": "gee",
    "h": "aitch", "i": "eye", "j": "jay", "k": "kay", "l": "ell", "m": "em", "n": "en",
    "o": "oh", "p": "pee", "q": "cue", "r": "ar", "s": "ess", "t": "tee", "u": "you",
    "v": "vee", "w": "double-you", "x": "ex", "y": "why", "z": "zee",
}  # fmt: skip
_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_MONTHS = [datetime.date(2000, m, 1).strftime("%B") for m in range(1, 13)]


def spell_out(text: str, _fmt: str = "") -> str:
    """Letter by letter: ``"ABC"`` → ``"ay, bee, see"``."""
    return ", ".join(_char(c) for c in text if c.isalnum())


def say_digits(text: str, _fmt: str = "") -> str:
    """Digit by digit: ``"123"`` → ``"one two three"``."""
    return " ".join(_char(c) for c in text if c.isalnum())


def _char(c: str) -> str:
    return _DIGITS[int(c)] if c in "0123456789" else _LETTERS.get(c.lower(), c)


def _number(text: str) -> Decimal | None:
    cleaned = re.sub(r"[,_\s]", "", text)
    try:
        return Decimal(cleaned) if re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", cleaned) else None
    except InvalidOperation:
        return None


def say_cardinal(text: str, _fmt: str = "") -> str | None:
    """``"1,234"`` → ``"one thousand, two hundred and thirty-four"``."""
    n = _number(text)
    return None if n is None else num2words(n if n % 1 else int(n))


def say_ordinal(text: str, _fmt: str = "") -> str | None:
    """``"3"`` or ``"3rd"`` → ``"third"``."""
    n = _number(re.sub(r"(st|nd|rd|th)$", "", text.strip(), flags=re.IGNORECASE))
    return None if n is None or n % 1 or n < 0 else num2words(int(n), to="ordinal")


def say_date(text: str, fmt: str) -> str | None:
    """A date in the order ``fmt`` gives (default ``ymd`` for ISO-looking input, else ``mdy``):
    ``"2025-03-14"`` → ``"March fourteenth, twenty twenty-five"``."""
    parts = re.findall(r"\d+|[A-Za-z]+", text)
    order = "".join(dict.fromkeys(c for c in fmt if c in "ymd"))
    if len(parts) == 1 and parts[0].isdigit() and len(fmt) == len(parts[0]):
        # A pattern such as yyyymmdd over an undivided run of digits: cut it by the pattern.
        widths = [len(m.group()) for m in re.finditer(r"y+|m+|d+", fmt)]
        digits_, parts = parts[0], []
        for w in widths:
            parts.append(digits_[:w])
            digits_ = digits_[w:]
    if not order:
        order = "ymd" if parts and len(parts[0]) == 4 and parts[0].isdigit() else "mdy"
    if len(parts) != len(order):
        return None
    fields = dict(zip(order, parts, strict=True))
    words = []
    if "m" in fields:
        m = fields["m"]
        if m.isdigit():
            if not 1 <= int(m) <= 12:
                return None
            m = _MONTHS[int(m) - 1]
        words.append(m)
    if "d" in fields:
        if not fields["d"].isdigit() or not 1 <= int(fields["d"]) <= 31:
            return None
        words.append(num2words(int(fields["d"]), to="ordinal"))
    if "y" in fields:
        if not fields["y"].isdigit():
            return None
        year = num2words(int(fields["y"]), to="year")
        words.append(f", {year}" if words else year)
    return " ".join(words).replace(" ,", ",")


def say_time(text: str, fmt: str) -> str | None:
    """``"14:30"`` → ``"two thirty pee em"``; with ``fmt="hms24"`` → ``"fourteen thirty"``."""
    m = re.fullmatch(
        r"(\d{1,2})(?:[:.h](\d{2}))?(?::\d{2})?\s*(?:([ap])\.?\s*m\.?)?", text.strip(), re.I
    )
    if not m:
        return None
    hour, minute, ampm = int(m.group(1)), int(m.group(2) or 0), (m.group(3) or "").lower()
    if hour > 23 or minute > 59 or (ampm and not 1 <= hour <= 12):
        return None
    if fmt == "hms24" and not ampm:
        head = num2words(hour) if hour >= 10 else f"oh {num2words(hour)}" if hour else "zero"
        return f"{head} {_minutes(minute) if minute else 'hundred'}"
    if not ampm and (hour >= 12 or hour == 0):
        ampm = "p" if hour >= 12 else "a"
    words = [num2words(hour % 12 or 12)]
    if minute:
        words.append(_minutes(minute))
    elif not ampm:
        words.append("o'clock")
    if ampm:
        words += [_LETTERS[ampm], "em"]
    return " ".join(words)


def _minutes(minute: int) -> str:
    return num2words(minute) if minute >= 10 else f"oh {num2words(minute)}"


def say_telephone(text: str, _fmt: str = "") -> str | None:
    """Digit by digit, with a pause between groups: ``"+1 555-0100"`` →
    ``"plus one, five five five, zero one zero zero"``."""
    groups = re.findall(r"\+|[0-9A-Za-z]+", text)
    if not groups:
        return None
    spoken = ["plus" if g == "+" else say_digits(g) for g in groups]
    return ", ".join(spoken).replace("plus,", "plus")


#: The reader of each ``interpret-as`` value (and of ``format`` where it names one).
READERS: dict[str, Callable[[str, str], str | None]] = {
    "characters": spell_out,
    "spell-out": spell_out,
    "letters": spell_out,
    "verbatim": spell_out,
    "digits": say_digits,
    "cardinal": say_cardinal,
    "number": say_cardinal,
    "ordinal": say_ordinal,
    "date": say_date,
    "time": say_time,
    "telephone": say_telephone,
}
