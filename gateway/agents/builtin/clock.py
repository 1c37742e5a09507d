"""Clock: tells the time and the date, in text and in SSML (``say-as`` time and date)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime

from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, builtin_manifest, local_now
from gateway.agents.urls import BUILTIN_SCHEME

_TIME_WORDS = frozenset({"time", "clock", "hour", "hours"})
_DATE_WORDS = frozenset({"date", "day", "today", "weekday"})


class Clock(BuiltinAgent):
    """Answers questions about the time or date; other public talk it leaves alone.

    ``now`` returns the current time as an aware datetime; it is told in that datetime's zone
    (by default this machine's).
    """

    greeting = "Hello, I'm Clock. Ask me the time or the date."

    def __init__(
        self, service_url: str = f"{BUILTIN_SCHEME}clock", *, now: Callable[[], datetime] = local_now
    ) -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                "Clock",
                "Tells you the time and the date.",
                ["time", "clock", "date", "day", "hour"],
                ["Tells the current time of day and today's date."],
            ),
            now=now,
        )

    def answer(self, heard: Heard) -> Answer | None:
        """The time and/or date when asked; a hint when addressed about something else."""
        words = set(re.findall(r"[a-z]+", heard.text.lower()))
        want_time, want_date = bool(words & _TIME_WORDS), bool(words & _DATE_WORDS)
        if not (want_time or want_date):
            return Answer("I can tell you the time or today's date.") if heard.addressed else None
        now = self._now()
        texts: list[str] = []
        ssml: list[str] = []
        if want_time:
            spoken = f"{now.hour % 12 or 12}:{now.minute:02d}"
            meridiem = "AM" if now.hour < 12 else "PM"  # not %p: that follows the locale
            texts.append(f"It's {spoken} {meridiem}.")
            ssml.append(
                f'It\'s <say-as interpret-as="time" format="hms12">'
                f"{spoken}{meridiem.lower()}</say-as>."
            )
        if want_date:
            texts.append(f"Today is {now:%A}, {now:%B} {now.day}, {now.year}.")
            ssml.append(
                f'Today is {now:%A}, <say-as interpret-as="date" format="mdy">'
                f"{now:%m/%d/%Y}</say-as>."
            )
        return Answer(" ".join(texts), f"<speak>{' '.join(ssml)}</speak>")
