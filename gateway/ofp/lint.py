"""Checks an envelope the way an agent developer needs: strictly, against the official schemas.

:func:`check` is the conformance check behind ``ofp-gateway validate``. By default it is
**strict**: whatever the official envelope 1.1.0 schema rejects, whatever the dialog-event 1.0.2
and assistant-manifest 1.0.1 schemas reject in the dialog events and manifests an envelope
carries, and whatever the specification text rules out (§ cited in each hint) is a *problem*
(an error). Deviations the specification tolerates, or that the official samples themselves
show, are *warnings*. Each finding has a JSON path and, where one helps, a hint.

Separately from that verdict, :attr:`Report.accepted_leniently` says whether this gateway's own
runtime parser (:func:`~gateway.ofp.parse.parse_envelope`, which is deliberately lenient)
would still take the document. ``strict=False`` reproduces the old, lenient check: only what the
gateway refuses is a problem, and every deviation is a warning.

The schemas are the official files shipped in ``gateway/ofp/schemas`` (see its README for their
source, licence and known defects), read with jsonschema's ``Draft202012Validator``; nothing
outside the installed package is read.

Decisions where the official material contradicts itself (each keeps the 17 official 1.1.0
samples valid, and each is a warning, never silence):

* A dialog event without ``id`` is a warning: dialog-event 1.0.2 requires it, but the envelope
  schema does not check dialog events (its ``"ref"`` defect), and the 1.1.0 specification's own
  figures and five official samples omit it.
* In ``publishManifests`` lists, a manifest ``identification`` without ``organization``,
  ``conversationalName`` or ``synopsis``, and ``supportedLayers`` given as a list, are
  warnings: the official publishManifests sample (and §1.18's figure) do both. Conversants in
  the ``conversation`` section are checked by the envelope schema itself: there, missing keys
  are errors.
* ``assignedFloorRoles``/``floorGranted`` without ``conversants`` is a warning (§1.6.1 makes
  conversants mandatory then, but three official samples leave them out).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from gateway.ofp.envelope import (
    ALLOWED_PARAMETERS,
    VERSION,
    Envelope,
    EventType,
    load_json,
    parse_manifest,
)
from gateway.ofp.errors import EnvelopeError, Problem
from gateway.ofp.jsonio import DUPLICATE_KEY, child_path
from gateway.ofp.manifest import IDENTIFICATION_KEYS
from gateway.ofp.parse import parse_envelope

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError

#: The shipped official schema files (gateway/ofp/schemas) and the names used in hints.
SCHEMA_FILES: dict[str, tuple[str, str]] = {
    "envelope": ("conversation-envelope-1.1.0.json", "envelope 1.1.0 schema"),
    "dialog-event": ("dialog-event-1.0.2.json", "dialog-event 1.0.2 schema"),
    "manifest": ("assistant-manifest-1.0.1.json", "assistant-manifest 1.0.1 schema"),
}

_REQUIRED_IDENTIFICATION = (
    "speakerUri",
    "serviceUrl",
    "organization",
    "conversationalName",
    "synopsis",
)
_EVENT_TYPES = {e.value for e in EventType}
_BARE = _EVENT_TYPES - {k.value for k in ALLOWED_PARAMETERS}
_OVON_EVENTS = {
    "whisper",
    "requestManifest",
    "publishManifest",
    "findAssistant",
    "proposeAssistant",
}
#: Names the official publishManifests sample leaves out of its manifests (see the module doc).
_SAMPLE_OMITS = {"organization", "conversationalName", "synopsis"}


@dataclass
class Report:
    """The result of checking one document."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    envelope: Envelope | None = None
    dialect: str = ""
    #: Whether the gateway's runtime (lenient) parser takes the document.
    accepted_leniently: bool = False
    strict: bool = True

    @property
    def valid(self) -> bool:
        """True when the check found no problem (warnings allowed)."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form for ``validate --json``."""

        def rows(items: list[Problem]) -> list[dict[str, str]]:
            return [{"path": p.path, "message": p.message, "hint": p.hint} for p in items]

        return {
            "valid": self.valid,
            "mode": "strict" if self.strict else "lenient",
            "acceptedLeniently": self.accepted_leniently,
            "dialect": self.dialect,
            "version": self.envelope.version if self.envelope else None,
            "events": len(self.envelope.events) if self.envelope else 0,
            "problems": rows(self.problems),
            "warnings": rows(self.warnings),
        }


