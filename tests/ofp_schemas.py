"""Check the project's output against the official Open Floor JSON schemas.

The schemas are vendored in ``tests/schemas/openfloor`` (see ``tests/schemas/README.md`` for
where they come from); tests need them, the product does not. Two defects of the official files are worked around here: the 1.1.0 envelope schema writes
``"ref"`` for ``"$ref"`` (so it checks nothing inside dialogEvents: they are validated against
dialog-event 1.0.2 separately), and the dialog-event schema names no known meta-schema (so the
2020-12 validator is used explicitly for every schema).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMAS = Path(__file__).resolve().parent / "schemas" / "openfloor"

#: How many official samples each envelope version publishes (tests/schemas/README.md). Asserted,
#: so that a missing or moved folder fails the run instead of parametrizing zero tests.
ENVELOPE_SAMPLE_COUNTS = {
    "0.9.1": 7,
    "0.9.2": 11,
    "0.9.3": 11,
    "0.9.4": 15,
    "1.0.0": 15,
    "1.0.1": 17,
    "1.1.0": 17,
}


def envelope_samples(version: str | None = None) -> list[Path]:
    """The official envelope samples of ``version`` (every version's when ``None``), sorted.

    Raises ``AssertionError`` (at collection, so the run fails) unless exactly the published
    number of samples is found."""
    pattern = f"{version or '*'}/sample-json/*.json"
    found = sorted((SCHEMAS / "conversation-envelope").glob(pattern))
    if version is None:
        expected = sum(ENVELOPE_SAMPLE_COUNTS.values())
    else:
        expected = ENVELOPE_SAMPLE_COUNTS[version]
    assert len(found) == expected, (
        f"expected {expected} official envelope samples in {SCHEMAS}/conversation-envelope/"
        f"{pattern}, found {len(found)}: the vendored schemas are missing (tests/schemas/README.md)"
    )
    return found


@cache
def validator(kind: str, version: str) -> Draft202012Validator:
    """The validator for ``kind`` (conversation-envelope, dialog-event, assistant-manifest)."""
    path = SCHEMAS / kind / version / f"{kind}-schema.json"
    return Draft202012Validator(json.loads(path.read_text(encoding="utf-8")))


def _check(kind: str, version: str, doc: Any, where: str) -> None:
    errors = sorted(validator(kind, version).iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, f"{where} is not valid {kind} {version}:\n" + "\n".join(
        f"  at {'/'.join(map(str, e.path)) or '(root)'}: {e.message}" for e in errors
    )


def assert_valid_envelope(wire: dict[str, Any]) -> None:
    """``wire`` is a valid 1.1.0 envelope, and every dialog event and manifest in it is valid
    (dialog-event 1.0.2, assistant-manifest 1.0.1)."""
    _check("conversation-envelope", "1.1.0", wire, "envelope")
    for i, event in enumerate(wire["openFloor"]["events"]):
        params = event.get("parameters", {})
        if "dialogEvent" in params:
            _check("dialog-event", "1.0.2", params["dialogEvent"], f"events[{i}].dialogEvent")
        for j, de in enumerate(params.get("dialogHistory", [])):
            _check("dialog-event", "1.0.2", de, f"events[{i}].dialogHistory[{j}]")
        for key in ("servicingManifests", "discoveryManifests"):
            for j, manifest in enumerate(params.get(key, [])):
                assert_valid_manifest(manifest, f"events[{i}].{key}[{j}]")


def assert_valid_ovon_envelope(wire: dict[str, Any]) -> None:
    """``wire`` is a valid OVON 0.9.0 envelope."""
    _check("conversation-envelope", "0.9.0", wire, "OVON envelope")


def assert_valid_manifest(manifest: dict[str, Any], where: str = "manifest") -> None:
    """``manifest`` is a valid assistant manifest 1.0.1."""
    _check("assistant-manifest", "1.0.1", manifest, where)


def assert_valid_dialog_event(dialog_event: dict[str, Any], where: str = "dialogEvent") -> None:
    """``dialog_event`` is a valid dialog event 1.0.2."""
    _check("dialog-event", "1.0.2", dialog_event, where)
