"""Issue 30 item 5, a round trip: a conversation with the gateway's own utterances (a person's
speech with words, confidence, alternates and the transcriber's language; an agent's reply in
text, several SSML documents, html and audio by URL) → recorded → exported → valid against the
official schema → every feature accounted for: present in the export, or named as left out."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from gateway.ofp import (
    DialogEvent,
    Envelope,
    Event,
    EventType,
    Feature,
    Sender,
    Token,
)
from gateway.proxy.utterance import speech_dialog_event
from gateway.records import Recorder, to_durable_agent_state, to_mplp_dialog
from gateway.testing.records import ALICE, USER, schema_errors
from gateway.voice.stt import Transcript, Word

MAPPINGS = Path(__file__).resolve().parents[2] / "gateway" / "records" / "MAPPINGS.md"
AT = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)


def person_said() -> DialogEvent:
    transcript = Transcript(
        text="Je voudrais aller à la gare.",
        language="fr",
        words=(
            Word(" Je", 0.1, 0.2, 0.91),
            Word(" voudrais", 0.2, 0.6, 0.88),
            Word(" aller", 0.6, 0.8, 0.93),
            Word(" à", 0.8, 0.9, 0.7),
            Word(" la", 0.9, 1.0, 0.95),
            Word(" gare.", 1.0, 1.4, 0.97),
        ),
        confidence=0.89,
        avg_logprob=-0.2,
        alternates=("Je voudrais aller à la garde.",),
        window="fitted",
        fell_back=False,
        audio_s=1.6,
        decode_s=0.1,
    )
    clip = (np.sin(np.arange(int(1.6 * 16000)) / 9) * 6000).astype(np.int16)
    return speech_dialog_event(transcript, clip, speaker_uri=USER.speaker_uri, started_at=AT)


def agent_said() -> DialogEvent:
    return DialogEvent(
        speaker_uri=ALICE.speaker_uri,
        features={
            "text": Feature(
                mime_type="text/plain", lang="fr", tokens=[Token(value="La gare est à gauche.")]
            ),
            "ssml": Feature(
                mime_type="application/ssml+xml",
                tokens=[
                    Token(value="<speak>La gare</speak>"),
                    Token(value="<speak>à gauche.</speak>"),
                ],
            ),
            "html": Feature(mime_type="text/html", tokens=[Token(value="<p>La gare</p>")]),
            "audio": Feature(
                mime_type="audio/wav", tokens=[Token(value_url="https://alice.test/gare.wav")]
            ),
        },
    )


def record(recorder: Recorder, cid: str, sender, de: DialogEvent, to) -> None:
    env = Envelope(
        conversation={"id": cid},
        sender=Sender(speaker_uri=sender.speaker_uri),
        events=[Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": de})],
    )
    wire = env.to_wire()
    recorder.envelope(cid, direction="in", peer=sender.speaker_uri, envelope=wire, at=AT)
    recorder.envelope(cid, direction="out", peer=to.speaker_uri, envelope=wire, at=AT)


@pytest.fixture
def conversation(recorder: Recorder):
    cid = "conv-round-trip"
    recorder.conversation_started(cid, at=AT, title="Gare", user_speaker_uri=USER.speaker_uri)
    said = [person_said(), agent_said()]
    record(recorder, cid, USER, said[0], ALICE)
    record(recorder, cid, ALICE, said[1], USER)
    recorder.conversation_ended(cid, at=AT)
    return recorder.get_conversation(cid, with_audio=True), said


def test_mplp_keeps_every_feature_of_every_utterance(conversation, mplp_validator) -> None:
    stored, said = conversation
    dialog = to_mplp_dialog(stored)
    assert schema_errors(mplp_validator, dialog) == []
    by_id = {m["event"]["data"]["dialogEventId"]: m for m in dialog["messages"]}
    for de in said:
        message = by_id[de.id]
        assert message["content"] == de.text()
        kept = message["event"]["data"]["features"]
        assert kept == {k: f.wire() for k, f in de.features.items()}  # nothing dropped
    person = by_id[said[0].id]["event"]["data"]["features"]
    assert person["text"]["lang"] == "fr" and person["words"]["lang"] == "fr"
    assert person["text"]["tokens"][0]["confidence"] == 0.89
    assert person["text"]["alternates"] == [[{"value": "Je voudrais aller à la garde."}]]
    assert [t["confidence"] for t in person["words"]["tokens"]] == [
        0.91,
        0.88,
        0.93,
        0.7,
        0.95,
        0.97,
    ]


def test_durable_state_accounts_for_every_feature(conversation, agent_framework_validators) -> None:
    stored, said = conversation
    doc = to_durable_agent_state(stored, ALICE.speaker_uri)
    for validator in agent_framework_validators.values():
        assert schema_errors(validator, doc) == []
    messages = [m for entry in doc["data"]["conversationHistory"] for m in entry["messages"]]
    for de in said:
        [message] = [m for m in messages if {"$type": "text", "text": de.text()} in m["contents"]]
        contents = list(message["contents"])
        # The text once: the words annotation is not a second text content.
        assert [c for c in contents if c["$type"] == "text"] == [
            {"$type": "text", "text": de.text()}
        ]
        for name, feature in de.features.items():
            if feature.mime_type == "text/plain":
                continue
            for token in feature.tokens:
                expected = (
                    {"$type": "uri", "uri": token.value_url, "mediaType": feature.mime_type}
                    if token.value_url is not None
                    else None
                )
                found = [
                    c
                    for c in contents
                    if c.get("mediaType") == feature.mime_type
                    and (expected is None or c == expected)
                ]
                assert found, (name, feature.mime_type)
    mappings = MAPPINGS.read_text()
    # What durable agent state cannot hold is said where the mapping is described.
    assert "the `words` annotation (per-word confidence and timing)" in mappings
