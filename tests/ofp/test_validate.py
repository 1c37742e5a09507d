"""Strict ``validate``: what the official schemas or the specification rule out is an error.

Each case is checked through the function and through the real command line (a subprocess
``python -m gateway validate FILE``: exit code and output), in strict mode and with --lenient.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gateway.ofp.lint import SCHEMA_FILES, check, validator
from tests.ofp_schemas import SCHEMAS

ROOT = Path(__file__).resolve().parents[2]
SAMPLES_110 = sorted((SCHEMAS / "conversation-envelope" / "1.1.0" / "sample-json").glob("*.json"))


def _base() -> dict[str, Any]:
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": "c1"},
            "sender": {"speakerUri": "tag:a"},
            "events": [
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": {
                            "id": "de1",
                            "speakerUri": "tag:a",
                            "span": {"startTime": "2025-01-01T00:00:00Z"},
                            "features": {
                                "text": {
                                    "mimeType": "text/plain",
                                    "tokens": [{"value": "hi", "confidence": 0.5}],
                                }
                            },
                        }
                    },
                }
            ],
        }
    }


def _edit(change: Callable[[dict[str, Any]], None]) -> str:
    doc = _base()
    change(doc["openFloor"])
    return json.dumps(doc)


def _dialog_event(body: dict[str, Any]) -> dict[str, Any]:
    return body["events"][0]["parameters"]["dialogEvent"]


def _token(body: dict[str, Any]) -> dict[str, Any]:
    return _dialog_event(body)["features"]["text"]["tokens"][0]


_DE = "$.openFloor.events[0].parameters.dialogEvent"

#: name -> (document text, JSON path of the expected error, accepted leniently by the gateway)
CASES: dict[str, tuple[str, str, bool]] = {
    "bye with parameters": (
        _edit(lambda b: b["events"].append({"eventType": "bye", "parameters": {"why": "done"}})),
        "$.openFloor.events[1].parameters",
        True,
    ),
    "feature without tokens": (
        _edit(lambda b: _dialog_event(b)["features"].update(html={"mimeType": "text/html"})),
        f"{_DE}.features.html.tokens",
        True,
    ),
    "unknown eventType": (
        _edit(lambda b: b["events"].append({"eventType": "dance"})),
        "$.openFloor.events[1].eventType",
        True,
    ),
    "to naming nobody": (
        _edit(lambda b: b["events"][0].update(to={"private": True})),
        "$.openFloor.events[0].to",
        True,
    ),
    "confidence above 1": (
        _edit(lambda b: _token(b).update(confidence=1.5)),
        f"{_DE}.features.text.tokens[0].confidence",
        True,
    ),
    "confidence below 0": (
        _edit(lambda b: _token(b).update(confidence=-0.1)),
        f"{_DE}.features.text.tokens[0].confidence",
        True,
    ),
    "floorGranted as a string": (
        _edit(lambda b: b["conversation"].update(floorGranted="tag:a")),
        "$.openFloor.conversation.floorGranted",
        True,
    ),
    "reason not a string": (
        _edit(lambda b: b["events"].append({"eventType": "bye", "reason": 42})),
        "$.openFloor.events[1].reason",
        True,
    ),
    "conversant without organization": (
        _edit(
            lambda b: b["conversation"].update(
                conversants=[
                    {
                        "identification": {
                            "speakerUri": "tag:u",
                            "serviceUrl": "https://u.example",
                            "conversationalName": "John Doe",
                            "role": "User",
                        }
                    }
                ]
            )
        ),
        "$.openFloor.conversation.conversants[0].identification.organization",
        True,
    ),
    "lone UTF-16 surrogate": (
        json.dumps(_base()).replace('"hi"', '"hi \\ud800 there"'),
        f"{_DE}.features.text.tokens[0].value",
        True,
    ),
    "confidence 1e999": (
        json.dumps(_base()).replace("0.5", "1e999"),
        f"{_DE}.features.text.tokens[0].confidence",
        False,
    ),
    "confidence NaN": (
        json.dumps(_base()).replace("0.5", "NaN"),
        f"{_DE}.features.text.tokens[0].confidence",
        False,
    ),
    "mimeType missing in a dialogEvent (the envelope schema's broken ref)": (
        _edit(lambda b: _dialog_event(b)["features"]["text"].pop("mimeType")),
        f"{_DE}.features.text.mimeType",
        True,
    ),
    "dialogEvent without span": (
        _edit(lambda b: _dialog_event(b).pop("span")),
        f"{_DE}.span",
        True,
    ),
    "invite whose to has no serviceUrl (§1.12)": (
        _edit(lambda b: b["events"].append({"eventType": "invite", "to": {"speakerUri": "tag:b"}})),
        "$.openFloor.events[1].to.serviceUrl",
        True,
    ),
    "role holder not among the conversants (§1.6.2)": (
        _edit(
            lambda b: b["conversation"].update(
                conversants=[],
                assignedFloorRoles={"convener": ["tag:nobody"]},
            )
        ),
        "$.openFloor.conversation.assignedFloorRoles.convener[0]",
        True,
    ),
    "manifest capabilities as an object": (
        _edit(
            lambda b: b["events"].append(
                {
                    "eventType": "publishManifests",
                    "parameters": {
                        "servicingManifests": [
                            {
                                "identification": {
                                    "speakerUri": "tag:m",
                                    "serviceUrl": "https://m.example",
                                    "organization": "O",
                                    "conversationalName": "M",
                                    "synopsis": "S",
                                },
                                "capabilities": {"keyphrases": [], "descriptions": []},
                            }
                        ]
                    },
                }
            )
        ),
        "$.openFloor.events[1].parameters.servicingManifests[0].capabilities",
        True,
    ),
    "not an envelope at all": ("[1, 2]", "$", False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_strict_check_reports_an_error_with_path_and_hint(name: str) -> None:
    text, path, lenient_ok = CASES[name]
    report = check(text.encode())
    assert not report.valid
    errors = {p.path: p for p in report.problems}
    assert path in errors, report.problems
    assert errors[path].hint
    assert report.accepted_leniently is lenient_ok
    # The old, lenient check passes exactly what the gateway accepts.
    assert check(text.encode(), strict=False).valid is lenient_ok


def test_the_base_case_is_clean() -> None:
    report = check(json.dumps(_base()))
    assert report.valid and not report.warnings and report.accepted_leniently


def test_duplicate_keys_are_a_warning_only() -> None:
    text = json.dumps(_base()).replace('"id": "c1"', '"id": "c0", "id": "c1"')
    report = check(text)
    assert report.valid
    assert [(w.path, "duplicate" in w.message) for w in report.warnings] == [
        ("$.openFloor.conversation.id", True)
    ]
    assert report.envelope is not None and report.envelope.conversation.id == "c1"


def test_ovon_is_an_error_when_strict_and_a_warning_when_lenient() -> None:
    doc = {
        "ovon": {
            "schema": {"version": "0.9.0"},
            "conversation": {"id": "c1"},
            "sender": {"from": "https://a.example"},
            "events": [],
        }
    }
    strict = check(json.dumps(doc))
    assert not strict.valid and strict.accepted_leniently
    assert strict.problems[0].path == "$.ovon"
    assert check(json.dumps(doc), strict=False).valid


def test_a_manifest_file_is_checked_against_manifest_1_0_1() -> None:
    manifest = {
        "identification": {
            "speakerUri": "tag:m",
            "serviceUrl": "https://m.example",
            "organization": "O",
            "conversationalName": "M",
            "synopsis": "S",
        },
        "capabilities": [
            {
                "keyphrases": ["k"],
                "descriptions": ["d"],
                "supportedLayers": {"input": ["text"], "output": ["text"]},
            }
        ],
    }
    assert check(json.dumps(manifest)).valid
    bad = copy.deepcopy(manifest)
    del bad["identification"]["synopsis"]
    bad["capabilities"][0]["supportedLayers"] = ["text"]
    report = check(json.dumps(bad))
    assert {p.path for p in report.problems} == {
        "$.identification.synopsis",
        "$.capabilities[0].supportedLayers",
    }
    assert report.accepted_leniently


def test_one_finding_per_place() -> None:
    # bye with parameters: the schema says "must be empty" and "unknown key"; the old walk said
    # "takes no parameters": one error remains, no warning restates it.
    report = check(CASES["bye with parameters"][0])
    assert [p.path for p in report.problems] == ["$.openFloor.events[1].parameters"]
    assert not report.warnings


# ------------------------------------------------ conversants like the openfloor-python samples
def _openfloor_python_style(events: list[dict[str, Any]], *, two: bool) -> str:
    """Shaped like the five sample files of open-voice-interoperability/openfloor-python
    (python/sample_json/envelope0-2.json, out_envelope0-1.json): version 1.0.0, and a user
    conversant with only speakerUri, serviceUrl, conversationalName and role."""
    user = {
        "identification": {
            "speakerUri": "tag:userproxy.example,2025:abc",
            "serviceUrl": "https://userproxy.example",
            "conversationalName": "A User",
            "role": "User",
        }
    }
    bot = {
        "identification": {
            "speakerUri": "tag:bot.example,2025:1",
            "serviceUrl": "https://bot.example/openfloor",
            "organization": "Bot Inc.",
            "conversationalName": "bot",
            "role": "Helper",
            "synopsis": "A bot.",
        }
    }
    return json.dumps(
        {
            "openFloor": {
                "schema": {"version": "1.0.0"},
                "conversation": {"id": "conv:1", "conversants": [user, bot] if two else [user]},
                "sender": {"speakerUri": "tag:userproxy.example,2025:abc"},
                "events": events,
            }
        }
    )


_UTTER = {
    "eventType": "utterance",
    "to": {"speakerUri": "tag:bot.example,2025:1", "private": True},
    "parameters": {
        "dialogEvent": {
            "id": "de:1",
            "speakerUri": "tag:userproxy.example,2025:abc",
            "span": {"startTime": "2025-05-12T15:27:56.163085"},
            "features": {"text": {"mimeType": "text/plain", "tokens": [{"value": "Hello"}]}},
        }
    },
}
OPENFLOOR_PYTHON_STYLE = {
    "envelope0": _openfloor_python_style([_UTTER], two=True),
    "envelope1": _openfloor_python_style(
        [{"eventType": "invite", "to": {"serviceUrl": "https://bot.example/openfloor"}}], two=False
    ),
    "envelope2": _openfloor_python_style([_UTTER], two=True),
    "out_envelope0": _openfloor_python_style([], two=False),
    "out_envelope1": _openfloor_python_style(
        [{k: v for k, v in _UTTER.items() if k != "to"}], two=True
    ),
}


@pytest.mark.parametrize("name", list(OPENFLOOR_PYTHON_STYLE))
def test_conversants_without_organization_and_synopsis_are_errors(name: str) -> None:
    report = check(OPENFLOOR_PYTHON_STYLE[name])
    ident = "$.openFloor.conversation.conversants[0].identification"
    assert {p.path for p in report.problems} == {f"{ident}.organization", f"{ident}.synopsis"}
    assert report.accepted_leniently
    assert "$.openFloor.schema.version" in {w.path for w in report.warnings}


# --------------------------------------------------------------------------- the shipped schemas
def test_the_shipped_schemas_are_the_official_files_unchanged() -> None:
    upstream = {
        "envelope": SCHEMAS / "conversation-envelope/1.1.0/conversation-envelope-schema.json",
        "dialog-event": SCHEMAS / "dialog-event/1.0.2/dialog-event-schema.json",
        "manifest": SCHEMAS / "assistant-manifest/1.0.1/assistant-manifest-schema.json",
    }
    shipped = ROOT / "gateway" / "ofp" / "schemas"
    for kind, (name, _) in SCHEMA_FILES.items():
        ours = (shipped / name).read_bytes()
        assert hashlib.sha256(ours).digest() == hashlib.sha256(upstream[kind].read_bytes()).digest()
        assert validator(kind).schema == json.loads(ours)
    assert "Apache License" in (shipped / "LICENSE").read_text()
    assert "065a19427c63d1cc080ba19fe6542ccf903560e4" in (shipped / "README.md").read_text()


def test_there_are_seventeen_official_samples() -> None:
    assert len(SAMPLES_110) == 17


# ------------------------------------------------------------------------------ the command line
def _run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "gateway", "validate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=cwd,
    )


def test_cli_strict_and_lenient_over_every_case(tmp_path: Path) -> None:
    files = {}
    for i, (name, (text, _, _)) in enumerate(CASES.items()):
        files[name] = tmp_path / f"case{i}.json"
        files[name].write_text(text, encoding="utf-8")
    # One process per case in strict mode: exit code and output of each.
    for name, (_, path, lenient_ok) in CASES.items():
        result = _run(files[name], cwd=tmp_path)
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        out = result.stdout
        assert f"{files[name]}: INVALID" in out
        assert f"  error   {path}: " in out, (name, out)
        assert "hint: " in out
        lines = out.splitlines()
        verdict = f"  accepted leniently: {'yes' if lenient_ok else 'no'}"
        assert verdict in lines, (name, out)
        # The verdict comes after the errors, and once.
        assert lines.index(verdict) > max(i for i, ln in enumerate(lines) if ln.startswith("  error"))
        assert "Traceback" not in result.stderr
    # --lenient: exactly the cases the gateway accepts pass, in one run; exit 1 for the rest.
    lenient = _run("--lenient", "--json", *files.values(), cwd=tmp_path)
    assert lenient.returncode == 1
    by_file = {r["file"]: r for r in json.loads(lenient.stdout)["files"]}
    for name, (_, _, lenient_ok) in CASES.items():
        row = by_file[str(files[name])]
        assert row["valid"] is lenient_ok and row["mode"] == "lenient", name
        assert row["acceptedLeniently"] is lenient_ok
    accepted = [f for n, f in files.items() if CASES[n][2]]
    assert _run("--lenient", *accepted, cwd=tmp_path).returncode == 0


def test_cli_json_output_of_a_strict_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(CASES["lone UTF-16 surrogate"][0])
    result = _run("--json", bad)
    assert result.returncode == 1
    row = json.loads(result.stdout)["files"][0]
    assert row["mode"] == "strict" and row["acceptedLeniently"] is True
    assert row["problems"][0]["path"] == CASES["lone UTF-16 surrogate"][1]
    assert "U+FFFD" in row["problems"][0]["message"]


def test_cli_duplicate_keys_warn_and_exit_0(tmp_path: Path) -> None:
    dup = tmp_path / "dup.json"
    dup.write_text(json.dumps(_base()).replace('"id": "c1"', '"id": "c0", "id": "c1"'))
    result = _run(dup)
    assert result.returncode == 0, result.stdout
    assert "OK" in result.stdout
    assert "warning $.openFloor.conversation.id: duplicate key" in result.stdout
    assert "accepted leniently" not in result.stdout


def test_cli_accepts_all_seventeen_official_samples_strictly() -> None:
    result = _run("--json", *SAMPLES_110)
    assert result.returncode == 0, result.stdout
    out = json.loads(result.stdout)
    assert out["valid"] is True and len(out["files"]) == 17
    assert all(f["mode"] == "strict" and f["problems"] == [] for f in out["files"])


def test_cli_reads_standard_input() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "gateway", "validate", "-"],
        input=CASES["reason not a string"][0],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 1
    assert "$.openFloor.events[1].reason" in result.stdout
