"""Clock: tells the time and the date, in text and in SSML (``say-as`` time and date).

It tells them where the person is: in the UTC offset of the utterance's ``span.startTime`` when
it has a numeric one (the gateway writes the person's: the page's time zone, or the machine's
for ``talk``), else in this machine's zone. What it cannot answer it leaves to the floor when other agents are here (no
utterance: the floor passes the request on, docs/floor.md); alone, it says what it can do.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo

from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, builtin_manifest, local_now
from gateway.agents.urls import BUILTIN_SCHEME

#: Words that ask the time. Not "hour": "how many minutes are in two hours?" is arithmetic.
_TIME_WORDS = frozenset({"time", "clock"})
_DATE_WORDS = frozenset({"date", "today", "weekday", "tomorrow", "yesterday"})
#: "day" asks the date only as "what day" / "which day" ("how was your day?" does not).
_WHICH_DAY = re.compile(r"\b(what|which) day\b")
#: Questions about a span of time, not the time now ("how long", "how many hours").
_NOT_NOW = re.compile(r"\bhow (many|much|long)\b|\b(spare|free|waste|half) time\b")


def person_offset(start_time: str | None) -> tzinfo | None:
    """The person's UTC offset, from an utterance's ``startTime`` written with a numeric offset
    (``…+01:00``, RFC 3339). ``Z`` says nothing of where the person is (hosts write UTC by
    default), so it gives None, as does a time that does not parse."""
    if not start_time or start_time.endswith(("Z", "z")):
        return None
    try:
        return datetime.fromisoformat(start_time).tzinfo
    except ValueError:
        return None


def person_now(heard: Heard, now: datetime) -> datetime:
    """``now`` in the person's zone (:func:`person_offset`), else in ``now``'s own zone."""
    zone = person_offset(heard.dialog_event.span.start_time)
    return now if zone is None else now.astimezone(zone)


def _others_here(heard: Heard, me: str) -> bool:
    """Whether an agent other than this one is on the floor (someone to pass the request to)."""
    return any(
        c.identification.speaker_uri != me and (c.identification.role or "").lower() != "user"
        for c in heard.envelope.conversation.conversants or ()
    )


class Clock(BuiltinAgent):
    """Answers questions about the time or date; other public talk it leaves alone.

    ``now`` returns the current time as an aware datetime; it is told in the person's zone (the
    utterance's offset), else in that datetime's zone (by default this machine's).
    """

    greeting = "Hello, I'm Clock. Ask me the time or the date."

    def __init__(
        self,
        service_url: str = f"{BUILTIN_SCHEME}clock",
        *,
        now: Callable[[], datetime] = local_now,
    ) -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                "Clock",
                "Tells you the time and the date.",
                ["time", "clock", "date", "day", "today"],
                ["Tells the current time of day and today's date."],
            ),
            now=now,
        )

    def answer(self, heard: Heard) -> Answer | None:
        """The time and/or date when asked. Anything else: nothing when another agent is here
        and the person did not name the clock (the floor passes it on), else a hint."""
        text = heard.text.lower()
        words = set(re.findall(r"[a-z]+", text))
        asks_span = bool(_NOT_NOW.search(text))
        want_time = bool(words & _TIME_WORDS) and not asks_span
        want_date = bool(words & _DATE_WORDS or _WHICH_DAY.search(text)) and not asks_span
        if not (want_time or want_date):
            named = "clock" in words
            if heard.addressed and (named or not _others_here(heard, self.speaker_uri)):
                return Answer("I can tell you the time or today's date.")
            return None
        now = person_now(heard, self._now())
        day = "Today"
        if "tomorrow" in words:
            now, day = now + timedelta(days=1), "Tomorrow"
            want_time = False
        elif "yesterday" in words:
            now, day = now - timedelta(days=1), "Yesterday"
            want_time = False
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
        if want_date or day != "Today":
            verb = "was" if day == "Yesterday" else "is"
            texts.append(f"{day} {verb} {now:%A}, {now:%B} {now.day}, {now.year}.")
            ssml.append(
                f'{day} {verb} {now:%A}, <say-as interpret-as="date" format="mdy">'
                f"{now:%m/%d/%Y}</say-as>."
            )
        return Answer(" ".join(texts), f"<speak>{' '.join(ssml)}</speak>")