def check(data: bytes | str | dict[str, Any], *, strict: bool = True) -> Report:
    """Check one document: an OFP 1.x envelope, an OVON 0.9 envelope, or an assistant manifest.

    ``strict`` (the default) checks conformance to the official schemas and specification;
    ``strict=False`` only what this gateway refuses. Never raises on bad input.
    """
    report = Report(strict=strict)
    notes: list[Problem] = []
    try:
        doc = load_json(data, notes=notes)
    except EnvelopeError as err:  # not JSON, not UTF-8, non-finite numbers, too deep
        report.problems = err.problems
        return report
    for note in notes:
        if note.message == DUPLICATE_KEY or not strict:
            report.warnings.append(note)
        else:  # an unpaired surrogate: the text cannot be sent as UTF-8 (RFC 8259 §8.1)
            report.problems.append(note)

    if "openFloor" not in doc and "ovon" not in doc and "identification" in doc:
        return _check_manifest(doc, report)
    try:
        report.envelope = parse_envelope(doc)
        report.accepted_leniently = True
    except EnvelopeError as err:
        report.problems.extend(err.problems)
    if "ovon" in doc and "openFloor" not in doc:
        report.dialect = "ovon"
        note = Problem(
            "$.ovon",
            "an OVON 0.9 envelope, not Open Floor 1.1.0",
            'understood by this gateway, but current agents use {"openFloor": …} 1.1.0'
            + ("; --lenient accepts it" if strict else ""),
        )
        (report.problems if strict else report.warnings).append(note)
        return report
    report.dialect = "openFloor"
    body = doc.get("openFloor")
    if isinstance(body, dict):
        _walk(body, report)
    if strict:
        _strict(doc, report)
        _settle(report)
    return report


def _check_manifest(doc: dict[str, Any], report: Report) -> Report:
    report.dialect = "manifest"
    try:
        parse_manifest(doc)
        report.accepted_leniently = True
    except EnvelopeError as err:
        report.problems.extend(err.problems)
    if report.strict:
        _schema(report, "manifest", doc, "$")
        _settle(report)
    return report


# ------------------------------------------------------------------------------------ the schemas
@cache
def validator(kind: str) -> Draft202012Validator:
    """The jsonschema validator of a shipped official schema (``envelope``, ``dialog-event``,
    ``manifest``). Draft 2020-12 explicitly: the dialog-event file names no known meta-schema."""
    from jsonschema import Draft202012Validator  # only validate needs it; serve starts without

    name = SCHEMA_FILES[kind][0]
    text = resources.files("gateway.ofp").joinpath("schemas", name).read_text(encoding="utf-8")
    return Draft202012Validator(json.loads(text))


def _schema(
    report: Report,
    kind: str,
    instance: Any,
    base: str,
    *,
    demote: Any = None,
) -> None:
    """Validate ``instance`` against schema ``kind``; each failure becomes a problem at ``base``+
    its path, unless ``demote(problem, error)`` says it is a tolerated deviation (a warning)."""
    label = SCHEMA_FILES[kind][1]
    for err in validator(kind).iter_errors(instance):
        path = base
        for part in err.absolute_path:
            path = f"{path}[{part}]" if isinstance(part, int) else child_path(path, part)
        for problem in _describe(err, path, label):
            if demote is not None and demote(problem, err):
                report.warnings.append(problem)
            else:
                report.problems.append(problem)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _describe(err: ValidationError, path: str, label: str) -> list[Problem]:
    """Readable problems for one jsonschema error (its own message as the fallback)."""
    kind, instance = err.validator, err.instance
    # The keyword's value in the schema: any JSON. (The stubs add ``Unset``, which only errors
    # built by hand carry; these come from a validator.)
    expected: Any = err.validator_value
    schema = err.schema if isinstance(err.schema, Mapping) else {}
    if kind == "required" and isinstance(instance, dict):
        return [
            Problem(child_path(path, key), "missing", f"required by the {label}")
            for key in expected
            if key not in instance
        ]
    if kind == "additionalProperties" and schema.get("maxProperties") == 0:
        return []  # the maxProperties error says it once: "must be empty"
    if kind == "additionalProperties" and expected is False and isinstance(instance, dict):
        allowed = schema.get("properties", {})
        extra = [k for k in instance if k not in allowed]
        if path.endswith(".parameters"):
            hint = f"the {label} allows only: {', '.join(allowed) or 'no parameters'} here"
        else:
            hint = f"the {label} allows no other keys here: {', '.join(allowed)}"
        return [Problem(child_path(path, k), "unknown key", hint) for k in extra]
    if kind == "maxProperties" and expected == 0:
        return [Problem(path, "must be empty", f"this event type takes no parameters ({label})")]
    if kind == "enum":
        return [
            Problem(
                path,
                f"unknown value {instance!r}",
                "one of: " + ", ".join(map(str, expected)) + f" ({label})",
            )
        ]
    if kind == "type":
        wanted = expected if isinstance(expected, str) else " or ".join(expected)
        return [
            Problem(
                path, f"{_json_type(instance)}, not {wanted}", f"use a JSON {wanted} ({label})"
            )
        ]
    if kind == "anyOf" and all(
        isinstance(s, dict) and set(s) == {"required"} for s in expected or ()
    ):
        options = " or ".join(repr(s["required"][0]) for s in expected)
        return [Problem(path, f"needs {options}", f"required by the {label}")]
    if kind == "maxItems":
        return [Problem(path, f"more than {expected} item(s)", f"allowed by the {label}")]
    return [Problem(path, err.message, f"from the {label}")]


