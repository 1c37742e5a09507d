"""OVON 0.9 envelopes are understood, and written back in 0.9 for agents that speak it."""

from __future__ import annotations

from gateway.ofp import EventType, parse_envelope, text_event, to_ovon
from gateway.ofp.envelope import Envelope, Event, Sender


def test_whisper_becomes_a_private_utterance_to_the_invitee() -> None:
    env = parse_envelope(
        {
            "ovon": {
                "schema": {"version": "0.9.0"},
                "conversation": {"id": "c"},
                "sender": {"from": "https://a.example/ovon", "replyTo": "https://a.example/reply"},
                "responseCode": {"code": 200},
                "events": [
                    {
                        "eventType": "invite",
                        "parameters": {"to": {"url": "https://pharmacy.example"}},
                    },
                    {
                        "eventType": "whisper",
                        "parameters": {
                            "dialogEvent": {
                                "speakerId": "abc",
                                "span": {"startTime": "2023-06-14 02:06:07+00:00"},
                                "features": {
                                    "text": {
                                        "mimeType": "text/plain",
                                        "tokens": [{"value": "prescribe"}],
                                    }
                                },
                            }
                        },
                    },
                ],
            }
        }
    )
    assert env.dialect == "ovon"
    assert env.sender.service_url == "https://a.example/ovon"
    assert env.sender.speaker_uri == "https://a.example/ovon"
    invite, whisper = env.events
    assert (
        invite.event_type is EventType.INVITE
        and invite.to.service_url == "https://pharmacy.example"
    )
    assert whisper.event_type is EventType.UTTERANCE and whisper.is_private
    assert whisper.to.service_url == "https://pharmacy.example"
    assert whisper.dialog_event.speaker_uri == "abc"


def test_to_as_a_url_string() -> None:
    env = parse_envelope(
        {
            "ovon": {
                "schema": {"version": "0.9.2"},
                "conversation": {"id": "c"},
                "sender": {"from": "https://a.example"},
                "events": [
                    {
                        "eventType": "utterance",
                        "to": "https://b.example",
                        "parameters": {
                            "dialogEvent": {
                                "speakerId": "x",
                                "features": {
                                    "text": {"mimeType": "text/plain", "tokens": [{"value": "hi"}]}
                                },
                            }
                        },
                    }
                ],
            }
        }
    )
    assert env.events[0].to.service_url == "https://b.example"
    assert not env.events[0].is_private


def test_answered_in_0_9() -> None:
    env = Envelope(
        conversation={"id": "c"},
        sender=Sender(speaker_uri="tag:gw", service_url="https://gw.example"),
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                parameters={"dialog_event": text_event("tag:u", "hi")},
            ),
            Event(
                event_type=EventType.UTTERANCE,
                to={"speakerUri": "tag:b", "private": True},
                parameters={"dialog_event": text_event("tag:u", "psst")},
            ),
            Event(event_type=EventType.INVITE, to={"serviceUrl": "https://b.example"}),
            Event(event_type=EventType.GRANT_FLOOR, to={"speakerUri": "tag:b"}),
        ],
    )
    out = to_ovon(env)["ovon"]
    assert out["sender"] == {"from": "https://gw.example"}
    assert [e["eventType"] for e in out["events"]] == ["utterance", "whisper", "invite"]
    assert out["events"][2]["parameters"]["to"]["url"] == "https://b.example"
    # And it reads back as what it was.
    back = parse_envelope(to_ovon(env))
    assert [e.event_type for e in back.events][:2] == [EventType.UTTERANCE, EventType.UTTERANCE]
