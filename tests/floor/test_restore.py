"""A floor taken up from its last recorded state (another node held it) routes as before."""

from __future__ import annotations

import pytest

from gateway.floor import Floor

from .helpers import CONV, MANAGER, by_recipient, env, ev, floor_with, ident


def restored(*names: str, granted: list[str], convener: str | None) -> Floor:
    floor = Floor(CONV, manager=MANAGER)
    floor.restore([ident(n) for n in names], [f"tag:{g}" for g in granted], convener)
    return floor


def test_the_restored_state_is_the_recorded_one():
    floor = restored("user", "bob", "alice", granted=["user", "bob"], convener="tag:bob")
    assert [i.speaker_uri for i in floor.conversants] == ["tag:user", "tag:bob", "tag:alice"]
    assert floor.floor_granted == ["tag:user", "tag:bob"]
    assert floor.convener == "tag:bob"
    conv = floor.conversation()
    assert conv.floor_granted == ["tag:user", "tag:bob"]
    assert conv.assigned_floor_roles == {"convener": ["tag:bob"]}


def test_grants_and_the_convener_rule_routing_after_restore():
    floor = restored("user", "bob", "alice", granted=["user", "bob"], convener="tag:bob")
    # alice lost the floor before the failure: her utterance goes to the convener to decide
    out = floor.receive(env("tag:alice", ev("utterance", speaker="tag:alice")))
    assert [d.awaits_reply for d in out] == [True]
    assert out[0].recipient.speaker_uri == "tag:bob"
    # the person holds it: theirs passes to everyone else
    fresh = restored("user", "bob", "alice", granted=["user", "bob"], convener=None)
    out = fresh.receive(env("tag:user", ev("utterance", speaker="tag:user")))
    assert by_recipient(out) == {"bob": ["utterance"], "alice": ["utterance"]}


def test_grants_and_convener_outside_the_conversants_are_dropped():
    floor = restored("user", granted=["user", "ghost"], convener="tag:ghost")
    assert floor.floor_granted == ["tag:user"] and floor.convener is None


def test_a_busy_floor_cannot_be_restored():
    floor = floor_with("user", "bob", convener="bob")
    floor.receive(env("tag:user", ev("invite", to_url="https://x.example/ofp")))  # delegated
    assert floor.awaiting_convener
    with pytest.raises(RuntimeError):
        floor.restore([ident("user")], ["tag:user"], None)
