"""Both exports of a recorded conversation: valid against the official schemas, and faithful."""

from __future__ import annotations

import base64
import re
import uuid

import pytest

from gateway.records import (
    Recorder,
    RecordsError,
    StoredConversation,
    to_durable_agent_state,
    to_mplp_dialog,
)
from gateway.testing.records import (
    ALICE,
    BOB,
    START,
    USER,
    Script,
    record_conversation,
    schema_errors,
)
from tests.records.helpers import (
    AGENT_FRAMEWORK_SCHEMAS,
)

UUID4 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
POINTS_OF_VIEW = [ALICE.speaker_uri, BOB.speaker_uri, USER.speaker_uri]


@pytest.fixture
def stored(recorder: Recorder, script: Script) -> StoredConversation:
    return recorder.get_conversation(script.conversation_id, with_audio=True)


# ---------------------------------------------------------------- durable agent state
@pytest.mark.parametrize("variant", [p.name for p in AGENT_FRAMEWORK_SCHEMAS])
@pytest.mark.parametrize("agent", POINTS_OF_VIEW)
def test_durable_state_validates_for_every_point_of_view(
    stored, agent_framework_validators, variant, agent
):
    doc = to_durable_agent_state(stored, agent)
    assert doc["data"]["conversationHistory"]
    assert schema_errors(agent_framework_validators[variant], doc) == []


def test_durable_state_is_what_the_floor_delivered_and_what_the_agent_sent(stored, script):
    doc = to_durable_agent_state(stored, ALICE.speaker_uri)
    assert doc["schemaVersion"] == "1.1.0"
    entries = doc["data"]["conversationHistory"]
    expected = [
        "request" if direction == "out" else "response"
        for direction, peer, _ in script.envelopes
        if peer == ALICE.speaker_uri
    ]
    assert [e["$type"] for e in entries] == expected
    for entry in entries:
        assert next(iter(entry)) == "$type"  # .NET reads the discriminator only when first
        assert entry["createdAt"].endswith("Z")
        for message in entry["messages"]:
            assert message["createdAt"]
            if entry["$type"] == "response":
                assert (message["role"], message["authorName"]) == ("assistant", "Alice")
            else:
                assert message["role"] in ("user", "system")


def test_durable_responses_carry_the_correlation_id_of_the_request_they_follow(stored):
    entries = to_durable_agent_state(stored, ALICE.speaker_uri)["data"]["conversationHistory"]
    last_request = None
    for entry in entries:
        if entry["$type"] == "request":
            assert entry["correlationId"] != last_request
            last_request = entry["correlationId"]
        else:
            assert entry["correlationId"] == last_request
    assert last_request is not None


def _messages(doc):
    return [m for e in doc["data"]["conversationHistory"] for m in e["messages"]]


def _texts(message):
    return [c["text"] for c in message["contents"] if c["$type"] == "text"]


def test_durable_utterance_contents_are_typed(stored, script):
    hello, three_days, _, thanks, _ = script.utterances
    alice = _messages(to_durable_agent_state(stored, ALICE.speaker_uri))

    heard = next(m for m in alice if _texts(m) == [hello.text()])
    assert (heard["role"], heard["authorName"]) == ("user", "You")
    [audio] = [c for c in heard["contents"] if c["$type"] == "data"]
    assert audio["mediaType"] == "audio/wav"
    prefix = "data:audio/wav;base64,"
    assert audio["uri"].startswith(prefix)
    assert base64.b64decode(audio["uri"][len(prefix) :]) == script.user_wav  # once, not twice

    said = next(m for m in alice if _texts(m) == [three_days.text()])
    assert {"$type": "uri", "uri": "https://alice.test/clips/1.wav", "mediaType": "audio/wav"} in (
        said["contents"]
    )
    [ssml] = [c for c in said["contents"] if c["$type"] == "data"]
    assert ssml["mediaType"] == "application/ssml+xml"
    encoded = ssml["uri"].split(",", 1)[1]
    assert base64.b64decode(encoded).decode() == "<speak>Three days is right.</speak>"

    # No audio feature: the clip recorded beside the database stands in for it.
    clip_only = next(m for m in alice if _texts(m) == [thanks.text()])
    [clip] = [c for c in clip_only["contents"] if c["$type"] == "data"]
    assert base64.b64decode(clip["uri"].split(",", 1)[1]) == script.clip_only_wav


