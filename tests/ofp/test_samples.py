"""The official samples: every one parses, and re-emitted every one validates strictly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.cli import main
from gateway.ofp import parse_envelope, to_ovon
from gateway.ofp.lint import check
from tests.ofp_schemas import (
    SCHEMAS,
    assert_valid_envelope,
    assert_valid_manifest,
    assert_valid_ovon_envelope,
)

ENVELOPES = SCHEMAS / "conversation-envelope"
SAMPLES_110 = sorted((ENVELOPES / "1.1.0" / "sample-json").glob("*.json"))
SAMPLES_ALL = sorted(ENVELOPES.glob("*/sample-json/*.json"))


def test_there_are_seventeen_official_samples() -> None:
    assert len(SAMPLES_110) == 17


@pytest.mark.parametrize("path", SAMPLES_110, ids=lambda p: p.stem)
def test_official_sample_is_valid_and_reemits_strictly(path: Path) -> None:
    report = check(path.read_bytes())
    assert report.valid, report.problems
    env = parse_envelope(path.read_bytes())
    wire = env.to_wire()
    assert_valid_envelope(wire)
    # Nothing the sample said is lost on the way through.
    original = json.loads(path.read_text())["openFloor"]
    assert [e["eventType"] for e in wire["openFloor"]["events"]] == [
        e["eventType"] for e in original["events"]
    ]
    assert wire["openFloor"]["conversation"]["id"] == original["conversation"]["id"]
    for ev in wire["openFloor"]["events"]:
        for m in ev.get("parameters", {}).get("servicingManifests", []):
            assert_valid_manifest(m)


@pytest.mark.parametrize("path", SAMPLES_ALL, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_every_older_sample_is_understood_and_reemitted_as_1_1_0(path: Path) -> None:
    env = parse_envelope(path.read_bytes())
    assert_valid_envelope(env.to_wire())


def test_validate_command_accepts_all_official_samples(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["validate", "--json", *map(str, SAMPLES_110)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["valid"] is True
    assert len(out["files"]) == 17


def test_validate_command_reports_paths_and_hints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "openFloor": {
                    "schema": {"version": "1.1"},
                    "conversation": {"id": "c"},
                    "sender": {"speakerUri": "tag:a"},
                    "events": [
                        {"eventType": "utterance", "parameters": {}},
                        {"eventType": "dance"},
                    ],
                }
            }
        )
    )
    good = SAMPLES_110[0]
    code = main(["validate", "--json", str(good), str(bad)])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and out["valid"] is False
    bad_report = out["files"][1]
    assert bad_report["problems"][0]["path"] == "$.openFloor.events[0]"
    # Strict (the default): the unknown event type is an error of the 1.1.0 schema...
    assert "$.openFloor.events[1].eventType" in {p["path"] for p in bad_report["problems"]}
    assert {w["path"] for w in bad_report["warnings"]} == {"$.openFloor.schema.version"}
    # ...and --lenient reports it the old way: a warning (the gateway ignores the event).
    main(["validate", "--json", "--lenient", str(bad)])
    lenient = json.loads(capsys.readouterr().out)["files"][0]
    paths = {w["path"] for w in lenient["warnings"]}
    assert "$.openFloor.schema.version" in paths and "$.openFloor.events[1].eventType" in paths
    # Human output names the same path.
    main(["validate", str(bad)])
    text = capsys.readouterr().out
    assert "INVALID" in text and "$.openFloor.events[0]" in text


def test_validate_command_on_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "/nonexistent/x.json"]) == 1
    assert "cannot read" in capsys.readouterr().out


def test_ovon_output_validates_against_the_0_9_0_schema() -> None:
    for path in SAMPLES_110:
        assert_valid_ovon_envelope(to_ovon(parse_envelope(path.read_bytes())))