# --------------------------------------------------------------------------- strict: beyond schema
def _strict(doc: dict[str, Any], report: Report) -> None:
    """The official schemas (with the envelope schema's broken references done by hand) and the
    rules of the specification text that no schema states."""
    _schema(report, "envelope", doc, "$")
    body = doc.get("openFloor")
    if not isinstance(body, dict):
        return
    p = "$.openFloor"
    conv = body.get("conversation")
    if isinstance(conv, dict):
        _floor_roles(conv, f"{p}.conversation", report)
    events = body.get("events")
    for i, ev in enumerate(events if isinstance(events, list) else []):
        if not isinstance(ev, dict):
            continue
        ep = f"{p}.events[{i}]"
        kind = ev.get("eventType")
        to = ev.get("to")
        if isinstance(to, dict):
            if not any(isinstance(to.get(k), str) and to[k] for k in ("speakerUri", "serviceUrl")):
                _error(
                    report,
                    f"{ep}.to",
                    "names nobody",
                    "§1.8: a 'to' section must contain a serviceUrl or a speakerUri (or both); "
                    "leave it out to address everyone",
                )
            elif kind == "invite" and not to.get("serviceUrl"):
                _error(
                    report,
                    f"{ep}.to.serviceUrl",
                    "missing",
                    "§1.12: the 'to' of an invite must contain the invitee's serviceUrl",
                )
        params = ev.get("parameters")
        if not isinstance(params, dict):
            continue
        de = params.get("dialogEvent")
        if isinstance(de, dict):
            _dialog_event_strict(de, f"{ep}.parameters.dialogEvent", report)
        history = params.get("dialogHistory")
        for j, item in enumerate(history if isinstance(history, list) else []):
            if isinstance(item, dict):
                _dialog_event_strict(item, f"{ep}.parameters.dialogHistory[{j}]", report)
        if kind == "publishManifests":
            for key in ("servicingManifests", "discoveryManifests"):
                if key not in params:
                    continue
                manifests = params[key]
                if not isinstance(manifests, list):
                    _error(
                        report,
                        f"{ep}.parameters.{key}",
                        f"{_json_type(manifests)}, not array",
                        "§1.18: a list of assistant manifests",
                    )
                    continue
                for j, m in enumerate(manifests):
                    _schema(
                        report,
                        "manifest",
                        m,
                        f"{ep}.parameters.{key}[{j}]",
                        demote=_sample_manifest_deviation,
                    )


def _sample_manifest_deviation(problem: Problem, err: ValidationError) -> bool:
    """What the official publishManifests sample does (see the module doc): a warning."""
    if err.validator == "required" and problem.path.rsplit(".", 1)[-1] in _SAMPLE_OMITS:
        problem_path = problem.path.rsplit(".", 2)
        return len(problem_path) == 3 and problem_path[1] == "identification"
    return err.validator == "type" and problem.path.endswith(".supportedLayers")


def _dialog_event_id_missing(problem: Problem, err: ValidationError) -> bool:
    return err.validator == "required" and problem.path.endswith(".id") and len(err.path) == 0


def _dialog_event_strict(de: dict[str, Any], path: str, report: Report) -> None:
    _schema(report, "dialog-event", de, path, demote=_dialog_event_id_missing)
    features = de.get("features")
    if not isinstance(features, dict):
        return
    if "text" not in features:
        _error(
            report,
            f"{path}.features.text",
            "missing",
            "§1.10.1: the text feature is mandatory in every dialog event",
        )
    for name, feat in features.items():
        if not isinstance(feat, dict):
            continue
        fp = child_path(f"{path}.features", name)
        rows: list[tuple[str, Any]] = [(f"{fp}.tokens", feat.get("tokens"))]
        alternates = feat.get("alternates")
        for k, alt in enumerate(alternates if isinstance(alternates, list) else []):
            rows.append((f"{fp}.alternates[{k}]", alt))
        for tp, tokens in rows:
            for t, token in enumerate(tokens if isinstance(tokens, list) else []):
                conf = token.get("confidence") if isinstance(token, dict) else None
                if (
                    isinstance(conf, int | float)
                    and not isinstance(conf, bool)
                    and not (math.isfinite(conf) and 0.0 <= conf <= 1.0)
                ):
                    _error(
                        report,
                        f"{tp}[{t}].confidence",
                        f"{conf!r} is outside 0..1",
                        "dialog-event 1.0.2 §1.5: a confidence is a probability between 0.0 "
                        "and 1.0",
                    )