def test_durable_control_events_are_unknown_contents_kept_whole(stored):
    alice = _messages(to_durable_agent_state(stored, ALICE.speaker_uri))
    control = [
        (m["role"], m["authorName"], c["content"].get("eventType"))
        for m in alice
        for c in m["contents"]
        if c["$type"] == "unknown" and isinstance(c["content"], dict)
    ]
    assert ("system", "You", "invite") in control
    assert ("system", "Bob", "revokeFloor") in control
    assert ("system", "Bob", "grantFloor") in control
    assert ("assistant", "Alice", "requestFloor") in control
    assert ("assistant", "Alice", "yieldFloor") in control
    revoke = next(
        c["content"]
        for m in alice
        for c in m["contents"]
        if c["$type"] == "unknown" and c["content"].get("eventType") == "revokeFloor"
    )
    assert revoke["reason"] == "@timedOut"
    # The garbled envelope Alice sent is kept verbatim as hers.
    assert any(
        m["role"] == "assistant" and c.get("content") == {"openFloor": {"events": "not a list"}}
        for m in alice
        for c in m["contents"]
    )


def test_durable_private_utterance_is_only_in_its_recipients_state(stored, script):
    private = script.private.text()
    user = _messages(to_durable_agent_state(stored, USER.speaker_uri))
    bob = _messages(to_durable_agent_state(stored, BOB.speaker_uri))
    alice = _messages(to_durable_agent_state(stored, ALICE.speaker_uri))
    assert [m["role"] for m in user if _texts(m) == [private]] == ["user"]
    assert [m["role"] for m in bob if _texts(m) == [private]] == ["assistant"]
    assert not [m for m in alice if _texts(m) == [private]]


def test_durable_floor_announcements_are_system_messages(stored, script):
    alice = _messages(to_durable_agent_state(stored, ALICE.speaker_uri))
    [announced] = [m for m in alice if _texts(m) == [script.announcement.text()]]
    assert announced["role"] == "system"


def test_durable_state_of_a_stranger_is_refused(stored):
    with pytest.raises(RecordsError, match="took no part"):
        to_durable_agent_state(stored, "tag:nobody.test,2025:agent")


# ---------------------------------------------------------------- MPLP Dialog
def test_mplp_dialog_validates(stored, mplp_validator):
    doc = to_mplp_dialog(stored)
    assert schema_errors(mplp_validator, doc) == []


def test_mplp_dialog_has_each_utterance_once_in_order(stored, script):
    messages = to_mplp_dialog(stored)["messages"]
    assert [m["content"] for m in messages] == [u.text() for u in script.utterances]
    assert [m["role"] for m in messages] == ["user", "agent", "agent", "user", "system"]
    assert [m["event"]["data"]["speakerUri"] for m in messages] == [
        u.speaker_uri for u in script.utterances
    ]
    assert all(m["event"]["event_type"] == "ofp.utterance" for m in messages)
    times = [m["timestamp"] for m in messages]
    assert times == sorted(times)


def test_mplp_dialog_keeps_privacy_and_features_in_event_data(stored, script):
    by_id = {
        m["event"]["data"]["dialogEventId"]: m["event"]["data"]
        for m in to_mplp_dialog(stored)["messages"]
    }
    hello, three_days, psst, thanks, _ = script.utterances
    assert by_id[psst.id]["private"] is True
    assert by_id[psst.id]["to"] == {"speakerUri": USER.speaker_uri, "private": True}
    assert by_id[hello.id]["private"] is False
    inline = by_id[hello.id]["features"]["audio"]["tokens"][0]["value"]
    assert base64.b64decode(inline) == script.user_wav
    assert by_id[hello.id]["features"]["text"] == hello.features["text"].wire()
    assert "recordedAudio" not in by_id[hello.id]  # its clip is the inline audio already
    assert by_id[three_days.id]["features"]["audio"]["tokens"][0]["valueUrl"] == (
        "https://alice.test/clips/1.wav"
    )
    assert by_id[three_days.id]["conversationalName"] == "Alice"
    recorded = by_id[thanks.id]["recordedAudio"]["uri"]
    assert base64.b64decode(recorded.split(",", 1)[1]) == script.clip_only_wav


