"""Whether the person is kept waiting, and on whom (gateway/floor/waiting.py, sans I/O);
tests/floor/test_host_faults.py checks "One moment…" through the host with a hung agent."""

from __future__ import annotations

from gateway.floor.notices import Waiting
from gateway.floor.waiting import Patience

from .helpers import MANAGER, ident

A, B = ident("a"), ident("b")


def test_the_agents_still_handling_are_named_first_first_each_once() -> None:
    p = Patience(MANAGER.speaker_uri)
    p.person_spoke()
    p.handling(1, A)
    p.handling(2, B)
    p.handling(3, A)  # a second envelope to A in the same turn
    assert p.notice(pending=True) == Waiting(A.speaker_uri, (A.display_name, B.display_name))
    p.handled(1)
    p.handled(3)
    assert p.notice(pending=True) == Waiting(B.speaker_uri, (B.display_name,))


def test_named_even_when_another_agent_has_answered() -> None:
    p = Patience(MANAGER.speaker_uri)
    p.person_spoke()
    p.handling(1, A)
    p.answer_reached()
    assert p.notice(pending=True) == Waiting(A.speaker_uri, (A.display_name,))


def test_with_no_one_known_a_bare_one_moment_while_deliveries_are_pending() -> None:
    p = Patience(MANAGER.speaker_uri)
    p.person_spoke()
    assert p.notice(pending=True) == Waiting(MANAGER.speaker_uri)
    assert p.notice(pending=False) is None  # nothing pending: nobody is kept waiting
    p.answer_reached()
    assert p.notice(pending=True) is None  # answered
    p.person_spoke()
    assert p.notice(pending=True) == Waiting(MANAGER.speaker_uri)  # a new turn: not yet


def test_an_answer_that_began_to_stream_is_not_slow() -> None:
    p = Patience(MANAGER.speaker_uri)
    p.person_spoke()
    p.handling(1, A)
    p.answer_began(A.speaker_uri)
    assert p.answering == []
    assert p.notice(pending=True) is None
