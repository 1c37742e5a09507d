"""Every row of the OFP 1.1.0 §2.2 table, with a convener and without one (1.1.1 utterance row)."""

from __future__ import annotations

import pytest

from gateway.floor import Route, route_for
from gateway.ofp import EventType

from .helpers import by_recipient, env, ev, floor_with

# (event, delegated with a convener?, behaviour without a convener)
TABLE = [
    ("invite", True, "pass"),
    ("uninvite", True, "pass"),
    ("declineInvite", False, "pass"),
    ("acceptInvite", False, "pass"),
    ("bye", False, "pass"),
    ("getManifests", False, "pass"),
    ("publishManifests", False, "pass"),
    ("requestFloor", True, "grant"),
    ("grantFloor", True, "pass"),
    ("yieldFloor", False, "pass"),
    ("revokeFloor", True, "pass"),
]


def _event(kind: str):
    targeted = {"invite", "uninvite", "grantFloor", "revokeFloor"}
    if kind == "invite":
        return ev(kind, to_url="https://newcomer.example/ofp")
    return ev(kind, to="tag:bob") if kind in targeted else ev(kind)


@pytest.mark.parametrize(("kind", "delegated", "_"), TABLE)
def test_row_with_convener(kind: str, delegated: bool, _: str) -> None:
    floor = floor_with("chair", "alice", "bob", "carol", convener="chair")
    out = floor.receive(env("tag:alice", _event(kind)))
    if delegated:
        assert len(out) == 1 and out[0].awaits_reply
        assert out[0].recipient.speaker_uri == "tag:chair"
        assert [e.event_type.value for e in out[0].envelope.events] == [kind]
        assert floor.awaiting_convener
    else:
        got = by_recipient(out)
        assert not any(d.awaits_reply for d in out)
        # Passed through to every conversant but the sender (the convener included).
        assert set(got) >= {"chair", "bob", "carol"} - ({"bob"} if kind == "uninvite" else set())
        assert "alice" not in got


@pytest.mark.parametrize(("kind", "_", "without"), TABLE)
def test_row_without_convener(kind: str, _: bool, without: str) -> None:
    floor = floor_with("alice", "bob", "carol")
    out = floor.receive(env("tag:alice", _event(kind)))
    got = by_recipient(out)
    assert not any(d.awaits_reply for d in out)
    if without == "grant":
        # requestFloor is answered with a grantFloor to the requester, from the floor manager.
        assert got == {"alice": ["grantFloor"], "bob": ["grantFloor"], "carol": ["grantFloor"]}
        grant = next(d for d in out if d.recipient.speaker_uri == "tag:alice").envelope
        assert grant.sender.speaker_uri == "tag:gateway,2025:floor"
        assert grant.events[0].to is not None and grant.events[0].to.speaker_uri == "tag:alice"
    else:
        assert "alice" not in got
        assert {"bob", "carol"} <= set(got)
        assert all(v == [kind] for v in got.values())


def test_utterance_with_floor_passes_through_in_both_columns() -> None:
    for convener in ("chair", None):
        names = ("chair", "alice", "bob") if convener else ("alice", "bob")
        floor = floor_with(*names, convener=convener)
        got = by_recipient(floor.receive(env("tag:alice", ev("utterance", speaker="tag:alice"))))
        assert got == {n: ["utterance"] for n in names if n != "alice"}


def test_utterance_without_floor_is_delegated_to_the_convener() -> None:
    floor = floor_with("chair", "alice", "bob", convener="chair")
    floor.receive(env("tag:alice", ev("yieldFloor")))
    out = floor.receive(env("tag:alice", ev("utterance", speaker="tag:alice")))
    assert len(out) == 1 and out[0].awaits_reply and out[0].recipient.speaker_uri == "tag:chair"


def test_utterance_without_floor_is_ignored_without_a_convener() -> None:
    floor = floor_with("alice", "bob")
    floor.receive(env("tag:alice", ev("yieldFloor")))
    assert floor.receive(env("tag:alice", ev("utterance", speaker="tag:alice"))) == []


def test_route_for_matches_the_table() -> None:
    for kind, delegated, without in TABLE:
        et = EventType(kind)
        assert route_for(et, has_convener=True, sender_has_floor=True) is (
            Route.DELEGATE if delegated else Route.PASS
        )
        assert route_for(et, has_convener=False, sender_has_floor=True) is (
            Route.GRANT if without == "grant" else Route.PASS
        )
    u = EventType.UTTERANCE
    assert route_for(u, has_convener=True, sender_has_floor=True) is Route.PASS
    assert route_for(u, has_convener=True, sender_has_floor=False) is Route.DELEGATE
    assert route_for(u, has_convener=False, sender_has_floor=False) is Route.IGNORE