def _floor_roles(conv: dict[str, Any], path: str, report: Report) -> None:
    conversants = conv.get("conversants")
    roles = conv.get("assignedFloorRoles")
    if not isinstance(conversants, list):
        if roles is not None or conv.get("floorGranted") is not None:
            _warn(
                report,
                f"{path}.conversants",
                "missing",
                "§1.6.1: conversants are mandatory when assignedFloorRoles or floorGranted is "
                "present (the official floor samples leave them out too)",
            )
        return
    if not isinstance(roles, dict):
        return
    listed = {
        c["identification"].get("speakerUri")
        for c in conversants
        if isinstance(c, dict) and isinstance(c.get("identification"), dict)
    }
    for role, uris in roles.items():
        for k, uri in enumerate(uris if isinstance(uris, list) else []):
            if isinstance(uri, str) and uri not in listed:
                _error(
                    report,
                    f"{child_path(f'{path}.assignedFloorRoles', role)}[{k}]",
                    f"{uri!r} is not a conversant",
                    "§1.6.2: conversants assigned roles must also be listed in 'conversants'",
                )


def _settle(report: Report) -> None:
    """Strict mode: one finding per place. A problem already reported at a path hides a schema
    restatement of it, and a warning at or under a problem's path is dropped (the problem says
    it, usually with the same hint); of several warnings at one path the first is kept."""
    seen: set[tuple[str, str]] = set()
    paths: set[str] = set()
    problems = []
    for p in report.problems:
        key = (p.path, p.message)
        if key in seen or (p.path in paths and p.message == "missing"):
            continue
        seen.add(key)
        paths.add(p.path)
        problems.append(p)
    report.problems = problems

    def covered(path: str) -> bool:
        return any(path == q or path.startswith((q + ".", q + "[")) for q in paths)

    warnings, kept = [], set()
    for w in report.warnings:
        if covered(w.path) or w.path in kept:
            continue
        kept.add(w.path)
        warnings.append(w)
    report.warnings = warnings


# ------------------------------------------------------------------ deviations (both modes: warn)
def _warn(report: Report, path: str, message: str, hint: str = "") -> None:
    report.warnings.append(Problem(path, message, hint))


def _error(report: Report, path: str, message: str, hint: str = "") -> None:
    report.problems.append(Problem(path, message, hint))


