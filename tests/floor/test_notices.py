"""The floor's notices (gateway/floor/notices.py): each typed event has its words, its reason
token and the agent it is about — the page and ``talk`` show exactly these (sans I/O)."""

from __future__ import annotations

import typing

import pytest

from gateway.agents.policy import MAX_URL_CHARS
from gateway.floor import notices
from gateway.floor.notices import Notice, words

#: One of each event, with what the person is told and the notice's reason token.
CASES: list[tuple[notices.NoticeEvent, str, str]] = [
    (
        notices.AgentSlow("tag:p", "Parrot", "no answer in 10 s"),
        "Parrot is slow to answer (no answer in 10 s); it stays for now.",
        "@slow",
    ),
    (
        notices.AgentRemoved("tag:p", "Parrot", "x", "@timedOut", timed_out=True),
        "Parrot did not answer in time and has left the conversation.",
        "@timedOut",
    ),
    (
        notices.AgentRemoved("tag:p", "Parrot", "HTTP 500", "@error", timed_out=False),
        "Parrot could not be reached and has left the conversation: HTTP 500",
        "@error",
    ),
    (
        notices.AgentFailed("tag:p", "Parrot", "HTTP 500", "@error"),
        "Parrot had a problem answering (HTTP 500).",
        "@error",
    ),
    (notices.Waiting("tag:floor"), "One moment\u2026", "@wait"),
    (
        notices.Waiting("tag:p", ("Parrot",)),
        "One moment: Parrot is taking longer than usual to answer.",
        "@wait",
    ),
    (
        notices.Waiting("tag:p", ("Parrot", "Clock", "Echo")),
        "One moment: Parrot, Clock and Echo are taking longer than usual to answer.",
        "@wait",
    ),
    (
        notices.HandedOver("tag:c", "Parrot", "Clock", passed=True),
        "Parrot passed this to Clock.",
        "@handover",
    ),
    (
        notices.HandedOver("tag:c", "Parrot", "Clock", passed=False),
        "Parrot is not answering; Clock took it.",
        "@handover",
    ),
    (
        notices.ChatterStopped("tag:p", 2),
        "The agents kept answering each other; the floor stopped them after 2 exchanges. "
        "Say something to go on.",
        "@chatter",
    ),
    (
        notices.InviteTooMany("tag:p", 32, "http://127.0.0.1:9/a"),
        "The conversation already has 32 agents, the most it takes, so http://127.0.0.1:9/a "
        "was not invited.",
        "@error",
    ),
    (
        notices.ConvenerAbsent("http://127.0.0.1:9/c"),
        "The convener http://127.0.0.1:9/c did not join; the floor is the convener.",
        "@unavailable",
    ),
    (
        notices.ConvenerSilent("tag:c", "Chair"),
        "The convener Chair did not answer; the floor carries on as the convener.",
        "@error",
    ),
    (
        notices.ConvenerGone("tag:c"),
        "There is no convener any more; the floor keeps order itself (the minimal convener).",
        "@unavailable",
    ),
    (
        notices.PersonProtected("tag:r", "Rogue", uninvite=True, why="@brokenPolicy"),
        "Rogue tried to remove you from the conversation (@brokenPolicy); the floor did not "
        "let it.",
        "@refused",
    ),
    (
        notices.PersonProtected("tag:r", "Rogue", uninvite=False, why=""),
        "Rogue tried to take the floor from you; the floor did not let it.",
        "@refused",
    ),
]


@pytest.mark.parametrize(("event", "text", "reason"), CASES)
def test_each_event_has_its_words_reason_and_agent(
    event: notices.NoticeEvent, text: str, reason: str
) -> None:
    notice = Notice.of(event)
    assert (notice.text, notice.reason, notice.agent) == (text, reason, event.agent)
    assert notice.event == event
    assert words(event) == text


def test_every_event_type_has_a_case() -> None:
    """A new event without words would reach the page as None: every kind is covered above."""
    kinds = set(typing.get_args(notices.NoticeEvent))
    assert kinds == {type(e) for e, _, _ in CASES} | {notices.InviteTooLong}


def test_a_long_address_is_quoted_short_with_its_length() -> None:
    address = "http://127.0.0.1:9/" + "a" * 5000
    text = words(notices.InviteTooLong("tag:p", "Parrot", address))
    assert text.startswith(f"Parrot invited an agent at an address of {len(address)} characters (")
    assert f"addresses are at most {MAX_URL_CHARS} characters" in text
    assert len(text) < 600  # the address itself is clipped, not echoed
