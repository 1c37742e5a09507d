"""Hand-overs (gateway/floor/handover.py, sans I/O): the person's utterance goes on to the next
agent placed for it when its addressee does not answer it; tests/floor/test_routing_served.py
drives the same through ``serve``."""

from __future__ import annotations

from gateway.floor import Delivery
from gateway.floor.handover import HandOver
from gateway.floor.notices import HandedOver
from gateway.ofp import Identification

from .helpers import env, ev, ident

ME = "tag:me"
A, B, C = ident("a"), ident("b"), ident("c")
HERE = {i.speaker_uri: i for i in (A, B, C)}


def _said(to: Identification) -> Delivery:
    utterance = ev("utterance", to=to.speaker_uri, speaker=ME, text="what time is it")
    return Delivery(to, env(ME, utterance), True)


def _handover(d: Delivery, then: list[str]) -> HandOver:
    h = HandOver(ME)
    h.person_said(d.envelope.events, then)
    return h


def test_an_unanswered_utterance_goes_to_the_next_agent_alone() -> None:
    d = _said(A)
    h = _handover(d, [B.speaker_uri, C.speaker_uri])
    passed = h.delivered(d, None, HERE.get)
    assert passed is not None
    assert passed.delivery.recipient == B
    (event,) = passed.delivery.envelope.events
    assert event.to is not None and event.to.speaker_uri == B.speaker_uri
    assert event.dialog_event == d.envelope.events[0].dialog_event
    assert passed.notice == HandedOver(B.speaker_uri, A.display_name, B.display_name, False)
    # B does not answer either: on to C, then no one is left.
    passed = h.delivered(passed.delivery, env(B.speaker_uri), HERE.get)
    assert passed is not None and passed.delivery.recipient == C
    assert passed.notice.passed  # B answered, without an utterance: it passed it on
    assert h.delivered(passed.delivery, None, HERE.get) is None


def test_an_answer_ends_it() -> None:
    d = _said(A)
    h = _handover(d, [B.speaker_uri])
    assert (
        h.delivered(d, env(A.speaker_uri, ev("utterance", speaker=A.speaker_uri)), HERE.get) is None
    )
    assert h.delivered(d, None, HERE.get) is None  # answered already: nothing pending


def test_agents_gone_or_the_addressee_itself_are_skipped() -> None:
    d = _said(A)
    h = _handover(d, ["tag:gone", A.speaker_uri, C.speaker_uri])
    passed = h.delivered(d, None, HERE.get)
    assert passed is not None and passed.delivery.recipient == C


def test_only_the_persons_one_addressed_utterance_is_passed_on() -> None:
    d = _said(A)
    assert _handover(d, []).delivered(d, None, HERE.get) is None  # nobody placed after it
    h = _handover(d, [B.speaker_uri])
    other = Delivery(A, env(B.speaker_uri, ev("utterance", to=A.speaker_uri)), False)
    assert h.delivered(other, None, HERE.get) is None  # not the person's
    unaddressed = Delivery(A, env(ME, ev("utterance", speaker=ME)), False)
    h2 = HandOver(ME)
    h2.person_said(unaddressed.envelope.events, [B.speaker_uri])
    assert h2.delivered(unaddressed, None, HERE.get) is None  # no ``to``: not passed on
