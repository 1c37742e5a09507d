"""Dialog events (Open Floor Dialog Event Object 1.0.2): what an utterance carries.

A dialog event has an id, one speaker, a span of time and any number of named features
(``text``, ``ssml``, ``html``, ``audio`` or custom), each a list of tokens of one mime type.
"""

from __future__ import annotations

import uuid
from typing import Any

from pydantic import Field, field_validator, model_validator

from gateway.ofp._base import WireModel

#: The mime type each standard feature has when an agent leaves it out.
DEFAULT_MIME_TYPES: dict[str, str] = {
    "text": "text/plain",
    "ssml": "application/ssml+xml",
    "html": "text/html",
    "audio": "audio/wav",
}


class Span(WireModel):
    """When something happened: an absolute ``startTime`` (RFC 3339) or a relative ``startOffset``
    (ISO 8601 duration), optionally with an end."""

    start_time: str | None = None
    end_time: str | None = None
    start_offset: str | None = None
    end_offset: str | None = None

    @model_validator(mode="after")
    def _needs_a_start(self) -> Span:
        # The schema requires one of the two; a span with neither is read as "at the reference".
        if self.start_time is None and self.start_offset is None:
            object.__setattr__(self, "start_offset", "PT0S")
        return self


class Token(WireModel):
    """One token of a feature: an inline ``value`` or a ``valueUrl``, with optional confidence,
    span and ``links`` (JSON paths into other features of the same event, §1.5)."""

    value: Any = None
    value_url: str | None = None
    confidence: float | None = None
    span: Span | None = None
    links: list[str] | None = None

    @model_validator(mode="after")
    def _value_or_url(self) -> Token:
        if self.value is None and self.value_url is None:
            raise ValueError("a token needs a 'value' or a 'valueUrl'")
        return self


class Feature(WireModel):
    """A named aspect of a dialog event: a mime type and its tokens, with optional alternates."""

    mime_type: str
    tokens: list[Token] = Field(default_factory=list)
    lang: str | None = None
    encoding: str | None = None
    token_schema: str | None = None
    alternates: list[list[Token]] | None = None

    def text(self) -> str:
        """The inline token values joined, the way §1.10.1 reads a text feature."""
        parts = [t.value for t in self.tokens if isinstance(t.value, str)]
        if len(parts) > 1 and all(" " not in p.strip() for p in parts):
            return " ".join(p.strip() for p in parts)  # word-per-token features
        return "".join(parts)


class DialogEvent(WireModel):
    """A dialog event (dialog-event 1.0.2 §1.2).

    Parsed leniently: a missing ``id`` is generated, ``speakerId`` (OVON 0.9) becomes
    ``speakerUri``, a missing span starts at the reference time, and features without a mime type
    get the standard one for their name.
    """

    id: str = Field(default_factory=lambda: f"de:{uuid.uuid4()}")
    speaker_uri: str = ""
    previous_id: str | None = None
    span: Span = Field(default_factory=Span)
    features: dict[str, Feature] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        for legacy in ("speakerId", "speakerID", "speaker_id"):
            if legacy in data and "speakerUri" not in data and "speaker_uri" not in data:
                data["speakerUri"] = data.pop(legacy)
        if data.get("id") is None:
            data.pop("id", None)
        if data.get("span") is None:
            data.pop("span", None)
        features = data.get("features")
        if isinstance(features, dict):
            fixed: dict[str, Any] = {}
            for name, feat in features.items():
                if isinstance(feat, dict):
                    feat = dict(feat)
                    if "mimeType" not in feat and "mime_type" not in feat:
                        feat["mimeType"] = DEFAULT_MIME_TYPES.get(name, "application/octet-stream")
                    feat.setdefault("tokens", [])
                fixed[str(name)] = feat
            data["features"] = fixed
        return data

    @field_validator("speaker_uri", mode="before")
    @classmethod
    def _uri_string(cls, v: Any) -> Any:
        return "" if v is None else v

    def text(self) -> str:
        """The plain text of the event: its ``text`` feature, else any text/plain feature."""
        feat = self.features.get("text")
        if feat is None:
            feat = next((f for f in self.features.values() if f.mime_type == "text/plain"), None)
        return feat.text() if feat else ""

    def to_wire(self) -> dict[str, Any]:
        """Strict output: validates against dialog-event-schema 1.0.2."""
        return self.wire()


def text_event(
    speaker_uri: str,
    text: str,
    *,
    start_time: str | None = None,
    lang: str | None = None,
    ssml: str | None = None,
    previous_id: str | None = None,
) -> DialogEvent:
    """A dialog event with a ``text`` feature (and an ``ssml`` one when given)."""
    features: dict[str, Feature] = {
        "text": Feature(mime_type="text/plain", lang=lang, tokens=[Token(value=text)])
    }
    if ssml is not None:
        features["ssml"] = Feature(mime_type="application/ssml+xml", tokens=[Token(value=ssml)])
    span = Span(start_time=start_time) if start_time else Span()
    return DialogEvent(
        speaker_uri=speaker_uri, span=span, features=features, previous_id=previous_id
    )
