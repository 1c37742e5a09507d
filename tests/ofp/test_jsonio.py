"""The parse boundary: surrogates, non-finite numbers, duplicate keys, and nothing else escapes."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway.ofp import EnvelopeError, parse_envelope
from gateway.ofp.jsonio import MAX_DEPTH, dumps, loads_external


def test_a_lone_surrogate_becomes_the_replacement_character_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = '{"a": ["x\\ud800y", {"\\udc00k": "\\udfff"}], "b": "\\ud83d\\ude00"}'
    with caplog.at_level(logging.WARNING, logger="gateway.ofp.jsonio"):
        value = loads_external(text, source="http://agent.test")
    assert value == {"a": ["x\ufffdy", {"\ufffdk": "\ufffd"}], "b": "\U0001f600"}
    # Everything in it can now be encoded, which is what failed downstream before.
    json.dumps(value, ensure_ascii=False).encode("utf-8")
    assert "http://agent.test" in caplog.text and "U+FFFD" in caplog.text
    assert "$.a[0]" in caplog.text
    # A caller that takes the findings as data gets them with paths, and nothing is logged.
    caplog.clear()
    notes: list = []
    with caplog.at_level(logging.WARNING, logger="gateway.ofp.jsonio"):
        assert loads_external(text, notes=notes) == value
    assert sorted(n.path for n in notes) == ["$.a[0]", "$.a[1].\ufffdk", "$.a[1].\ufffdk"]
    assert caplog.text == ""


def test_a_top_level_surrogate_string_is_scrubbed_too() -> None:
    assert loads_external('"\\udbff"') == "\ufffd"


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ('{"confidence": 1e999}', "$.confidence"),
        ('{"confidence": -1e999}', "$.confidence"),
        ('{"x": [1, NaN]}', "$.x[1]"),
        ('{"x": {"y": Infinity}}', "$.x.y"),
        ('{"x": -Infinity}', "$.x"),
        ("NaN", "$"),
    ],
)
def test_non_finite_numbers_are_refused_naming_the_field(text: str, path: str) -> None:
    with pytest.raises(EnvelopeError) as err:
        loads_external(text)
    assert err.value.problems[0].path == path
    assert "non-finite" in err.value.problems[0].message


def test_duplicate_keys_keep_the_last_value_and_are_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    text = '{"a": 1, "b": {"c": 1, "c": 2, "c": 3}, "a": 4}'
    with caplog.at_level(logging.WARNING, logger="gateway.ofp.jsonio"):
        value = loads_external(text)
    assert value == {"a": 4, "b": {"c": 3}}
    assert caplog.text.count("duplicate key") == 2 and "$.b.c" in caplog.text
    notes: list = []
    loads_external(text, notes=notes)
    assert sorted(n.path for n in notes) == ["$.a", "$.b.c"]
    assert all("duplicate key" in n.message for n in notes)


@pytest.mark.parametrize(
    "data",
    [b"\xff\xfe{}", b'{"a": "\xed\xa0\x80"}', "{", "", "[1,]", '{"a": 1e99999999999}', "1" * 5000],
)
def test_broken_input_is_an_envelope_error(data: str | bytes) -> None:
    with pytest.raises(EnvelopeError):
        loads_external(data)


def test_nesting_is_bounded() -> None:
    assert loads_external("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(EnvelopeError):
        loads_external("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(EnvelopeError):
        loads_external("[" * 100_000 + "]" * 100_000)  # deeper than the interpreter's stack


def test_dumps_never_writes_non_json_numbers() -> None:
    with pytest.raises(ValueError):
        dumps({"confidence": float("inf")})
    assert dumps({"a": "é", "b": [1, 2]}, compact=True) == '{"a":"é","b":[1,2]}'
    assert dumps({"a": "é"}, ensure_ascii=True) == '{"a": "\\u00e9"}'


def _agent_reply(text_token: str, confidence: str = "0.9") -> str:
    return (
        '{"openFloor": {"schema": {"version": "1.1.0"}, "conversation": {"id": "c1"},'
        ' "sender": {"speakerUri": "tag:a"}, "events": [{"eventType": "utterance",'
        ' "parameters": {"dialogEvent": {"speakerUri": "tag:a", "features": {"text":'
        ' {"mimeType": "text/plain", "tokens": [{"value": ' + text_token + ","
        ' "confidence": ' + confidence + "}]}}}}}]}}"
    )


def test_an_agent_reply_with_a_surrogate_parses_into_encodable_text() -> None:
    env = parse_envelope(_agent_reply('"hi \\ud800 there"'))
    assert env.events[0].dialog_event.text() == "hi \ufffd there"
    env.to_json().encode("utf-8")  # the forward and the record no longer fail


@pytest.mark.parametrize("number", ["1e999", "NaN", "-Infinity"])
def test_an_agent_reply_with_a_non_finite_confidence_is_refused(number: str) -> None:
    with pytest.raises(EnvelopeError) as err:
        parse_envelope(_agent_reply('"hi"', number))
    assert err.value.problems[0].path.endswith(".tokens[0].confidence")


# --------------------------------------------------------------------------- property / fuzz
_hostile_atoms = st.sampled_from(
    [
        '"\\ud800"',
        '"\\udfff"',
        '"a\\ud83d"',
        '"\\ude00b"',
        '"\\ud83d\\ude00"',
        "NaN",
        "Infinity",
        "-Infinity",
        "1e999",
        "-1e999",
        "1e-999",
        "0",
        "-0.0",
        "true",
        "null",
        '"x"',
        '""',
    ]
)


@st.composite
def _json_texts(draw: st.DrawFn) -> str:
    """JSON-ish text built from hostile atoms, objects (with repeated keys) and arrays."""

    def build(depth: int) -> str:
        kind = draw(st.integers(0, 3 if depth < 6 else 0))
        if kind == 0:
            return draw(_hostile_atoms)
        if kind == 1:
            return "[" + ",".join(build(depth + 1) for _ in range(draw(st.integers(0, 3)))) + "]"
        keys = draw(
            st.lists(st.sampled_from(['"k"', '"\\ud800"', '"k"', '"\\udc00x"', '"z"']), max_size=4)
        )
        return "{" + ",".join(f"{k}:{build(depth + 1)}" for k in keys) + "}"

    text = build(0)
    # Sometimes break it: cut it short, or splice in random characters.
    mutation = draw(st.integers(0, 3))
    if mutation == 1 and text:
        text = text[: draw(st.integers(0, len(text) - 1))]
    elif mutation == 2:
        pos = draw(st.integers(0, len(text)))
        text = text[:pos] + draw(st.text(max_size=4)) + text[pos:]
    return text


def _all_strings_encodable(value: object) -> bool:
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            node.encode("utf-8")
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float):
            assert node == node and node not in (float("inf"), float("-inf"))
    return True


@settings(max_examples=400, deadline=None)
@given(_json_texts(), st.booleans())
def test_the_parser_raises_only_envelope_error_and_yields_only_safe_data(
    text: str, as_bytes: bool
) -> None:
    data: str | bytes = text.encode("utf-8", "surrogatepass") if as_bytes else text
    try:
        value = loads_external(data)
    except EnvelopeError:
        return
    assert _all_strings_encodable(value)
    dumps(value).encode("utf-8")


@settings(max_examples=200, deadline=None)
@given(_json_texts())
def test_parse_envelope_raises_only_envelope_error_on_hostile_envelopes(fragment: str) -> None:
    for text in (_agent_reply(fragment), _agent_reply('"x"', fragment)):
        try:
            env = parse_envelope(text)
        except EnvelopeError:
            continue
        env.to_json().encode("utf-8")


@settings(max_examples=150, deadline=None)
@given(_json_texts())
def test_validate_never_raises_on_hostile_envelopes(fragment: str) -> None:
    from gateway.ofp.lint import check

    for text in (_agent_reply(fragment), _agent_reply('"x"', fragment), fragment):
        for strict in (True, False):
            report = check(text, strict=strict)
            # Nothing passes validation that the gateway itself would refuse.
            if report.valid:
                assert report.accepted_leniently
