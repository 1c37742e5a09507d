"""The floor as the minimal convener (§0.4.2; docs/floor.md): the person is protected, an agent
that yielded is given the floor back when addressed, floor requests on behalf of another."""

from __future__ import annotations

from gateway.ofp import EventType
from tests.floor.helpers import by_recipient, env, ev, floor_with
from tests.ofp_schemas import assert_valid_envelope


def _person_floor():
    floor = floor_with("user", "clock", "parrot")
    floor.protect("tag:user")
    return floor


def test_an_agent_cannot_uninvite_the_person() -> None:
    floor = _person_floor()
    out = floor.receive(env("tag:clock", ev("uninvite", to="tag:user", reason="@error go away")))
    assert out == []  # not applied and not passed on
    assert floor.conversant("tag:user") is not None
    (refused,) = floor.take_refused()
    assert refused.sender.speaker_uri == "tag:clock"
    assert (
        refused.event.event_type is EventType.UNINVITE and refused.target.speaker_uri == "tag:user"
    )
    assert floor.take_refused() == []
    # The person still speaks and is heard.
    heard = by_recipient(floor.receive(env("tag:user", ev("utterance", speaker="tag:user"))))
    assert heard == {"clock": ["utterance"], "parrot": ["utterance"]}


def test_nor_revoke_their_floor_nor_can_a_convener() -> None:
    floor = floor_with("user", "chair", "clock", convener="chair")
    floor.protect("tag:user")
    # The convener's own events are authority, yet the person stays protected.
    assert floor.receive(env("tag:chair", ev("revokeFloor", to="tag:user"))) == []
    assert "tag:user" in floor.floor_granted
    assert [r.event.event_type for r in floor.take_refused()] == [EventType.REVOKE_FLOOR]
    # Others can still be uninvited (through the convener, as before).
    floor.receive(env("tag:chair", ev("uninvite", to="tag:clock")))
    assert floor.conversant("tag:clock") is None


def test_the_floor_manager_itself_may_uninvite_the_person() -> None:
    floor = _person_floor()
    floor.inject([ev("uninvite", to="tag:user")])
    assert floor.conversant("tag:user") is None and floor.take_refused() == []


def test_an_agent_that_yielded_is_granted_the_floor_when_addressed() -> None:
    floor = _person_floor()
    floor.receive(env("tag:clock", ev("yieldFloor")))
    assert "tag:clock" not in floor.floor_granted
    # Without the floor its utterances are ignored (§2.2, 1.1.1 row)...
    assert floor.receive(env("tag:clock", ev("utterance", speaker="tag:clock"))) == []
    # ...until the person speaks to it: a grantFloor from the floor manager first.
    out = floor.receive(env("tag:user", ev("utterance", to="tag:clock", speaker="tag:user")))
    assert by_recipient(out)["clock"] == ["grantFloor", "utterance"]
    assert by_recipient(out)["parrot"] == ["grantFloor", "utterance"]
    grant = out[0].envelope
    assert grant.sender.speaker_uri == floor.manager.speaker_uri
    assert grant.events[0].to.speaker_uri == "tag:clock"
    for d in out:
        assert_valid_envelope(d.envelope.to_wire())
    assert "tag:clock" in floor.floor_granted
    heard = floor.receive(env("tag:clock", ev("utterance", speaker="tag:clock")))
    assert by_recipient(heard) == {"user": ["utterance"], "parrot": ["utterance"]}


def test_no_grant_for_an_agent_that_has_the_floor() -> None:
    floor = _person_floor()
    out = floor.receive(env("tag:user", ev("utterance", to="tag:clock", speaker="tag:user")))
    assert by_recipient(out)["clock"] == ["utterance"]


def test_request_floor_on_behalf_of_another_is_honoured() -> None:
    floor = _person_floor()
    floor.receive(env("tag:parrot", ev("yieldFloor")))
    out = floor.receive(env("tag:clock", ev("requestFloor", to="tag:parrot", reason="its turn")))
    assert "tag:parrot" in floor.floor_granted
    grants = [e for d in out for e in d.envelope.events if e.event_type is EventType.GRANT_FLOOR]
    assert grants and grants[0].to.speaker_uri == "tag:parrot"
    # A request addressed to the floor manager is for the sender itself, as before.
    floor.receive(env("tag:clock", ev("yieldFloor")))
    floor.receive(env("tag:clock", ev("requestFloor", to=floor.manager.speaker_uri)))
    assert "tag:clock" in floor.floor_granted
