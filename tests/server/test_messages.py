"""The page ↔ gateway messages (gateway/server/messages.py): the wire form, reading hostile input,
and the page's copy of the names (web/protocol.js, web/*.js, docs/client-protocol.md) in step."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import get_args

import pytest

from gateway.ofp import Feature, Token, text_event
from gateway.proxy.timing import Timing
from gateway.proxy.turn_taker import State
from gateway.server import messages as m
from gateway.server.message_codec import Message, ProtocolError, read, read_json
from gateway.server.protocol_js import render_js

ROOT = Path(__file__).resolve().parents[2]

#: One of every message; a class added without a sample here fails test_every_message_has_a_sample.
SAMPLES: list[Message] = [
    m.Hello(transport="ws", conversation_id="conv:1", token="t", mode="ptt", wake="off"),
    m.Hello(),
    m.SayText("hello"),
    m.Invite("builtin:parrot"),
    m.Uninvite("tag:parrot"),
    m.SetMode("handsfree"),
    m.PushToTalk(down=True),
    m.SetWake("phrase:hey floor"),
    m.StopSpeaking(),
    m.Ping(),
    m.SdpOffer("v=0"),
    m.Welcome(
        conversation_id="conv:1",
        token="t",
        rejoined=True,
        user=m.WelcomeUser("user:1", "You"),
        audio=m.AudioRates(16_000, 24_000),
        history=(
            m.FinalTranscript("hi", id="de:1", typed=True),
            m.AgentUtterance("de:2", "tag:parrot", "Parrot", "You said: hi", ("<b>hi</b>",)),
            m.PageNotice("Clock left", "@timedOut", agent="builtin:clock"),
        ),
        builtins=("clock", "parrot"),
        wake="alexa",
        wake_words=("alexa", "hey_jarvis"),
        keep_audio=True,
    ),
    m.StateUpdate(m.SessionState.HEARING),
    m.PartialTranscript("hel"),
    m.FinalTranscript("hello", id="de:3", confidence=0.875),
    m.FinalTranscript("Stop.", command="stop"),
    m.AgentUtterance("de:4", "tag:x", "X", "big", html=(), private=True, html_omitted="too deep"),
    m.FloorUpdate(
        (m.FloorConversant("user:1", "", "You"), m.FloorConversant("tag:p", "builtin:p", "P", "r")),
        floor_granted=("user:1",),
        convener="tag:p",
    ),
    m.PageNotice("Too many utterances at once", "@error"),
    m.WakeHeard("alexa"),
    m.Flush(),
    m.Playback("paused", reply="de:4", played_ms=1200),
    m.Playback("resumed", why="backchannel", heard="yeah", reply="de:4", played_ms=1240),
    m.Playback("stopped", "interruption", "wait", "de:4", played_ms=900, said="Once upon a"),
    m.SdpAnswer("v=0"),
    m.Pong(),
    m.TurnTiming(
        m.TurnStages(endpoint=210.0, stt=3.5, agent=None, tts_first_audio=95.25, total=330.0),
        since_last_voiced_ms=334.5,
    ),
    m.RequestError("no"),
    # Addressing (docs/floor.md), after the rest: tests above pick samples by position.
    m.SayText("what time is it", to="tag:clock", private=True),
    m.Address("tag:clock", private=True, sticky=False),
    m.Address(None),
    m.FinalTranscript(
        "Clock, time?", id="de:5", to="tag:clock", to_name="Clock", why="you named Clock"
    ),
    m.Discover("builtin:concierge"),
    m.Manifests(
        "builtin:concierge",
        (
            m.FoundManifest(
                "builtin:clock", "tag:clock", "Clock", "Tells the time.", ("time",), 0.8, True
            ),
        ),
    ),
    m.Manifests("https://gone.example", error="it did not answer in time"),
]


def test_every_message_has_a_sample() -> None:
    sampled = {type(s) for s in SAMPLES}
    assert set(m.TO_GATEWAY.values()) | set(m.FROM_GATEWAY.values()) == sampled


@pytest.mark.parametrize("message", SAMPLES, ids=lambda s: f"{type(s).__name__}")
def test_every_message_reads_back_as_itself(message: Message) -> None:
    registry = m.TO_GATEWAY if type(message) in m.TO_GATEWAY.values() else m.FROM_GATEWAY
    text = message.to_json()
    assert json.loads(text)["type"] == message.TYPE
    assert read_json(text, registry) == message
    assert type(message).from_json(text) == message


def test_the_wire_form_is_the_documented_one() -> None:
    """camelCase names; optional fields absent while None; other fields always there."""
    welcome = SAMPLES[11]
    assert isinstance(welcome, m.Welcome)
    assert welcome.to_dict() == {
        "type": "welcome",
        "conversationId": "conv:1",
        "token": "t",
        "rejoined": True,
        "user": {"speakerUri": "user:1", "name": "You"},
        "audio": {"inRate": 16000, "outRate": 24000},
        "history": [
            {"type": "transcript", "text": "hi", "id": "de:1", "typed": True},
            {
                "type": "utterance",
                "id": "de:2",
                "speakerUri": "tag:parrot",
                "speaker": "Parrot",
                "text": "You said: hi",
                "html": ["<b>hi</b>"],
                "private": False,
            },
            {
                "type": "notice",
                "text": "Clock left",
                "reason": "@timedOut",
                "agent": "builtin:clock",
            },
        ],
        "builtins": ["clock", "parrot"],
        "wake": "alexa",
        "wakeWords": ["alexa", "hey_jarvis"],
        "keepAudio": True,
    }
    assert m.FinalTranscript("Stop.", command="stop").to_dict() == {
        "type": "transcript",
        "text": "Stop.",
        "command": "stop",
    }
    floor = m.FloorUpdate((m.FloorConversant("user:1", "", "You"),)).to_dict()
    assert floor == {
        "type": "floor",
        "conversants": [{"speakerUri": "user:1", "serviceUrl": "", "name": "You", "role": None}],
        "floorGranted": [],
        "convener": None,  # the page reads null: no convener
    }
    assert m.StateUpdate(m.SessionState.IDLE).to_json() == '{"type": "state", "state": "idle"}'
    assert m.Hello().to_dict() == {"type": "hello", "transport": "none"}


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"type": "dance"}, "unknown or misplaced message 'dance'"),
        ({"text": "no type"}, "unknown or misplaced message None"),
        ({"type": 7}, "unknown or misplaced message 7"),
        ({"type": "welcome"}, "unknown or misplaced message 'welcome'"),  # the wrong direction
        ({"type": "mode", "mode": "x"}, "'mode' must be one of 'ptt', 'handsfree', not 'x'"),
        ({"type": "mode"}, "the 'mode' message needs 'mode'"),
        ({"type": "ptt", "down": "yes"}, "'down' must be true or false"),
        ({"type": "ptt", "down": 1}, "'down' must be true or false"),
        ({"type": "text", "text": ["a"]}, "'text' must be a string"),
        ({"type": "text", "text": "hi", "private": "yes"}, "'private' must be true or false"),
        ({"type": "text", "text": "hi", "to": 7}, "'to' must be a string or null"),
        ({"type": "address", "to": "tag:x", "private": 1}, "'private' must be true or false"),
        ({"type": "wake", "wake": None}, "'wake' must be a string"),
        ({"type": "offer", "sdp": {}}, "'sdp' must be a string"),
        ([1, 2], "messages are JSON objects"),
    ],
)
def test_bad_messages_are_refused_with_a_reason(data: object, said: str) -> None:
    with pytest.raises(ProtocolError) as info:
        read(data, m.TO_GATEWAY)
    assert said in str(info.value)


def test_what_is_read_is_typed_and_unknown_fields_are_ignored() -> None:
    msg = read({"type": "ptt", "down": True, "extra": {"from": "a newer page"}}, m.TO_GATEWAY)
    assert msg == m.PushToTalk(down=True)
    assert read({"type": "text"}, m.TO_GATEWAY) == m.SayText("")
    assert read({"type": "state", "state": "thinking"}, m.FROM_GATEWAY) == m.StateUpdate(
        m.SessionState.THINKING
    )
    with pytest.raises(ProtocolError, match="one of 'idle'"):
        read({"type": "state", "state": "dozing"}, m.FROM_GATEWAY)
    # A number where a float is due is a float; a boolean is not a number.
    assert read({"type": "transcript", "text": "x", "confidence": 1}, m.FROM_GATEWAY) == (
        m.FinalTranscript("x", confidence=1.0)
    )
    with pytest.raises(ProtocolError):
        read({"type": "transcript", "text": "x", "confidence": True}, m.FROM_GATEWAY)
    # A nested object is read and checked too.
    with pytest.raises(ProtocolError, match=r"'user'.*needs 'name'"):
        m.Welcome.from_dict({**SAMPLES[11].to_dict(), "user": {"speakerUri": "u"}})


def test_a_hello_is_never_refused_for_its_fields() -> None:
    hello = m.Hello.from_dict(
        {
            "type": "hello",
            "transport": "carrier pigeon",
            "conversationId": 5,
            "token": "t",
            "mode": "sometimes",
            "wake": ["alexa"],
        }
    )
    assert hello == m.Hello(transport="none", token="t")
    with pytest.raises(ProtocolError):  # but it must be a hello
        m.Hello.from_dict({"type": "text"})


def test_an_agents_dialog_event_shows_its_text_and_its_html_features() -> None:
    de = text_event("tag:agent", "plain words")
    de.features["card"] = Feature(mime_type="text/html", tokens=[Token(value="<b>card</b>")])
    de.features["html"] = Feature(mime_type="text/plain", tokens=[Token(value="<i>named</i>")])
    de.features["other"] = Feature(mime_type="image/png", tokens=[Token(value="not html")])
    shown = m.AgentUtterance.of(de, speaker="Agent", private=True)
    assert shown == m.AgentUtterance(
        de.id, "tag:agent", "Agent", "plain words", ("<b>card</b>", "<i>named</i>"), True
    )


def test_session_states_are_the_turn_takers() -> None:
    assert [s.value for s in m.SessionState] == list(get_args(State))


# ---------------------------------------------------------------------------- the page's copy
def test_web_protocol_js_is_generated_from_the_python_definitions() -> None:
    checked_in = (ROOT / "web" / "protocol.js").read_text()
    assert checked_in == render_js(m.TO_GATEWAY, m.FROM_GATEWAY, m.SessionState), (
        "web/protocol.js is out of date: python -m gateway.server.messages --js > web/protocol.js"
    )
    assert m.main(["--js"]) == 0


def _page_sources() -> dict[str, str]:
    return {
        p.name: p.read_text()
        for p in sorted((ROOT / "web").glob("*.js"))
        if p.name != "protocol.js"
    }


def _block(source: str, opening: str) -> str:
    """The text of the object literal that starts at ``opening`` (up to its closing brace)."""
    start = source.index(opening) + len(opening)
    depth, i = 1, start
    while depth:
        depth += {"{": 1, "}": -1}.get(source[i], 0)
        i += 1
    return source[start : i - 1]


def test_the_page_speaks_the_python_protocol() -> None:
    """Every message the page sends or handles, and every state it labels, is one Python defines;
    and the page sends every kind of message, handles every one it can be sent, labels every
    state — so a name added or renamed on either side fails here, not in a browser."""
    sources = _page_sources()
    js = "\n".join(sources.values())
    names = {
        "TO_GATEWAY": set(m.TO_GATEWAY),
        "FROM_GATEWAY": set(m.FROM_GATEWAY),
        "STATES": {s.value for s in m.SessionState},
    }
    # Names taken from web/protocol.js must be there.
    for obj, name in re.findall(r"\b(TO_GATEWAY|FROM_GATEWAY|STATES)\.(\w+)", js):
        assert name in names[obj], f"{obj}.{name} is not in gateway/server/messages.py"

    sent = set(re.findall(r"\btype:\s*TO_GATEWAY\.(\w+)", js))
    sent |= set(re.findall(r"send\(\{\s*type:\s*\"(\w+)\"", js))  # conn.send({ type: "text", … })
    sent |= set(re.findall(r"\{\s*type:\s*\"(hello)\"", js))
    handled = set(re.findall(r"\bFROM_GATEWAY\.(\w+)", js))
    handled |= set(re.findall(r"\bmessage\.type\s*===\s*\"(\w+)\"", js))
    labelled = set(re.findall(r"\bSTATES\.(\w+)", js))
    for source in sources.values():
        if "const handlers = {" in source:
            handled |= set(re.findall(r"^\s*(\w+):", _block(source, "const handlers = {"), re.M))
        if "const STATE_LABELS = {" in source:
            labelled |= set(
                re.findall(r"^\s*(\w+):", _block(source, "const STATE_LABELS = {"), re.M)
            )

    assert sent <= names["TO_GATEWAY"], f"the page sends {sent - names['TO_GATEWAY']}"
    assert handled <= names["FROM_GATEWAY"], f"the page handles {handled - names['FROM_GATEWAY']}"
    assert sent == names["TO_GATEWAY"], f"the page never sends {names['TO_GATEWAY'] - sent}"
    # A pong needs no handler: any message is a sign of life to web/connection.js. A turn's
    # timing is for clients that measure (scripts/load.py); the page does not show it.
    unhandled = names["FROM_GATEWAY"] - handled - {"pong", "timing"}
    assert not unhandled, f"the page has no handler for {unhandled}"
    # "off" is the page's own (no voice running), not a session state.
    assert labelled - {"off"} == names["STATES"]


def test_the_protocol_document_names_every_message() -> None:
    doc = (ROOT / "docs" / "client-protocol.md").read_text()
    documented = set(re.findall(r"\{\"type\": \"(\w+)\"", doc))
    assert set(m.TO_GATEWAY) | set(m.FROM_GATEWAY) <= documented
    assert "gateway/server/messages.py" in doc


def test_turn_stages_take_every_stage_timing_gives() -> None:
    """The page's stages are read from ``Timing.as_ms`` by their wire names: each of its keys
    lands in a field, none is dropped or left at its default."""
    timing = Timing(
        last_voiced=1.0,
        endpoint=1.2,
        transcript=1.5,
        sent=1.5,
        reply=2.0,
        first_audio=2.25,
        speculative=True,
        early_end=True,
        decode_s=0.125,
        queued_s=0.0625,
        end_reason="finished words",
        wait_ms=300,
        verdict_ms=120,
        semantic=0.875,
        semantic_ms=42.0,
    )
    ms = timing.as_ms()
    stages = m.TurnStages.from_ms(ms)
    assert m.TurnTiming(stages, 5.0).to_dict()["stagesMs"] == ms
    assert stages.end_reason == "finished words" and stages.wait_ms == 300
    assert stages.tts_first_audio == 250.0 and stages.semantic_ms == 42.0
