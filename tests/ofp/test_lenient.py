"""Parse leniently: the deviations real agents send are accepted; real errors are reported."""

from __future__ import annotations

import json

import pytest

from gateway.ofp import EnvelopeError, EventType, parse_envelope, parse_manifest
from tests.ofp_schemas import assert_valid_envelope, assert_valid_manifest


def envelope(**over):
    body = {
        "schema": {"version": "1.1"},
        "conversation": {"id": "c1"},
        "sender": {"speakerUri": "tag:agent"},
        "events": [
            {
                "eventType": "utterance",
                "parameters": {
                    "dialogEvent": {
                        "speakerUri": "tag:agent",
                        "features": {"text": {"tokens": [{"value": "hello"}]}},
                    }
                },
                "custom": {"kept": True},
            }
        ],
    }
    body.update(over)
    return {"openFloor": body}


def test_version_1_1_and_missing_ids_spans_and_mime_types_are_accepted() -> None:
    env = parse_envelope(envelope())
    assert env.version == "1.1"
    de = env.events[0].dialog_event
    assert de is not None and de.id and de.text() == "hello"
    assert de.features["text"].mime_type == "text/plain"
    # Unknown keys are kept in the model...
    assert env.events[0].model_extra == {"custom": {"kept": True}}
    # ...and the output is strict.
    assert_valid_envelope(env.to_wire())


def test_dialog_event_without_speaker_takes_the_sender() -> None:
    data = envelope()
    del data["openFloor"]["events"][0]["parameters"]["dialogEvent"]["speakerUri"]
    env = parse_envelope(data)
    assert env.events[0].dialog_event.speaker_uri == "tag:agent"


def test_capabilities_as_object_and_layers_as_list() -> None:
    m = parse_manifest(
        {
            "identification": {"serviceUrl": "https://a.example", "conversationalName": "A"},
            "capabilities": {
                "keyphrases": ["x"],
                "descriptions": ["y"],
                "supportedLayers": ["text"],
            },
            "homepage": "kept",
        }
    )
    assert m.identification.speaker_uri == "https://a.example"
    assert m.capabilities[0].supported_layers.input == ["text"]
    assert m.model_extra == {"homepage": "kept"}
    assert_valid_manifest(m.to_wire())


def test_bare_event_parameters_are_dropped_on_output() -> None:
    data = envelope(events=[{"eventType": "bye", "parameters": {"why": "done"}}])
    wire = parse_envelope(data).to_wire()
    assert "parameters" not in wire["openFloor"]["events"][0]
    assert_valid_envelope(wire)


def test_unknown_event_types_are_set_aside_not_routed() -> None:
    env = parse_envelope(envelope(events=[{"eventType": "context", "parameters": {}}]))
    assert env.events == [] and env.ignored == [{"eventType": "context", "parameters": {}}]


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b"not json", "$"),
        (b"[1, 2]", "$"),
        (b'{"open": {}}', "$"),
        (json.dumps(envelope(events=[{"eventType": "utterance"}])), "$.openFloor.events[0]"),
        (json.dumps(envelope(events=[{"eventType": 7}])), "$.openFloor.events[0].eventType"),
        (
            json.dumps(envelope(events=[{"eventType": "invite", "to": {"speakerUri": 5}}])),
            "$.openFloor.events[0].to.speakerUri",
        ),
        (b"\xff\xfe", "$"),
        ("[" * 100_000, "$"),
    ],
)
def test_errors_are_envelope_errors_with_json_paths(data, path: str) -> None:
    with pytest.raises(EnvelopeError) as info:
        parse_envelope(data)
    assert info.value.problems[0].path == path


def test_deep_nesting_is_refused_cleanly() -> None:
    deep: dict = {}
    node = deep
    for _ in range(200):
        node["x"] = {}
        node = node["x"]
    data = envelope()
    data["openFloor"]["events"][0]["deep"] = deep
    with pytest.raises(EnvelopeError, match="nested deeper"):
        parse_envelope(data)


def test_transport_fills_in_missing_sender_and_conversation() -> None:
    from gateway.ofp import Sender

    data = {
        "openFloor": {"schema": {"version": "1.1.0"}, "events": [{"eventType": "acceptInvite"}]}
    }
    env = parse_envelope(data, sender=Sender(speaker_uri="https://a.example"), conversation_id="c9")
    assert env.sender.speaker_uri == "https://a.example" and env.conversation.id == "c9"
    assert env.events[0].event_type is EventType.ACCEPT_INVITE


def test_garbled_floor_state_from_an_agent_is_dropped_not_refused() -> None:
    env = parse_envelope(
        envelope(conversation={"id": "c1", "conversants": "lots", "floorGranted": 3})
    )
    assert env.conversation.id == "c1" and env.conversation.conversants is None
