"""Property test: generated and mutated envelopes through the parser and the floor.

Every example feeds a sequence of envelopes (mutations of valid ones built from the official
samples and from generated events) to one floor. Nothing may raise except ``EnvelopeError``
(the documented parse error) and ``FloorBusy`` (the documented back-pressure), and the floor's
state must stay consistent: every floorGranted entry is a conversant, at most one convener, who
is a conversant, and every delivery it produces serialises to a schema-valid envelope.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.floor import Floor, FloorBusy
from gateway.ofp import EnvelopeError, Identification, parse_envelope
from tests.ofp_schemas import assert_valid_envelope, envelope_samples

SAMPLES = [json.loads(p.read_text()) for p in envelope_samples()]
EVENT_TYPES = [
    "utterance",
    "invite",
    "uninvite",
    "acceptInvite",
    "declineInvite",
    "bye",
    "getManifests",
    "publishManifests",
    "requestFloor",
    "grantFloor",
    "revokeFloor",
    "yieldFloor",
    "whisper",
    "?",
]
SPEAKERS = ["tag:user", "tag:a", "tag:b", "tag:chair", "tag:stranger", "https://c.example/ofp"]
ENVELOPES_PER_EXAMPLE = 5
EXAMPLES = 2_000  # × 5 envelopes = 10 000 envelopes per run

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(SPEAKERS),
)
json_value = st.recursive(
    json_leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def event(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(EVENT_TYPES))
    ev: dict[str, Any] = {"eventType": kind}
    if draw(st.booleans()):
        to: dict[str, Any] = {}
        if draw(st.booleans()):
            to["speakerUri"] = draw(st.sampled_from(SPEAKERS))
        if draw(st.booleans()):
            to["serviceUrl"] = draw(
                st.sampled_from(["https://a.example/ofp", "https://c.example/ofp"])
            )
        if draw(st.booleans()):
            to["private"] = draw(st.booleans())
        ev["to"] = to
    if kind in ("utterance", "whisper") or draw(st.booleans()):
        ev["parameters"] = {
            "dialogEvent": {
                "speakerUri": draw(st.sampled_from(SPEAKERS)),
                "features": {
                    "text": {
                        "mimeType": "text/plain",
                        "tokens": [{"value": draw(st.text(max_size=10))}],
                    }
                },
            }
        }
    if draw(st.booleans()):
        ev["reason"] = draw(st.sampled_from(["@timedOut", "@error ok", "plain", ""]))
    return ev


@st.composite
def base_envelope(draw: st.DrawFn) -> dict[str, Any]:
    if draw(st.booleans()):
        return copy.deepcopy(draw(st.sampled_from(SAMPLES)))
    return {
        "openFloor": {
            "schema": {"version": draw(st.sampled_from(["1.1.0", "1.1", "1.0.0", "0.9.4"]))},
            "conversation": {"id": "conv"},
            "sender": {"speakerUri": draw(st.sampled_from(SPEAKERS))},
            "events": draw(st.lists(event(), min_size=0, max_size=4)),
        }
    }


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated(draw: st.DrawFn) -> Any:
    doc = draw(base_envelope())
    for _ in range(draw(st.integers(0, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["delete", "replace", "retype"]))
        key = path[-1]
        if op == "delete":
            del parent[key]
        elif op == "replace":
            parent[key] = draw(json_value)
        else:
            parent[key] = json.dumps(parent[key]) if draw(st.booleans()) else [parent[key]]
    if draw(st.integers(0, 9)) == 0:
        return json.dumps(doc)[: draw(st.integers(0, 200))]  # truncated text
    return doc


def _ident(uri: str) -> Identification:
    return Identification(
        speaker_uri=uri,
        service_url=f"https://{uri[4:]}.example/ofp",
        organization="o",
        conversational_name=uri,
        synopsis="",
    )


def _check(floor: Floor) -> None:
    uris = {i.speaker_uri for i in floor.conversants}
    assert set(floor.floor_granted) <= uris
    assert len(floor.floor_granted) == len(set(floor.floor_granted))
    assert floor.convener is None or floor.convener in uris
    wire = floor.conversation().to_wire()
    assert len(wire["assignedFloorRoles"]["convener"]) <= 1


checked = {"schema": 0}


def _deliver(floor: Floor, deliveries: list, replies: list) -> None:
    for d in deliveries:
        wire = d.envelope.to_wire()
        if checked["schema"] % 25 == 0:  # full schema validation is slow; sample it
            assert_valid_envelope(wire)
        checked["schema"] += 1
        if d.awaits_reply:
            reply = replies.pop() if replies else None
            _deliver(floor, floor.convener_replied(reply), replies)
            _check(floor)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=bool(os.environ.get("CI")),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    docs=st.lists(mutated(), min_size=ENVELOPES_PER_EXAMPLE, max_size=ENVELOPES_PER_EXAMPLE),
    with_convener=st.booleans(),
)
def test_parser_and_floor_survive_mutated_envelopes(docs: list[Any], with_convener: bool) -> None:
    floor = Floor("conv", manager=_ident("tag:floor"), max_queued=4)
    for uri in ("tag:user", "tag:a", "tag:b", "tag:chair"):
        floor.join(_ident(uri), convener=with_convener and uri == "tag:chair")
    replies: list = []
    for doc in docs:
        try:
            env = parse_envelope(doc)
        except EnvelopeError as err:
            assert err.problems and all(p.path.startswith("$") for p in err.problems)
            continue
        if env.sender.speaker_uri == "tag:chair":
            replies.append(env)
        with contextlib.suppress(FloorBusy):
            _deliver(floor, floor.receive(env, origin="https://c.example/ofp"), replies)
        _check(floor)
