"""What each agent is sent (gateway/floor/recipients.py, sans I/O): the person's voice only
where wanted, the person reachable at the agent's own inbound URL.
tests/floor/test_voice_where_wanted.py and tests/floor/test_inbound.py check both through the
host."""

from __future__ import annotations

from gateway.floor import Delivery
from gateway.floor.recipients import person_reached_at, voice_only_if_wanted, wants_audio
from gateway.ofp import (
    Conversant,
    Envelope,
    Event,
    EventType,
    Feature,
    Manifest,
    Sender,
    Token,
    text_event,
)

from .helpers import CONV, ident

ME = ident("me")
A = ident("a")


def _manifest(*layers: str) -> Manifest:
    caps = [{"keyphrases": ["x"], "supportedLayers": {"input": list(layers)}}] if layers else []
    return Manifest.model_validate({"identification": A.to_wire(), "capabilities": caps})


def _voiced() -> Delivery:
    de = text_event(ME.speaker_uri, "hello")
    de.features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value="UklGRg==")])
    other = text_event(A.speaker_uri, "hi")
    other.features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value="UklGRg==")])
    events = [
        Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": d}) for d in (de, other)
    ]
    env = Envelope(
        conversation={"id": CONV, "conversants": [Conversant(identification=ME)]},
        sender=Sender(speaker_uri=ME.speaker_uri, service_url=ME.service_url),
        events=events,
    )
    return Delivery(A, env, False)


def _features(d: Delivery) -> list[set[str]]:
    return [set(e.dialog_event.features) for e in d.envelope.events if e.dialog_event]


def test_the_persons_voice_goes_only_to_an_agent_that_takes_audio() -> None:
    d = _voiced()
    assert wants_audio(_manifest("audio/wav", "text"))
    assert not wants_audio(_manifest("text")) and not wants_audio(_manifest())
    assert voice_only_if_wanted(_manifest("audio"), d, ME.speaker_uri) is d
    # Only the person's voice is taken out; another speaker's audio is not theirs to withhold.
    assert _features(voice_only_if_wanted(_manifest("text"), d, ME.speaker_uri)) == [
        {"text"},
        {"text", "audio"},
    ]


def test_the_person_is_reached_at_the_agents_inbound_url() -> None:
    url = "http://127.0.0.1:9/inbound/n/token"
    d = _voiced()
    out = person_reached_at(d, ME.speaker_uri, url)
    assert out.envelope.sender.service_url == url
    conversants = out.envelope.conversation.conversants or []
    assert [c.identification.service_url for c in conversants] == [url]
    assert out.envelope.events == d.envelope.events  # what is said is not touched
