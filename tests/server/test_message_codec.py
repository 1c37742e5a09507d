"""Messages as JSON (gateway/server/message_codec.py): what goes out, and hostile input read in."""

from __future__ import annotations

import pytest

from gateway.server import messages as m
from gateway.server.guard import ECHO_CHARS
from gateway.server.message_codec import Message, ProtocolError, read, read_json


def test_a_lone_surrogate_goes_out_escaped_and_the_rest_as_utf8() -> None:
    assert m.PartialTranscript("été").to_json() == '{"type": "partial", "text": "été"}'
    text = m.PartialTranscript("bad \ud800").to_json()
    assert "\\ud800" in text
    text.encode("utf-8")  # sendable
    with pytest.raises(ValueError):
        m.FinalTranscript("x", confidence=float("nan")).to_json()


def test_objects_of_named_values_are_read_value_by_value() -> None:
    """(No message has one yet: the reader is ready for a ``dict[str, …]`` field.)"""
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Stages(Message):
        TYPE = "stages"
        ms: dict[str, float | bool]

    data = {"type": "stages", "ms": {"stt": 120, "speculative": True}}
    assert Stages.from_dict(data) == Stages({"stt": 120.0, "speculative": True})
    assert Stages({"stt": 1.5}).to_dict() == {"type": "stages", "ms": {"stt": 1.5}}
    with pytest.raises(ProtocolError, match=r"'ms'\['stt'\] must be a number or true or false"):
        Stages.from_dict({"type": "stages", "ms": {"stt": "fast"}})
    with pytest.raises(ProtocolError, match="must be an object"):
        Stages.from_dict({"type": "stages", "ms": [1]})


def test_a_huge_type_is_quoted_short() -> None:
    with pytest.raises(ProtocolError) as info:
        read({"type": "x" * 200_000}, m.TO_GATEWAY)
    assert len(str(info.value)) < ECHO_CHARS + 100 and "200002 characters" in str(info.value)


def test_json_text_is_read_through_the_parse_boundary() -> None:
    deep = '{"type": "text", "text": ' + "[" * 5000 + "]" * 5000 + "}"
    for bad in ("not json", "[1]", deep, b"\xff\xfe"):
        with pytest.raises(ProtocolError, match="JSON objects"):
            read_json(bad, m.TO_GATEWAY)
    said = read_json('{"type": "text", "text": "typed \\ud800 here"}', m.TO_GATEWAY)
    assert said == m.SayText("typed \ufffd here")
