"""The person's speech as an Open Floor dialog event: text, word annotation and their own audio.

Shape of the dialog event (every part but ``text`` can be switched off)::

    span      startTime/endTime of the speech (wall clock, RFC 3339)
    text      text/plain: one token, the whole transcript, with its confidence and the
              utterance's span; ``alternates`` when the decoder gave any
    words     text/plain, stand-off annotation (dialog-event 1.0.2 §1.5): one token per word
              with its confidence, its span (offsets from the utterance start) and ``links`` to
              the characters of the transcript it covers and to the audio token
    audio     audio/wav: the person's own speech, inline base64 or a ``valueUrl``

Why the words are a separate feature rather than the tokens of ``text``: §1.10.1 reads a text
feature by concatenating its tokens, and many agents read only ``tokens[0].value``. One token
holding the whole transcript is what every agent understands; the words annotate it.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

import numpy as np

from gateway.audio import SAMPLE_RATE, wav_bytes
from gateway.ofp import DialogEvent, Feature, Span, Token
from gateway.ofp.timestamps import stamp
from gateway.voice.stt import Transcript

AudioMode = Literal["inline", "url", "off"]
WORDS_SCHEMA = "ofp-gateway:whisper-words"


@dataclass(frozen=True)
class UtteranceParts:
    """Which parts an utterance dialog event carries."""

    audio: AudioMode = "inline"
    words: bool = True
    alternates: bool = True
    #: The ``lang`` of the text features; None: the language the transcriber decoded.
    lang: str | None = None


def duration(seconds: float) -> str:
    """An ISO 8601 duration such as ``PT1.25S``."""
    return f"PT{max(0.0, seconds):.3f}S".replace(".000S", "S")


def _word_offsets(text: str, words: list[str]) -> list[tuple[int, int] | None]:
    """Character range of each word inside ``text`` (None where it cannot be found)."""
    out: list[tuple[int, int] | None] = []
    cursor = 0
    for w in words:
        w = w.strip()
        i = text.find(w, cursor) if w else -1
        if i < 0:
            out.append(None)
            continue
        out.append((i, i + len(w)))
        cursor = i + len(w)
    return out


def speech_dialog_event(
    transcript: Transcript,
    clip: np.ndarray,
    *,
    speaker_uri: str,
    started_at: datetime,
    parts: UtteranceParts | None = None,
    audio_url: str | None = None,
    previous_id: str | None = None,
    event_id: str | None = None,
) -> DialogEvent:
    """Build the dialog event of one spoken utterance.

    ``clip`` is the int16 16 kHz audio the transcript came from; ``started_at`` the wall time of
    its first sample; ``audio_url`` where the gateway serves the clip (needed for ``"url"``).
    """
    parts = parts or UtteranceParts()
    # What Whisper decoded (detected, or the one it was told), not a constant: a person speaking
    # French to a multilingual model is recorded and exported as French.
    lang = parts.lang or transcript.language or None
    clip_s = len(clip) / SAMPLE_RATE
    speech_end = max((w.end for w in transcript.words), default=clip_s)
    text_token = Token(
        value=transcript.text,
        confidence=round(transcript.confidence, 4) if transcript.words else None,
        span=Span(start_offset=duration(0), end_offset=duration(min(speech_end, clip_s))),
    )
    features: dict[str, Feature] = {}
    alternates = None
    if parts.alternates and transcript.alternates:
        alternates = [[Token(value=a)] for a in transcript.alternates]
    features["text"] = Feature(
        mime_type="text/plain", lang=lang, tokens=[text_token], alternates=alternates
    )

    audio_path = None
    if parts.audio == "inline":
        data = base64.b64encode(wav_bytes(clip.astype(np.int16), SAMPLE_RATE)).decode("ascii")
        features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value=data)])
        audio_path = "$.audio.tokens[0].value"
    elif parts.audio == "url":
        if not audio_url:
            raise ValueError("audio 'url' mode needs the URL the gateway serves the clip at")
        features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value_url=audio_url)])
        audio_path = "$.audio.tokens[0].valueUrl"

    if parts.words and transcript.words:
        tokens = []
        offsets = _word_offsets(transcript.text, [w.word for w in transcript.words])
        for w, where in zip(transcript.words, offsets, strict=True):
            links = []
            if where is not None:
                links.append(f"$.text.tokens[0].value.substring({where[0]},{where[1]})")
            if audio_path:
                links.append(audio_path)
            tokens.append(
                Token(
                    value=w.word.strip(),
                    confidence=round(w.probability, 4),
                    span=Span(start_offset=duration(w.start), end_offset=duration(w.end)),
                    links=links or None,
                )
            )
        features["words"] = Feature(
            mime_type="text/plain", lang=lang, token_schema=WORDS_SCHEMA, tokens=tokens
        )

    return DialogEvent(
        id=event_id or f"de:{uuid.uuid4()}",
        speaker_uri=speaker_uri,
        previous_id=previous_id,
        span=Span(
            start_time=stamp(started_at),
            end_time=stamp(started_at + timedelta(seconds=clip_s)),
        ),
        features=features,
    )