def _walk(body: dict[str, Any], report: Report) -> None:
    """The deviations seen in real agents, which this gateway tolerates: warnings. (In strict
    mode most of them are also schema errors, which then take their place.)"""
    p = "$.openFloor"
    version = (
        (body.get("schema") or {}).get("version") if isinstance(body.get("schema"), dict) else None
    )
    if version is not None and version != VERSION:
        _warn(
            report,
            f"{p}.schema.version",
            f"version {version!r}",
            f'this gateway speaks "{VERSION}"',
        )
    conv = body.get("conversation")
    if isinstance(conv, dict):
        conversants = conv.get("conversants")
        for i, c in enumerate(conversants if isinstance(conversants, list) else []):
            ident = c.get("identification") if isinstance(c, dict) else None
            cp = f"{p}.conversation.conversants[{i}].identification"
            if not isinstance(ident, dict):
                _warn(report, cp, "missing", "each conversant carries its manifest identification")
                continue
            for key in _REQUIRED_IDENTIFICATION:
                if key not in ident:
                    _warn(report, f"{cp}.{key}", "missing", "required by the 1.1.0 schema")
            for key in ident:
                if key not in IDENTIFICATION_KEYS:
                    _warn(
                        report,
                        child_path(cp, key),
                        "unknown key",
                        "the 1.1.0 schema forbids extra keys here",
                    )
    events = body.get("events")
    if not isinstance(events, list):
        return
    for i, ev in enumerate(events):
        ep = f"{p}.events[{i}]"
        if not isinstance(ev, dict):
            continue
        kind = ev.get("eventType")
        if kind in _OVON_EVENTS:
            _warn(
                report,
                f"{ep}.eventType",
                f"OVON 0.9 event {kind!r} is not routed",
                "use the 1.1.0 event types",
            )
        elif isinstance(kind, str) and kind not in _EVENT_TYPES:
            _warn(report, f"{ep}.eventType", f"unknown event type {kind!r} is ignored")
        to = ev.get("to")
        if isinstance(to, str):
            _warn(report, f"{ep}.to", "a string", 'use {"serviceUrl": …} or {"speakerUri": …}')
        elif isinstance(to, dict):
            if not (to.get("speakerUri") or to.get("serviceUrl")):
                _warn(
                    report,
                    f"{ep}.to",
                    "names nobody",
                    "give a speakerUri or a serviceUrl, or leave 'to' out",
                )
            if to.get("private") and kind != "utterance":
                _warn(
                    report,
                    f"{ep}.to.private",
                    "has no effect on this event type",
                    "only utterances are private",
                )
        if kind == "invite" and not (isinstance(to, dict) and to.get("serviceUrl")):
            _warn(report, f"{ep}.to.serviceUrl", "an invite should name the invitee's serviceUrl")
        params = ev.get("parameters")
        if isinstance(params, dict):
            if kind in _BARE and params:
                _warn(report, f"{ep}.parameters", f"{kind} takes no parameters", "they are dropped")
            allowed = ALLOWED_PARAMETERS.get(EventType(kind), ()) if kind in _EVENT_TYPES else ()
            for key in params:
                if allowed and key not in allowed:
                    _warn(
                        report,
                        child_path(f"{ep}.parameters", key),
                        "unknown parameter",
                        f"{kind} takes {', '.join(allowed)}",
                    )
            if isinstance(params.get("dialogEvent"), dict):
                _dialog_event(
                    params["dialogEvent"], f"{ep}.parameters.dialogEvent", report, utterance=True
                )
            history = params.get("dialogHistory")
            for j, de in enumerate(history if isinstance(history, list) else []):
                if isinstance(de, dict):
                    _dialog_event(
                        de, f"{ep}.parameters.dialogHistory[{j}]", report, utterance=False
                    )
            for key in ("servicingManifests", "discoveryManifests"):
                manifests = params.get(key)
                for j, m in enumerate(manifests if isinstance(manifests, list) else []):
                    _manifest(m, f"{ep}.parameters.{key}[{j}]", report)


def _dialog_event(de: dict[str, Any], path: str, report: Report, *, utterance: bool) -> None:
    if "id" not in de:
        _warn(
            report,
            f"{path}.id",
            "missing",
            "dialog-event 1.0.2 requires an id (the 1.1.0 samples omit it); one was generated",
        )
    if "speakerUri" not in de:
        legacy = next((k for k in ("speakerId", "speakerID") if k in de), None)
        _warn(
            report,
            f"{path}.speakerUri",
            f"missing{' (has ' + legacy + ')' if legacy else ''}",
            "name the speaker with speakerUri",
        )
    span = de.get("span")
    if not isinstance(span, dict):
        _warn(report, f"{path}.span", "missing", 'add "span": {"startTime": "<RFC 3339>"}')
    elif "startTime" in span and "startOffset" in span:
        _warn(report, f"{path}.span", "both startTime and startOffset", "give one of them")
    features = de.get("features")
    if not isinstance(features, dict):
        return
    if utterance and "text" not in features:
        _error(
            report,
            f"{path}.features.text",
            "missing",
            "every utterance needs a text feature (§1.10.1)",
        )
    for name, feat in features.items():
        if isinstance(feat, dict) and "mimeType" not in feat:
            _warn(
                report,
                f"{child_path(f'{path}.features', name)}.mimeType",
                "missing",
                "each feature names its mime type",
            )


def _manifest(m: Any, path: str, report: Report) -> None:
    if not isinstance(m, dict):
        return
    ident = m.get("identification")
    if isinstance(ident, dict):
        for key in _REQUIRED_IDENTIFICATION:
            if key not in ident:
                _warn(
                    report, f"{path}.identification.{key}", "missing", "required by manifest 1.0.1"
                )
    caps = m.get("capabilities")
    if isinstance(caps, dict):
        _warn(
            report,
            f"{path}.capabilities",
            "an object",
            "manifest 1.0.1 makes capabilities an array",
        )
    for j, c in enumerate(caps if isinstance(caps, list) else []):
        if isinstance(c, dict) and isinstance(c.get("supportedLayers"), list):
            _warn(
                report,
                f"{path}.capabilities[{j}].supportedLayers",
                "a list",
                'use {"input": [...], "output": [...]}',
            )
