"""Curation of conversants and floorGranted (§2.2), private routing, and the conversation section."""

from __future__ import annotations

from gateway.ofp import Identification

from .helpers import CONV, by_recipient, env, ev, floor_with, ident


def uris(floor) -> list[str]:
    return [i.speaker_uri for i in floor.conversants]


def test_invite_adds_the_invitee_before_sending_so_it_receives_the_invite() -> None:
    floor = floor_with("alice")
    out = floor.receive(env("tag:alice", ev("invite", to_url="https://weather.example/ofp")))
    assert "https://weather.example/ofp" in uris(floor)
    assert "https://weather.example/ofp" in floor.floor_granted  # joins with the floor
    [d] = out
    assert d.recipient.service_url == "https://weather.example/ofp"
    conv = d.envelope.conversation
    assert conv.id == CONV
    assert [c.identification.speaker_uri for c in conv.conversants] == uris(floor)


def test_invite_by_url_uses_a_known_manifest_identity() -> None:
    floor = floor_with("alice")
    real = ident("weather")
    floor.know(real)
    floor.receive(env("tag:alice", ev("invite", to_url=real.service_url)))
    assert floor.conversant("tag:weather") == real


def test_provisional_invitee_is_renamed_when_it_answers() -> None:
    floor = floor_with("alice")
    url = "https://weather.example/ofp"
    floor.receive(env("tag:alice", ev("invite", to_url=url)))
    out = floor.receive(env("tag:weather-7", ev("acceptInvite")), origin=url)
    assert uris(floor) == ["tag:alice", "tag:weather-7"]
    assert floor.floor_granted == ["tag:alice", "tag:weather-7"]
    assert by_recipient(out) == {"alice": ["acceptInvite"]}


def test_decline_and_bye_remove_the_sender() -> None:
    for kind in ("declineInvite", "bye"):
        floor = floor_with("alice", "bob", "carol")
        out = floor.receive(env("tag:bob", ev(kind)))
        assert uris(floor) == ["tag:alice", "tag:carol"]
        assert floor.floor_granted == ["tag:alice", "tag:carol"]
        assert set(by_recipient(out)) == {"alice", "carol"}


def test_uninvite_tells_the_target_then_removes_it() -> None:
    floor = floor_with("alice", "bob", "carol")
    out = floor.receive(env("tag:alice", ev("uninvite", to="tag:bob", reason="@brokenPolicy")))
    assert by_recipient(out) == {"bob": ["uninvite"], "carol": ["uninvite"]}
    assert uris(floor) == ["tag:alice", "tag:carol"]
    assert "tag:bob" not in floor.floor_granted


def test_uninviting_the_convener_clears_the_role() -> None:
    floor = floor_with("chair", "alice", convener="chair")
    floor.inject([ev("uninvite", to="tag:chair", reason="@timedOut")])
    assert floor.convener is None and uris(floor) == ["tag:alice"]


def test_floor_granted_lifecycle() -> None:
    floor = floor_with("alice", "bob")
    assert floor.floor_granted == ["tag:alice", "tag:bob"]
    floor.receive(env("tag:bob", ev("yieldFloor", reason="@complete")))
    assert floor.floor_granted == ["tag:alice"]
    floor.receive(env("tag:alice", ev("grantFloor", to="tag:bob")))
    assert floor.floor_granted == ["tag:alice", "tag:bob"]
    floor.receive(env("tag:alice", ev("revokeFloor", to="tag:bob", reason="@override")))
    assert floor.floor_granted == ["tag:alice"]
    # requestFloor by itself changes nothing while a convener decides...
    chaired = floor_with("chair", "alice", "bob", convener="chair")
    chaired.receive(env("tag:alice", ev("revokeFloor", to="tag:bob")))  # delegated: no change
    assert chaired.floor_granted == ["tag:chair", "tag:alice", "tag:bob"]
    chaired.convener_replied(None)
    chaired.inject([ev("revokeFloor", to="tag:bob")])
    chaired.receive(env("tag:bob", ev("requestFloor")))
    assert "tag:bob" not in chaired.floor_granted


def test_grant_to_a_non_conversant_grants_nothing() -> None:
    floor = floor_with("alice")
    floor.receive(env("tag:alice", ev("grantFloor", to="tag:stranger")))
    assert floor.floor_granted == ["tag:alice"]


