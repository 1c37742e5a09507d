"""Agents do not chatter (gateway/floor/exchanges.py, sans I/O): the bound on agents answering
agents in one person turn, and a reply without ``to`` addressed to whoever it answers (§2.1).
tests/floor/test_many_agents.py drives the same through the host with chattering agents."""

from __future__ import annotations

from gateway.floor.exchanges import Admission, Exchanges, answering_speaker
from gateway.ofp import EventType

from .helpers import MANAGER, env, ev, ident


def test_replies_within_the_exchange_bound_are_taken() -> None:
    x = Exchanges(max_envelopes=64, max_exchanges=2)
    assert [x.admit(d) for d in (1, 2, 3)] == [Admission.TAKE] * 3


def test_past_the_exchange_bound_dropped_and_the_person_told_once() -> None:
    x = Exchanges(max_envelopes=64, max_exchanges=2)
    assert x.admit(4) is Admission.DROP_AND_TELL
    assert x.admit(5) is Admission.DROP
    assert x.admit(1) is Admission.TAKE  # a reply to the person is still taken
    x.person_spoke()
    assert x.admit(4) is Admission.DROP_AND_TELL  # a new turn: told again


def test_no_exchanges_at_all_takes_only_replies_to_the_person() -> None:
    x = Exchanges(max_envelopes=64, max_exchanges=0)
    assert x.admit(1) is Admission.TAKE
    assert x.admit(2) is Admission.DROP_AND_TELL


def test_the_envelopes_of_one_turn_are_bounded_in_all() -> None:
    x = Exchanges(max_envelopes=3, max_exchanges=2)
    assert [x.admit(1) for _ in range(5)] == [Admission.TAKE] * 3 + [
        Admission.DROP_AND_TELL,
        Admission.DROP,
    ]
    x.person_spoke()
    assert x.admit(1) is Admission.TAKE


def test_a_reply_without_to_answers_its_speaker() -> None:
    alice, bob = ident("alice"), ident("bob")
    reply = env(bob.speaker_uri, ev("utterance", speaker=bob.speaker_uri), ev("bye"))
    out = answering_speaker(reply, alice, manager=MANAGER.speaker_uri)
    said = [e for e in out.events if e.event_type is EventType.UTTERANCE]
    assert [(e.to.speaker_uri, e.to.service_url) for e in said if e.to] == [
        (alice.speaker_uri, alice.service_url)
    ]
    assert out.events[1].to is None  # only utterances are addressed


def test_addressed_private_unknown_self_and_manager_are_left_alone() -> None:
    alice, bob, carol = ident("alice"), ident("bob"), ident("carol")
    addressed = env(bob.speaker_uri, ev("utterance", to=carol.speaker_uri))
    assert answering_speaker(addressed, alice, manager=MANAGER.speaker_uri) is addressed
    reply = env(bob.speaker_uri, ev("utterance"))
    assert answering_speaker(reply, None, manager=MANAGER.speaker_uri) is reply
    assert answering_speaker(reply, bob, manager=MANAGER.speaker_uri) is reply
    assert answering_speaker(reply, MANAGER, manager=MANAGER.speaker_uri) is reply
