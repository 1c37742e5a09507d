"""The person's utterance as a dialog event, and the end-of-turn heuristic."""

from __future__ import annotations

import base64
import io
import wave
from datetime import UTC, datetime

import numpy as np
import pytest

from gateway.ofp import Envelope, Event, EventType, Sender
from gateway.proxy.sentences import looks_final
from gateway.proxy.utterance import UtteranceParts, speech_dialog_event
from gateway.voice.stt import Transcript, Word
from tests.ofp_schemas import assert_valid_dialog_event, assert_valid_envelope

TEXT = "Book a table, please."
WORDS = (
    Word(" Book", 0.3, 0.55, 0.9),
    Word(" a", 0.55, 0.6, 0.8),
    Word(" table,", 0.6, 1.0, 0.95),
    Word(" please.", 1.0, 1.4, 0.7),
)


def transcript(**over) -> Transcript:
    base = dict(
        text=TEXT,
        language="en",
        words=WORDS,
        confidence=0.84,
        avg_logprob=-0.2,
        alternates=("Book a cable, please.",),
        window="fitted",
        fell_back=False,
        audio_s=1.8,
        decode_s=0.1,
    )
    return Transcript(**{**base, **over})


CLIP = (np.sin(np.arange(int(1.8 * 16000)) / 7) * 8000).astype(np.int16)
AT = datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=UTC)


@pytest.mark.parametrize("audio", ["inline", "url", "off"])
def test_every_mode_validates(audio: str) -> None:
    de = speech_dialog_event(
        transcript(),
        CLIP,
        speaker_uri="tag:me",
        started_at=AT,
        parts=UtteranceParts(audio=audio),
        audio_url="https://gw/audio/x.wav",
    )
    wire = de.to_wire()
    assert_valid_dialog_event(wire)
    env = Envelope(
        conversation={"id": "c"},
        sender=Sender(speaker_uri="tag:me"),
        events=[Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": de})],
    )
    assert_valid_envelope(env.to_wire())
    assert ("audio" in wire["features"]) == (audio != "off")
    assert wire["span"] == {
        "startTime": "2026-01-02T03:04:05.678Z",
        "endTime": "2026-01-02T03:04:07.478Z",
    }


def test_text_is_one_token_and_words_annotate_it() -> None:
    de = speech_dialog_event(transcript(), CLIP, speaker_uri="tag:me", started_at=AT)
    assert de.text() == TEXT
    assert [t.value for t in de.features["text"].tokens] == [TEXT]
    assert de.features["text"].tokens[0].confidence == 0.84
    assert de.features["text"].alternates[0][0].value == "Book a cable, please."
    words = de.features["words"].tokens
    for tok in words:
        path = tok.links[0]
        start, end = map(int, path[path.index("(") + 1 : -1].split(","))
        assert TEXT[start:end] == tok.value  # the link points at exactly that word
        assert tok.links[1] == "$.audio.tokens[0].value"
    assert words[2].span.start_offset == "PT0.600S" and words[2].span.end_offset == "PT1S"


def test_inline_audio_is_the_clip() -> None:
    de = speech_dialog_event(transcript(), CLIP, speaker_uri="tag:me", started_at=AT)
    raw = base64.b64decode(de.features["audio"].tokens[0].value)
    with wave.open(io.BytesIO(raw)) as w:
        assert (w.getframerate(), w.getnchannels()) == (16000, 1)
        pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    assert np.array_equal(pcm, CLIP)


def test_parts_switch_off() -> None:
    de = speech_dialog_event(
        transcript(),
        CLIP,
        speaker_uri="tag:me",
        started_at=AT,
        parts=UtteranceParts(audio="off", words=False, alternates=False),
    )
    assert list(de.features) == ["text"] and de.features["text"].alternates is None
    with pytest.raises(ValueError, match="url"):
        speech_dialog_event(
            transcript(),
            CLIP,
            speaker_uri="tag:me",
            started_at=AT,
            parts=UtteranceParts(audio="url"),
        )


@pytest.mark.parametrize(
    ("text", "final"),
    [
        ("What time is it?", True),
        ("Turn on the lights.", True),
        ("Stop!", True),
        ("I want to go to the.", False),
        ("Call my brother and.", False),
        ("So I was thinking...", False),
        ("Well, I", False),
        ("", False),
        ('He said "yes."', True),
    ],
)
def test_looks_final(text: str, final: bool) -> None:
    assert looks_final(text) is final


def test_one_word_fragments_do_not_end_a_turn_early() -> None:
    assert looks_final("Stop.") and not looks_final("Stop.", min_words=2)
    assert looks_final("Stop now.", min_words=2)


def test_loop_start_finds_where_whisper_starts_again() -> None:
    from gateway.voice.whisper_checks import loop_start

    words = ["", "How", "far", "is", "the", "moon?", "How", "far", "is", "the"][1:]
    assert loop_start(words) == 5
    assert loop_start(["Set", "a", "timer", "for", "ten", "minutes."]) is None
    assert loop_start(["no,", "no,", "no,", "no."]) == 1  # a real repetition is found too


@pytest.mark.parametrize("language", ["fr", "de", "en"])
def test_the_text_lang_is_the_language_the_transcriber_decoded(language: str) -> None:
    de = speech_dialog_event(
        transcript(language=language), CLIP, speaker_uri="tag:me", started_at=AT
    ).to_wire()
    assert de["features"]["text"]["lang"] == language
    assert de["features"]["words"]["lang"] == language
    told = speech_dialog_event(
        transcript(language=language),
        CLIP,
        speaker_uri="tag:me",
        started_at=AT,
        parts=UtteranceParts(lang="en-GB"),
    ).to_wire()
    assert told["features"]["text"]["lang"] == "en-GB"
