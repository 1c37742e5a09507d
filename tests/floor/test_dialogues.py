"""The dialogue benchmark's set and checks (gateway/testing/dialogues.py), and the turns its
target says must all be right — the time, date and weekday, and the named agent only — run
through talk's classes with the default agents."""

from __future__ import annotations

from datetime import datetime

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.testing import dialogues
from gateway.testing.dialogues import Reply, date, only, says, time_now, weekday

AT = datetime(2026, 11, 27, 17, 5).astimezone()


def test_the_set_is_at_least_40_conversations_over_every_category() -> None:
    assert len(dialogues.CONVERSATIONS) >= 40
    used = {t.category for c in dialogues.CONVERSATIONS for t in c}
    assert used == set(dialogues.CATEGORIES)


@pytest.mark.parametrize(
    ("check", "lines", "right"),
    [
        (time_now(), [("Clock", "It's 5:05 PM.")], True),
        (time_now(), [("Clock", "It's 5:04 PM.")], True),  # the minute may turn
        (time_now(), [("Assistant", "The time is 12:30pm in the UK.")], False),
        (date(), [("Clock", "Today is Friday, November 27, 2026.")], True),
        (date(1), [("Clock", "Today is Friday, November 27, 2026.")], False),
        (weekday(1), [("Clock", "Tomorrow is Saturday, November 28, 2026.")], True),
        (says("Paris"), [("Assistant", "The capital of France is Paris.")], True),
        (says("Ada"), [("Assistant", "I'm not sure what to say.")], False),
        (only("Parrot"), [("Parrot", "You said: hi"), ("Clock", "It's 5:05 PM.")], False),
        (only("Parrot"), [], False),
    ],
)
def test_checks(check, lines, right) -> None:
    assert check(Reply(tuple(lines)), AT) is right


@pytest.mark.slow
async def test_every_time_date_weekday_and_named_turn_is_right() -> None:
    """The target of issue 39 for the turns that need no language model: the conversations made
    only of time, date, weekday and named-agent turns (the assistant is on the floor, as with
    ``serve``, but none of these is its to answer)."""
    wanted = {"time", "date", "weekday", "named"}
    chosen = [
        c
        for c in dialogues.CONVERSATIONS
        if all(t.category in wanted for t in c) and not any("Assistant" in t.text for t in c)
    ]
    assert len(chosen) >= 8
    directory = AgentDirectory(AddressPolicy([]))
    try:
        for conversation in chosen:
            for result in await dialogues.typed(conversation, directory):
                assert result.right, (result.text, result.reply)
    finally:
        await directory.aclose()
