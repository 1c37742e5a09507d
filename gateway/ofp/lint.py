"""Checks an envelope the way an agent developer needs: what is wrong, and what merely deviates.

:func:`check` parses with the lenient reader (so anything this gateway would refuse is a
*problem*) and then walks the raw document for the deviations seen in real agents, which this
gateway tolerates but another implementation may not (*warnings*). Each finding has a JSON path
and, where one helps, a hint. No JSON schema file is needed at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gateway.ofp.envelope import (
    ALLOWED_PARAMETERS,
    VERSION,
    Envelope,
    EventType,
    load_json,
    parse_envelope,
)
from gateway.ofp.errors import EnvelopeError, Problem
from gateway.ofp.manifest import IDENTIFICATION_KEYS

_REQUIRED_IDENTIFICATION = (
    "speakerUri",
    "serviceUrl",
    "organization",
    "conversationalName",
    "synopsis",
)
_BARE = {e.value for e in EventType} - {k.value for k in ALLOWED_PARAMETERS}
_OVON_EVENTS = {
    "whisper",
    "requestManifest",
    "publishManifest",
    "findAssistant",
    "proposeAssistant",
}


@dataclass
class Report:
    """The result of checking one document."""

    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    envelope: Envelope | None = None
    dialect: str = ""

    @property
    def valid(self) -> bool:
        """True when the document is an envelope this gateway accepts (warnings allowed)."""
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form for ``validate --json``."""

        def rows(items: list[Problem]) -> list[dict[str, str]]:
            return [{"path": p.path, "message": p.message, "hint": p.hint} for p in items]

        return {
            "valid": self.valid,
            "dialect": self.dialect,
            "version": self.envelope.version if self.envelope else None,
            "events": len(self.envelope.events) if self.envelope else 0,
            "problems": rows(self.problems),
            "warnings": rows(self.warnings),
        }


def check(data: bytes | str | dict[str, Any]) -> Report:
    """Check one envelope document (OFP 1.x or OVON 0.9)."""
    report = Report()
    try:
        doc = load_json(data)
    except EnvelopeError as err:
        report.problems = err.problems
        return report
    try:
        report.envelope = parse_envelope(doc)
    except EnvelopeError as err:
        report.problems.extend(err.problems)
    if "ovon" in doc and "openFloor" not in doc:
        report.dialect = "ovon"
        report.warnings.append(
            Problem(
                "$.ovon",
                "OVON 0.9 envelope",
                'understood, but current agents use {"openFloor": …} 1.1.0',
            )
        )
        return report
    report.dialect = "openFloor"
    body = doc.get("openFloor")
    if isinstance(body, dict):
        _walk(body, report)
    return report


def _warn(report: Report, path: str, message: str, hint: str = "") -> None:
    report.warnings.append(Problem(path, message, hint))


def _error(report: Report, path: str, message: str, hint: str = "") -> None:
    report.problems.append(Problem(path, message, hint))


def _walk(body: dict[str, Any], report: Report) -> None:
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
        for i, c in enumerate(conv.get("conversants") or []):
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
                        f"{cp}.{key}",
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
        elif isinstance(kind, str) and kind not in {e.value for e in EventType}:
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
            allowed = (
                ALLOWED_PARAMETERS.get(EventType(kind), ())
                if kind in {e.value for e in EventType}
                else ()
            )
            for key in params:
                if allowed and key not in allowed:
                    _warn(
                        report,
                        f"{ep}.parameters.{key}",
                        "unknown parameter",
                        f"{kind} takes {', '.join(allowed)}",
                    )
            if isinstance(params.get("dialogEvent"), dict):
                _dialog_event(
                    params["dialogEvent"], f"{ep}.parameters.dialogEvent", report, utterance=True
                )
            for j, de in enumerate(params.get("dialogHistory") or []):
                if isinstance(de, dict):
                    _dialog_event(
                        de, f"{ep}.parameters.dialogHistory[{j}]", report, utterance=False
                    )
            for key in ("servicingManifests", "discoveryManifests"):
                for j, m in enumerate(params.get(key) or []):
                    _manifest(m, f"{ep}.parameters.{key}[{j}]", report)


def _dialog_event(de: dict[str, Any], path: str, report: Report, *, utterance: bool) -> None:
    if "id" not in de:
        _warn(
            report, f"{path}.id", "missing", "dialog-event 1.0.2 requires an id; one was generated"
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
                f"{path}.features.{name}.mimeType",
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
