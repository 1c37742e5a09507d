"""Discovery (gateway/floor/discovery.py, §1.17, sans I/O): the ``getManifests`` asked, and what
an agent's answer offers, its own manifest apart from the ones it recommends."""

from __future__ import annotations

from gateway.floor.discovery import MAX_NAMED, Named, ask, offered
from gateway.ofp import Envelope, EventType, Sender
from tests.ofp_schemas import assert_valid_envelope

from .helpers import CONV, ident

OWN = "https://disco.example/ofp"


def _manifest(name: str, url: str) -> dict[str, object]:
    return {"identification": {**ident(name).to_wire(), "serviceUrl": url}, "capabilities": []}


def test_the_question_is_a_valid_get_manifests_of_scope_all() -> None:
    e = ask(CONV, Sender(speaker_uri="tag:me"), OWN)
    (event,) = e.events
    assert event.event_type is EventType.GET_MANIFESTS
    assert event.to is not None and event.to.service_url == OWN
    assert event.parameters.recommend_scope == "all"
    assert_valid_envelope(e.to_wire())


def test_its_own_manifest_is_not_recommended_the_others_are_and_bounded() -> None:
    reply = Envelope.model_validate(
        {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": CONV},
            "sender": {"speakerUri": "tag:disco"},
            "events": [
                {
                    "eventType": "publishManifests",
                    "parameters": {
                        "servicingManifests": [
                            _manifest("disco", "https://DISCO.example/ofp"),
                            _manifest("fronted", "https://f.example/ofp"),
                        ],
                        "discoveryManifests": [_manifest("other", "https://o.example/ofp")],
                    },
                },
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": {
                            "speakerUri": "tag:disco",
                            "features": {
                                "text": {"mimeType": "text/plain", "tokens": [{"value": "here"}]}
                            },
                        }
                    },
                },
            ],
        }
    )
    found = [(m.identification.conversational_name, rec) for m, rec in offered(reply, OWN)]
    assert found == [("Disco", False), ("Fronted", True), ("Other", True)]
    assert len(offered(reply, OWN, most=2)) == 2
    assert offered(None, OWN) == []


def test_newcomers_are_asked_once_each_and_the_asked_are_bounded() -> None:
    named = Named("http://127.0.0.1:1/me")
    assert named.newcomer("http://127.0.0.1:9/a")
    assert not named.newcomer("HTTP://127.0.0.1:9/a")  # the same address, written otherwise
    assert not named.newcomer("builtin:clock")  # in process: its manifest is known
    for i in range(MAX_NAMED):
        named.asking(f"http://127.0.0.1:9/{i}")
    assert named.full
    assert not named.newcomer("http://127.0.0.1:9/late")
