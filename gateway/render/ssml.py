"""SSML (W3C Speech Synthesis Markup Language 1.1) rendered to audio, not stripped to text.

:func:`parse_ssml` turns a document into a flat list of segments — :class:`Speech` (text with its
prosody), :class:`Silence` and :class:`Audio` — and :func:`gateway.render.ssml_audio.render_segments`
speaks them with the :class:`~gateway.render.tts.Synthesizer`; ``say-as`` is read aloud by
:mod:`gateway.render.say_as`. Malformed documents raise :class:`SSMLError` so the caller can fall
back to the plain ``text`` feature; attribute values this module does not understand are ignored
with a logged warning, and unknown elements keep their text.

Elements and how they sound:

``speak``
    The root; a fragment without it is wrapped in one.
``break``
    ``time="700ms"`` / ``"1.5s"`` (capped at :data:`MAX_BREAK_MS`), else ``strength``:
    none 0, x-weak 100, weak 250, medium 400 (the default), strong 700, x-strong 1200 ms.
``p``, ``s``
    A pause of :data:`PARAGRAPH_MS` / :data:`SENTENCE_MS` around the element (not at the very
    start or end of the document; adjacent boundaries take the longer, not the sum).
``prosody``
    ``rate``: x-slow 0.5, slow 0.75, medium/default 1.0, fast 1.3, x-fast 1.7; ``N%`` or a plain
    number multiplies the enclosing rate, ``+N%``/``-N%`` changes it by that much.
    ``pitch``: x-low -6, low -3, medium/default 0, high +3, x-high +6 semitones; relative
    ``+Nst``, ``+N%``, ``+NHz``; absolute ``NHz`` (against :data:`REFERENCE_F0`).
    ``volume``: silent, x-soft -12, soft -6, medium/default 0, loud +3, x-loud +6 dB; relative
    ``+NdB``/``-NdB`` or ``+N%``; a plain number 0–100 is absolute (100 = the normal level).
    Keywords and absolute values replace the enclosing value; relative ones add to it. Gains
    are capped at +6 dB, the synthesizer's headroom.
``emphasis``
    ``level``: strong (slower, higher, +4 dB), moderate (the default; a milder version), none,
    reduced (faster, lower, -3 dB).
``say-as``
    ``interpret-as``: characters / spell-out / letters / verbatim (letter by letter), digits,
    cardinal / number (``format="ordinal"`` or ``"digits"`` also work), ordinal, date
    (``format`` mdy, dmy, ymd, md, dm, ym, my, y, m, d or a pattern such as yyyymmdd),
    time (``format="hms24"`` reads 24-hour time), telephone. Others keep their text.
``sub``
    Speaks ``alias`` instead of the content.
``audio``
    Plays ``src`` (fetched with the caller's ``fetch``, decoded); if that fails, its content is
    spoken instead. ``desc`` inside it is never spoken.
``desc``, ``mark``, ``meta``, ``metadata``, ``lexicon``
    Silent.
anything else (``voice``, ``lang``, ``phoneme``, ``w``, vendor tags)
    Its text is spoken as if the tag were not there.
"""

from __future__ import annotations

import logging
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, replace

import defusedxml.ElementTree as SafeET
from defusedxml import DefusedXmlException

from gateway.errors import SpeechError
from gateway.render.say_as import READERS
from gateway.render.tts import VoiceSettings

log = logging.getLogger(__name__)

MAX_SSML_CHARS = 64 * 1024
MAX_DEPTH = 32
MAX_BREAK_MS = 10_000
SENTENCE_MS = 250
PARAGRAPH_MS = 600
#: The frequency absolute ``pitch="NHz"`` values are measured against (a typical speaking F0).
REFERENCE_F0 = 110.0
MAX_GAIN_DB = 6.0
MIN_RATE, MAX_RATE = 0.3, 2.5