def test_private_utterance_goes_only_to_its_target() -> None:
    floor = floor_with("alice", "bob", "carol", "dave")
    out = floor.receive(env("tag:alice", ev("utterance", to="tag:carol", private=True)))
    assert by_recipient(out) == {"carol": ["utterance"]}


def test_addressed_public_utterance_goes_to_everyone() -> None:
    floor = floor_with("alice", "bob", "carol")
    out = floor.receive(env("tag:alice", ev("utterance", to="tag:carol")))
    assert set(by_recipient(out)) == {"bob", "carol"}


def test_private_flag_is_ignored_for_other_event_types() -> None:
    floor = floor_with("alice", "bob", "carol")
    out = floor.receive(env("tag:alice", ev("getManifests", to="tag:bob", private=True)))
    assert set(by_recipient(out)) == {"bob", "carol"}


def test_private_utterance_to_an_outsider_reaches_it_by_url() -> None:
    floor = floor_with("alice", "bob")
    url = "https://directory.example/ofp"
    out = floor.receive(
        env("tag:alice", ev("getManifests", to_url=url), ev("utterance", to_url=url, private=True))
    )
    got = by_recipient(out)
    assert got[url] == ["getManifests", "utterance"]
    assert got["bob"] == ["getManifests"]
    assert url not in uris(floor)  # discovery does not make it a conversant


def test_conversation_section_is_rewritten_with_floor_state() -> None:
    floor = floor_with("chair", "alice", "bob", convener="chair")
    bogus = env("tag:chair", ev("utterance", speaker="tag:chair"))
    bogus = bogus.model_copy(
        update={
            "conversation": bogus.conversation.model_copy(
                update={"floor_granted": ["tag:nobody"], "conversants": []}
            )
        }
    )
    out = floor.receive(bogus)
    for d in out:
        wire = d.envelope.to_wire()["openFloor"]["conversation"]
        assert wire["floorGranted"] == ["tag:chair", "tag:alice", "tag:bob"]
        assert wire["assignedFloorRoles"] == {"convener": ["tag:chair"]}
        assert len(wire["conversants"]) == 3


def test_assign_convener_requires_a_conversant() -> None:
    floor = floor_with("alice")
    try:
        floor.assign_convener("tag:ghost")
    except ValueError as exc:
        assert "invite it" in str(exc)
    else:
        raise AssertionError("expected ValueError")


def test_identification_is_emitted_strictly() -> None:
    floor = floor_with("alice")
    odd = Identification.model_validate(
        {"speakerUri": "tag:odd", "serviceUrl": "https://odd", "serviceName": "x", "extra": 1}
    )
    floor.join(odd)
    wire = floor.conversation().to_wire()
    assert set(wire["conversants"][1]["identification"]) <= {
        "speakerUri",
        "serviceUrl",
        "organization",
        "conversationalName",
        "synopsis",
        "department",
        "role",
        "openFloorRoles",
    }


def test_agent_answering_under_another_speaker_uri_is_renamed_by_origin() -> None:
    floor = floor_with("alice")
    known = ident("weather")
    floor.know(known)
    floor.receive(env("tag:alice", ev("invite", to_url=known.service_url)))
    out = floor.receive(
        env("tag:weather-instance-9", ev("acceptInvite"), ev("utterance", text="sunny")),
        origin=known.service_url,
    )
    # Its utterance is not dropped as "no floor": it is the conversant reached at that URL.
    assert by_recipient(out) == {"alice": ["acceptInvite", "utterance"]}
    assert "tag:weather-instance-9" in floor.floor_granted
    assert floor.conversant("tag:weather-instance-9").conversational_name == "Weather"


def test_update_identity_takes_names_but_keeps_the_floor_speaker_uri() -> None:
    floor = floor_with("alice")
    url = "https://weather.example/ofp"
    floor.receive(env("tag:alice", ev("invite", to_url=url)))
    manifest = ident("weather").model_copy(update={"service_url": url, "speaker_uri": "tag:other"})
    assert floor.update_identity(manifest)
    updated = floor.find(service_url=url)
    assert updated.conversational_name == "Weather" and updated.speaker_uri == url
    assert not floor.update_identity(manifest)  # nothing new
    assert not floor.update_identity(ident("stranger"))
