"""Which invites the floor refuses (gateway/floor/invites.py, sans I/O); tests/floor/
test_many_agents.py and tests/server/test_hostile_input.py drive the same through the host."""

from __future__ import annotations

from gateway.agents.policy import MAX_URL_CHARS
from gateway.floor.invites import screen_invites
from gateway.floor.notices import InviteTooLong, InviteTooMany
from gateway.ofp import EventType

from .helpers import env, ev, ident

ALICE = ident("alice")


def test_invites_within_bounds_go_on_unchanged() -> None:
    e = env(ALICE.speaker_uri, ev("invite", to="tag:a"), ev("utterance"))
    out, refused = screen_invites(e, ALICE, present=set(), agents=0, max_agents=2)
    assert out is e and refused == []


def test_a_long_address_is_refused_the_rest_goes_on() -> None:
    long = "https://a.example/" + "x" * MAX_URL_CHARS
    e = env(ALICE.speaker_uri, ev("invite", to_url=long), ev("utterance"))
    out, refused = screen_invites(e, ALICE, present=set(), agents=0, max_agents=2)
    assert [x.event_type for x in out.events] == [EventType.UTTERANCE]
    assert refused == [InviteTooLong(ALICE.speaker_uri, ALICE.display_name, long)]


def test_newcomers_past_max_agents_are_refused_present_ones_not() -> None:
    e = env(
        ALICE.speaker_uri,
        ev("invite", to="tag:a"),
        ev("invite", to="tag:b"),
        ev("invite", to="tag:here"),
    )
    out, refused = screen_invites(e, ALICE, present={"tag:here"}, agents=1, max_agents=2)
    assert [x.to.speaker_uri for x in out.events if x.to] == ["tag:a", "tag:here"]
    assert refused == [InviteTooMany(ALICE.speaker_uri, 2, "tag:b")]