BREAK_STRENGTH_MS = {
    "none": 0,
    "x-weak": 100,
    "weak": 250,
    "medium": 400,
    "strong": 700,
    "x-strong": 1200,
}
RATE_KEYWORDS = {
    "x-slow": 0.5,
    "slow": 0.75,
    "medium": 1.0,
    "default": 1.0,
    "fast": 1.3,
    "x-fast": 1.7,
}
PITCH_KEYWORDS = {
    "x-low": -6.0,
    "low": -3.0,
    "medium": 0.0,
    "default": 0.0,
    "high": 3.0,
    "x-high": 6.0,
}
VOLUME_KEYWORDS = {
    "silent": -math.inf,
    "x-soft": -12.0,
    "soft": -6.0,
    "medium": 0.0,
    "default": 0.0,
    "loud": 3.0,
    "x-loud": 6.0,
}
#: emphasis level → (rate, pitch semitones, volume dB)
EMPHASIS = {
    "strong": (0.8, 1.0, 4.0),
    "moderate": (0.9, 0.5, 2.0),
    "none": (1.0, 0.0, 0.0),
    "reduced": (1.1, -0.5, -3.0),
}
_SILENT_TAGS = {"desc", "mark", "meta", "metadata", "lexicon"}


class SSMLError(SpeechError, ValueError):
    """The SSML document is malformed; speak the ``text`` feature instead."""


@dataclass(frozen=True)
class Prosody:
    """How a stretch of speech is said, relative to the agent's voice."""

    rate: float = 1.0
    pitch_semitones: float = 0.0
    volume_db: float = 0.0

    def apply(self, settings: VoiceSettings) -> VoiceSettings:
        """``settings`` changed by this prosody."""
        return settings.adjusted(
            rate=self.rate, pitch_semitones=self.pitch_semitones, volume_db=self.volume_db
        )


@dataclass(frozen=True)
class Speech:
    """Text to synthesize."""

    text: str
    prosody: Prosody = Prosody()


@dataclass(frozen=True)
class Silence:
    """A pause."""

    ms: int


@dataclass(frozen=True)
class Audio:
    """A recording to play, and what to say if it cannot be played."""

    src: str
    fallback: tuple[Segment, ...] = ()


Segment = Speech | Silence | Audio


# --- parsing -----------------------------------------------------------------------------------


def parse_ssml(document: str, *, max_chars: int = MAX_SSML_CHARS) -> list[Segment]:
    """Parse an SSML document (or a fragment without ``<speak>``) into segments."""
    if len(document) > max_chars:
        raise SSMLError(f"SSML of {len(document)} characters is over the {max_chars} limit")
    body = re.sub(r"^\s*<\?xml[^>]*\?>", "", document).strip()
    if not re.match(r"<(\w+:)?speak[\s>/]|<!", body):  # <! : let the parser refuse the DTD
        body = f"<speak>{body}</speak>"
    try:
        root = SafeET.fromstring(body, forbid_dtd=True)
    except ET.ParseError as exc:
        raise SSMLError(f"SSML is not well-formed XML: {exc}") from exc
    except DefusedXmlException as exc:
        raise SSMLError(f"SSML with a DTD or entities is refused: {exc!r}") from exc
    builder = _Builder()
    builder.element(root, Prosody(), 0)
    return builder.finish()


def parse_ssml_tokens(values: list[str], *, max_chars: int = MAX_SSML_CHARS) -> list[Segment]:
    """Parse the tokens of an SSML feature: §1.10.1 joins a feature's tokens, but an agent may
    send each sentence as a ``<speak>`` document of its own, and two documents joined are not
    XML. So a token that is a whole document (``<speak>`` or ``<?xml``) is parsed alone, runs of
    fragment tokens are joined, and the segments follow one another in token order."""
    total = sum(len(v) for v in values)
    if total > max_chars:
        raise SSMLError(f"SSML of {total} characters is over the {max_chars} limit")
    documents: list[str] = []
    fragment: list[str] = []
    for value in values:
        if re.match(r"\s*<(\?xml|(\w+:)?speak[\s>/])", value):
            if fragment:
                documents.append("".join(fragment))
                fragment = []
            documents.append(value)
        else:
            fragment.append(value)
    if fragment:
        documents.append("".join(fragment))
    return [segment for d in documents for segment in parse_ssml(d, max_chars=max_chars)]