def test_mplp_dialog_control_events_are_dotted_and_not_repeated_per_delivery(stored, script):
    events = to_mplp_dialog(stored)["events"]
    names = [e["event_type"] for e in events]
    assert names.count("ofp.floor.changed") == script.floor_changes
    for name in ("ofp.floor.grant", "ofp.floor.revoke", "ofp.floor.request", "ofp.floor.yield"):
        assert names.count(name) == 1, name
    assert names.count("ofp.invite") == 2
    assert names.count("ofp.invite.accept") == 2
    assert names.count("ofp.bye") == 1
    assert names.count("ofp.envelope.unreadable") == 1
    grant = next(e for e in events if e["event_type"] == "ofp.floor.grant")
    assert grant["data"] == {"sender": BOB.speaker_uri, "to": {"speakerUri": ALICE.speaker_uri}}
    last_floor = [e for e in events if e["event_type"] == "ofp.floor.changed"][-1]["data"]
    assert last_floor["convener"] is None
    assert [c["speakerUri"] for c in last_floor["conversants"]] == [
        USER.speaker_uri,
        ALICE.speaker_uri,
    ]


def test_mplp_ids_are_uuid4_deterministic_and_distinct(recorder, script, store):
    first = to_mplp_dialog(recorder.get_conversation(script.conversation_id))
    recorder.close()
    reopened = store.open()
    try:
        again = to_mplp_dialog(reopened.get_conversation(script.conversation_id))
        other = to_mplp_dialog(
            reopened.get_conversation(record_conversation(reopened, "conv-other").conversation_id)
        )
    finally:
        reopened.close()

    def ids(doc):
        return [
            doc["dialog_id"],
            doc["context_id"],
            *(m["event"]["event_id"] for m in doc["messages"]),
            *(e["event_id"] for e in doc["events"]),
        ]

    assert ids(first) == ids(again)
    assert all(UUID4.match(i) and uuid.UUID(i).version == 4 for i in ids(first))
    assert len(set(ids(first))) == len(ids(first))
    assert not set(ids(first)) & set(ids(other))


@pytest.mark.parametrize(
    ("end_status", "expected"),
    [
        (None, "active"),
        ("completed", "completed"),
        ("cancelled", "cancelled"),
        ("error", "cancelled"),
    ],
)
def test_mplp_status_follows_the_conversation(recorder, mplp_validator, end_status, expected):
    script = record_conversation(recorder, f"conv-{end_status}", end_status=end_status)
    doc = to_mplp_dialog(recorder.get_conversation(script.conversation_id))
    assert doc["status"] == expected
    assert ("ended_at" in doc) is (end_status is not None)
    assert schema_errors(mplp_validator, doc) == []


def test_event_types_open_floor_does_not_define_are_kept_in_both_exports(
    recorder, mplp_validator, agent_framework_validators
):
    shout = {"eventType": "shout", "to": {"speakerUri": USER.speaker_uri}}
    wire = {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": "c"},
            "sender": {"speakerUri": ALICE.speaker_uri},
            "events": [shout],
        }
    }
    recorder.conversation_started("c", at=START, user_speaker_uri=USER.speaker_uri)
    recorder.envelope("c", direction="in", peer=ALICE.speaker_uri, envelope=wire, at=START)
    stored = recorder.get_conversation("c")

    mplp = to_mplp_dialog(stored)
    assert schema_errors(mplp_validator, mplp) == []
    [event] = mplp["events"]
    assert event["event_type"] == "ofp.event.unknown"
    assert event["data"] == {"sender": ALICE.speaker_uri, "event": shout}

    durable = to_durable_agent_state(stored, ALICE.speaker_uri)
    for validator in agent_framework_validators.values():
        assert schema_errors(validator, durable) == []
    [entry] = durable["data"]["conversationHistory"]
    assert entry["$type"] == "response"
    assert entry["messages"][0]["contents"] == [{"$type": "unknown", "content": shout}]
