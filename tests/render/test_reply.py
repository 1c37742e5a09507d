"""Which feature of an agent's utterance is played, and the fall-backs between them."""

from __future__ import annotations

import base64
import logging

import numpy as np
import pytest

from gateway.audio import wav_bytes
from gateway.ofp import DialogEvent
from gateway.render import parse_ssml, render_dialog_event, render_segments
from gateway.render.reply import LEAD_MS, fade_in
from gateway.render.ssml_audio import trim_silence
from tests.render.helpers import RATE, STEADY, no_fetch

TONE = (8000 * np.sin(2 * np.pi * 500 * np.arange(RATE // 4) / RATE)).astype(np.int16)
SSML = '<speak>Take the <emphasis level="strong">second</emphasis> left.</speak>'
TEXT = "Take the second left."


def event(**features: dict) -> DialogEvent:
    return DialogEvent.model_validate({"speakerUri": "tag:agent", "features": features})


def audio_feature(value: str, mime: str = "audio/wav") -> dict:
    return {"mimeType": mime, "tokens": [{"value": value}]}


def prompt(chunks: list[np.ndarray]) -> np.ndarray:
    """What a reply made of these synthesized chunks sounds like: the first one's lead-in
    silence cut to ``LEAD_MS`` and faded in."""
    first = fade_in(trim_silence(chunks[0], RATE, start=True, end=False, keep_ms=LEAD_MS), RATE)
    return np.concatenate([first, *chunks[1:]])


async def speak(synth, text: str) -> np.ndarray:
    return prompt([c async for c in synth.stream(text, STEADY, rate=RATE)])


async def say_ssml(synth, ssml: str) -> np.ndarray:
    segments = parse_ssml(ssml)
    return prompt([c async for c in render_segments(segments, synth, STEADY, no_fetch, rate=RATE)])


async def play(synth, ev: DialogEvent, fetch=no_fetch) -> np.ndarray:
    chunks = [c async for c in render_dialog_event(ev, synth, STEADY, fetch, rate=RATE)]
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)


async def test_audio_feature_wins_over_ssml_and_text(synth):
    wav = base64.b64encode(wav_bytes(TONE, RATE)).decode()
    ev = event(
        audio=audio_feature(wav),
        ssml={"tokens": [{"value": SSML}]},
        text={"tokens": [{"value": TEXT}]},
    )
    assert np.array_equal(await play(synth, ev), TONE)


async def test_any_audio_mime_feature_is_found_by_type(synth):
    wav = base64.b64encode(wav_bytes(TONE, RATE)).decode()
    ev = event(recording=audio_feature(wav, "audio/x-wav"), text={"tokens": [{"value": TEXT}]})
    assert np.array_equal(await play(synth, ev), TONE)


async def test_undecodable_audio_falls_back_to_ssml(synth, caplog):
    ev = event(
        audio=audio_feature(base64.b64encode(b"definitely not audio").decode()),
        ssml={"tokens": [{"value": SSML}]},
        text={"tokens": [{"value": TEXT}]},
    )
    with caplog.at_level(logging.WARNING):
        pcm = await play(synth, ev)
    assert np.array_equal(pcm, await say_ssml(synth, SSML))
    assert "audio feature not playable" in caplog.text


async def test_unfetchable_audio_url_falls_back_to_text(synth, caplog):
    ev = event(
        audio={"tokens": [{"valueUrl": "https://agent.example/reply.mp3"}]},
        text={"tokens": [{"value": TEXT}]},
    )
    with caplog.at_level(logging.WARNING):
        pcm = await play(synth, ev)
    assert np.array_equal(pcm, await speak(synth, TEXT))
    assert "not allowed in this test" in caplog.text


async def test_malformed_ssml_falls_back_to_text(synth, caplog):
    ev = event(
        ssml={"tokens": [{"value": "<speak>Take the <b>second left"}]},
        text={"tokens": [{"value": TEXT}]},
    )
    with caplog.at_level(logging.WARNING):
        pcm = await play(synth, ev)
    assert np.array_equal(pcm, await speak(synth, TEXT))
    assert "speaking the text feature instead" in caplog.text


async def test_ssml_is_rendered_not_stripped(synth):
    ev = event(ssml={"tokens": [{"value": SSML}]}, text={"tokens": [{"value": TEXT}]})
    pcm = await play(synth, ev)
    assert np.array_equal(pcm, await say_ssml(synth, SSML))
    assert len(pcm) > 1.05 * len(await speak(synth, TEXT))  # the emphasis is heard


async def test_html_is_never_spoken(synth):
    html = {"tokens": [{"value": "<p>Take the <b>second</b> left.</p>"}]}
    assert len(await play(synth, event(html=html))) == 0
    both = await play(synth, event(html=html, text={"tokens": [{"value": TEXT}]}))
    assert np.array_equal(both, await speak(synth, TEXT))


@pytest.mark.parametrize("features", [{}, {"text": {"tokens": [{"value": "   "}]}}])
async def test_nothing_to_say_yields_nothing(synth, features):
    assert len(await play(synth, event(**features))) == 0


async def test_ssml_by_reference_or_empty_leaves_the_text_to_speak(synth):
    ev = event(
        ssml={"tokens": [{"valueUrl": "https://agent.example/reply.ssml"}]},
        text={"tokens": [{"value": TEXT}]},
    )
    assert np.array_equal(await play(synth, ev), await speak(synth, TEXT))


def lead_ms(pcm: np.ndarray) -> float:
    """Milliseconds before the first sample above 5 % of the peak."""
    magnitude = np.abs(pcm.astype(np.int32))
    return float(np.nonzero(magnitude > 0.05 * magnitude.max())[0][0] * 1000 / RATE)


async def test_synthesized_speech_starts_without_pipers_lead_in(synth):
    """Piper opens "Hi, I'm Parrot." with ~100 ms of silence: the listener would wait for it."""
    raw = np.concatenate([c async for c in synth.stream("Hi, I'm Parrot.", STEADY, rate=RATE)])
    assert lead_ms(raw) > 50
    for ev in (
        event(text={"tokens": [{"value": "Hi, I'm Parrot."}]}),
        event(ssml={"tokens": [{"value": "<speak>Hi, I'm <emphasis>Parrot</emphasis>.</speak>"}]}),
    ):
        played = await play(synth, ev)
        assert lead_ms(played) <= LEAD_MS + 10  # 5 % of a louder later peak
        assert played[0] == 0  # faded in from zero: the cut makes no click


async def test_a_reply_opening_with_a_break_keeps_it(synth):
    ev = event(ssml={"tokens": [{"value": '<speak><break time="400ms"/>Hello.</speak>'}]})
    assert lead_ms(await play(synth, ev)) >= 400


async def test_an_agents_own_recording_is_played_as_recorded(synth):
    recorded = np.concatenate([np.zeros(RATE // 5, dtype=np.int16), TONE])  # 200 ms, then sound
    ev = event(audio=audio_feature(base64.b64encode(wav_bytes(recorded, RATE)).decode()))
    assert np.array_equal(await play(synth, ev), recorded)


async def test_every_speak_document_of_an_ssml_reply_is_spoken(synth):
    """Issue 30: an agent sending one ``<speak>`` document per sentence is heard whole (the
    tokens joined are two XML roots, which fell back to the text feature's first sentence)."""
    first, second = "<speak>Take the second left.</speak>", "<speak>Then it is on your right.</speak>"
    ev = event(
        ssml={"tokens": [{"value": first}, {"value": second}]},
        text={"tokens": [{"value": TEXT}]},
    )
    pcm = await play(synth, ev)
    segments = parse_ssml(first) + parse_ssml(second)
    both = prompt([c async for c in render_segments(segments, synth, STEADY, no_fetch, rate=RATE)])
    assert np.array_equal(pcm, both)
    assert len(pcm) > 1.6 * len(await say_ssml(synth, first))  # the second sentence is heard