class _Builder:
    """Walks the element tree, merging adjacent text of equal prosody into one segment so that
    the synthesizer sees whole sentences."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self._text: list[str] = []
        self._prosody = Prosody()
        self._boundary_at_end = False  # last segment is a p/s pause, droppable at the end

    def finish(self) -> list[Segment]:
        self._flush()
        if self._boundary_at_end:
            self.segments.pop()
        return self.segments

    def text(self, text: str | None, prosody: Prosody) -> None:
        if not text:
            return
        if prosody != self._prosody and self._text:
            self._flush()
        self._prosody = prosody
        self._text.append(text)

    def pause(self, ms: int, *, boundary: bool = False) -> None:
        self._flush()
        last = self.segments[-1] if self.segments else None
        if boundary:
            if last is None:
                return  # nothing said yet: no pause before the first sentence
            if isinstance(last, Silence):
                self.segments[-1] = Silence(max(last.ms, ms))
                return
            self._boundary_at_end = True
        elif isinstance(last, Silence):
            self.segments[-1] = Silence(min(last.ms + ms, MAX_BREAK_MS))
            self._boundary_at_end = False
            return
        else:
            self._boundary_at_end = False
        self.segments.append(Silence(ms))

    def add(self, segment: Segment) -> None:
        self._flush()
        self.segments.append(segment)
        self._boundary_at_end = False

    def _flush(self) -> None:
        text = " ".join("".join(self._text).split())
        self._text.clear()
        if any(ch.isalnum() for ch in text):
            self.segments.append(Speech(text, self._prosody))
            self._boundary_at_end = False

    def element(self, el: ET.Element, prosody: Prosody, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise SSMLError(f"SSML is nested deeper than {MAX_DEPTH} elements")
        tag = _local(el.tag)
        if tag == "break":
            self.pause(_break_ms(el))
        elif tag in _SILENT_TAGS:
            pass
        elif tag == "say-as":
            self.text(_say_as(el), prosody)
        elif tag == "sub":
            alias = el.get("alias")
            self.text(alias if alias is not None else "".join(el.itertext()), prosody)
        elif tag == "audio":
            fallback = _Builder()
            fallback.children(el, prosody, depth)
            fallback_segments = tuple(fallback.finish())
            src = el.get("src")
            if src:
                self.add(Audio(src, fallback_segments))
            else:
                for seg in fallback_segments:
                    self.add(seg)
        elif tag in ("p", "s"):
            ms = PARAGRAPH_MS if tag == "p" else SENTENCE_MS
            self.pause(ms, boundary=True)
            self.children(el, prosody, depth)
            self.pause(ms, boundary=True)
        elif tag == "prosody":
            self.children(el, _prosody(el, prosody), depth)
        elif tag == "emphasis":
            level = el.get("level", "moderate")
            if level not in EMPHASIS:
                log.warning("SSML emphasis level %r not understood; using moderate", level)
                level = "moderate"
            rate, pitch, volume = EMPHASIS[level]
            changed = replace(
                prosody,
                rate=prosody.rate * rate,
                pitch_semitones=prosody.pitch_semitones + pitch,
                volume_db=min(prosody.volume_db + volume, MAX_GAIN_DB),
            )
            self.children(el, changed, depth)
        else:  # speak, and unknown elements: their text is spoken as is
            self.children(el, prosody, depth)

    def children(self, el: ET.Element, prosody: Prosody, depth: int) -> None:
        self.text(el.text, prosody)
        for child in el:
            self.element(child, prosody, depth + 1)
            self.text(child.tail, prosody)


def _local(tag: str) -> str:
    """Tag name without its namespace (SSML documents often declare the W3C one)."""
    return tag.rsplit("}", 1)[-1].lower()


_NUMBER = r"([+-]?)(\d+(?:\.\d+)?|\.\d+)"


def _break_ms(el: ET.Element) -> int:
    time = el.get("time")
    if time is not None:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*", time, re.IGNORECASE)
        if m:
            value = float(m.group(1)) * (1 if m.group(2).lower() == "ms" else 1000)
            return min(round(value), MAX_BREAK_MS)
        log.warning("SSML break time %r not understood (use e.g. 500ms or 1.5s)", time)
    strength = el.get("strength", "medium")
    if strength not in BREAK_STRENGTH_MS:
        log.warning("SSML break strength %r not understood; using medium", strength)
        strength = "medium"
    return BREAK_STRENGTH_MS[strength]


def _prosody(el: ET.Element, parent: Prosody) -> Prosody:
    out = parent
    if (v := el.get("rate")) is not None and (rate := _rate(v.strip(), parent.rate)) is not None:
        out = replace(out, rate=min(max(rate, MIN_RATE), MAX_RATE))
    if (v := el.get("pitch")) is not None and (
        pitch := _pitch(v.strip(), parent.pitch_semitones)
    ) is not None:
        out = replace(out, pitch_semitones=min(max(pitch, -12.0), 12.0))
    if (v := el.get("volume")) is not None and (
        volume := _volume(v.strip(), parent.volume_db)
    ) is not None:
        out = replace(out, volume_db=min(volume, MAX_GAIN_DB))
    return out


def _rate(v: str, parent: float) -> float | None:
    if v in RATE_KEYWORDS:
        return RATE_KEYWORDS[v]
    if m := re.fullmatch(_NUMBER + r"(%?)", v):
        sign, number, pct = m.groups()
        x = float(number) / (100 if pct else 1)
        if sign:
            return parent * (1 + x if sign == "+" else 1 - x) if pct else None
        return parent * x
    log.warning("SSML prosody rate %r not understood", v)
    return None


def _pitch(v: str, parent: float) -> float | None:
    if v in PITCH_KEYWORDS:
        return PITCH_KEYWORDS[v]
    if m := re.fullmatch(_NUMBER + r"\s*(st|%|hz)", v, re.IGNORECASE):
        sign, number, unit = m.group(1), float(m.group(2)), m.group(3).lower()
        signed = -number if sign == "-" else number
        if unit == "st" and sign:
            return parent + signed
        if unit == "%" and sign and signed > -100:
            return parent + 12 * math.log2(1 + signed / 100)
        if unit == "hz":
            base = REFERENCE_F0 * 2 ** (parent / 12)
            if sign and base + signed > 0:
                return parent + 12 * math.log2((base + signed) / base)
            if not sign and number > 0:
                return 12 * math.log2(number / REFERENCE_F0)
    log.warning("SSML prosody pitch %r not understood", v)
    return None


def _volume(v: str, parent: float) -> float | None:
    if v in VOLUME_KEYWORDS:
        return VOLUME_KEYWORDS[v]
    if m := re.fullmatch(_NUMBER + r"\s*(db|%)?", v, re.IGNORECASE):
        sign, number, unit = m.group(1), float(m.group(2)), (m.group(3) or "").lower()
        signed = -number if sign == "-" else number
        if unit == "db" and sign:
            return parent + signed
        if unit == "%" and sign:
            return parent + 20 * math.log10(1 + signed / 100) if signed > -100 else -math.inf
        if not unit and not sign and number <= 100:
            return 20 * math.log10(number / 100) if number > 0 else -math.inf
    log.warning("SSML prosody volume %r not understood", v)
    return None


def _say_as(el: ET.Element) -> str:
    text = " ".join("".join(el.itertext()).split())
    kind = (el.get("interpret-as") or "").lower()
    fmt = (el.get("format") or "").lower()
    if kind in ("cardinal", "number") and fmt in ("ordinal", "digits", "telephone"):
        kind = fmt
    reader: Callable[[str, str], str | None] | None = READERS.get(kind)
    if reader is None:
        log.warning("SSML say-as interpret-as=%r not supported; reading the text", kind)
        return text
    spoken = reader(text, fmt)
    if spoken is None:
        log.warning("SSML say-as %s could not read %r; reading it as text", kind, text)
        return text
    return spoken
