"""The Piper synthesizer: streaming, rates, pitch, limits and the shared voice cache."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from gateway.render.tts import (
    HEADROOM,
    SynthesisError,
    Synthesizer,
    SynthesizerBusy,
    VoiceSettings,
    load_voice,
    text_to_speak,
)
from tests.render.helpers import RATE, STEADY, speak
from tests.render.measure import longest_silence_ms, median_f0

LONG = (
    "Good morning. The forecast for today calls for scattered showers in the early hours, "
    "clearing by noon with temperatures climbing into the low twenties across the region. "
    "Tomorrow looks drier, although a cold front arriving from the north in the evening may "
    "bring strong gusts and a sharp drop in temperature overnight."
)


async def test_first_sentence_arrives_before_the_rest_is_made(synth):
    # Counted in sentences made when each chunk arrives, not in seconds: the first is heard
    # when only it has been synthesised, whatever the machine's speed.
    before = synth.sentences
    made, chunks = [], []
    async for chunk in synth.stream(LONG, STEADY, rate=RATE):
        made.append(synth.sentences - before)
        chunks.append(chunk)
    assert len(chunks) >= 3  # one per sentence (plus the resampler's tail)
    assert made == list(range(1, len(chunks) + 1))  # each chunk before the next is made
    alone = await speak(synth, "Good morning.")
    assert len(chunks[0]) == pytest.approx(len(alone), rel=0.05)


async def test_output_rate_and_headroom(synth):
    native = await speak(synth, "Testing the output rate.", rate=22050)
    wide = await speak(synth, "Testing the output rate.", rate=48000)
    assert len(wide) / 48000 == pytest.approx(len(native) / 22050, abs=0.01)
    assert np.abs(native).max() == pytest.approx(HEADROOM * 32767, rel=0.01)


async def test_pitch_shift_moves_f0_and_keeps_duration(synth):
    text = "Pitch should move while the timing stays nearly the same."
    base = await speak(synth, text)
    high = await speak(
        synth, text, VoiceSettings(noise_scale=0, noise_w_scale=0, pitch_semitones=5)
    )
    assert median_f0(high, RATE) / median_f0(base, RATE) == pytest.approx(2 ** (5 / 12), rel=0.1)
    assert len(high) == pytest.approx(len(base), rel=0.06)


async def test_length_scale_slows_speech(synth):
    text = "A steady sentence for timing."
    base = await speak(synth, text)
    slow = await speak(synth, text, VoiceSettings(noise_scale=0, noise_w_scale=0, length_scale=1.5))
    assert len(slow) > 1.25 * len(base)


async def test_empty_and_too_long_text():
    s = Synthesizer(max_chars=20)
    try:
        assert [c async for c in s.stream("   ", STEADY, rate=RATE)] == []
        with pytest.raises(SynthesisError, match="over the 20 limit"):
            async for _ in s.stream("x" * 21, STEADY, rate=RATE):
                pass
    finally:
        s.close()


@pytest.mark.slow
async def test_admission_bound_refuses_instead_of_queueing():
    s = Synthesizer(max_pending=1)

    async def run(text):
        return [c async for c in s.stream(text, STEADY, rate=RATE)]

    try:
        results = await asyncio.gather(
            run("First of two."), run("Second of two."), return_exceptions=True
        )
    finally:
        s.close()
    assert sum(isinstance(r, SynthesizerBusy) for r in results) == 1
    assert sum(isinstance(r, list) and len(r) > 0 for r in results) == 1


async def test_missing_voice_file_says_what_to_do(tmp_path):
    s = Synthesizer()
    try:
        with pytest.raises(SynthesisError, match=r"not found: a Piper voice is a \.onnx"):
            async for _ in s.stream("Hi.", VoiceSettings(model=tmp_path / "nope.onnx"), rate=RATE):
                pass
    finally:
        s.close()


@pytest.mark.slow
def test_one_loaded_voice_per_file():
    assert load_voice(VoiceSettings()) is load_voice(VoiceSettings(pitch_semitones=3, volume=2))


async def test_warm_up_and_sentence_gaps_are_natural(synth):
    await synth.warm_up()
    pcm = await speak(synth, "One sentence. Another sentence.")
    assert 100 <= longest_silence_ms(pcm, RATE) < 500  # Piper's own lead-out and lead-in


@pytest.mark.slow
async def test_waiting_listener_goes_before_a_listener_with_audio_queued():
    """Two people's first sentences queue behind a third's long one: the person with nothing
    to hear gets theirs first, though they asked second."""
    synth = Synthesizer(workers=1)
    await synth.warm_up()
    firsts: list[str] = []

    async def first_chunk(name: str, text: str, queued_s: float) -> None:
        async for _ in synth.paced_by(lambda: queued_s).stream(text, STEADY, rate=RATE):
            firsts.append(name)
            return

    try:
        occupier = asyncio.ensure_future(first_chunk("long", LONG.replace(".", ","), 0.0))
        await asyncio.sleep(0.05)  # the long sentence is being synthesized now
        later = asyncio.ensure_future(first_chunk("listening", "I still have audio queued.", 3.0))
        await asyncio.sleep(0.01)
        waiting = asyncio.ensure_future(first_chunk("waiting", "I hear silence.", 0.0))
        await asyncio.gather(occupier, later, waiting)
    finally:
        synth.close()
    assert firsts == ["long", "waiting", "listening"]


async def test_a_cached_voice_is_not_looked_up_again(synth, monkeypatch):
    await synth.warm_up()
    voice = await synth.load(VoiceSettings())

    def no_lookups(settings):
        raise AssertionError("looked up a voice the synthesizer already holds")

    monkeypatch.setattr("gateway.render.tts.load_voice", no_lookups)
    assert await synth.load(VoiceSettings()) is voice  # no thread hop, no file system calls
    assert await synth.paced_by(lambda: 1.0).load(VoiceSettings()) is voice


async def test_prosody_settings_share_one_loaded_voice(synth) -> None:
    """docs/bounds.md: an agent's SSML prosody values (any rate, pitch, volume) must not each
    make a cache entry of the synthesizer."""
    before = len(synth._loaded)
    for n in range(5):
        settings = STEADY.adjusted(rate=1 + n / 100, pitch_semitones=n / 3, volume_db=-n)
        assert len(await speak(synth, "Hi.", settings)) > 0
    assert len(synth._loaded) == max(before, 1)


def test_the_text_to_speak_is_trimmed_and_capped_for_every_synthesizer():
    assert text_to_speak("  Hello.\n", 6) == "Hello."
    with pytest.raises(SynthesisError, match="text of 7 characters is over the 6 limit"):
        text_to_speak("Hello!!", 6)
