"""Parsed SSML spoken: each element rendered by the real Piper voice, measured on the audio it
produces; and the silence trimmed where a prosody change splits a phrase."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.audio import wav_bytes
from gateway.render.ssml_audio import trim_silence
from tests.render.helpers import RATE, say_ssml
from tests.render.measure import active_rms, longest_silence_ms, median_f0

SENTENCE = "The weather today is sunny with a light breeze from the west."


def seconds(pcm: np.ndarray) -> float:
    return len(pcm) / RATE


async def test_break_time_adds_that_much_silence(synth):
    plain = await say_ssml(synth, "<speak>Turn left here and then walk on.</speak>")
    broken = await say_ssml(
        synth, '<speak>Turn left here <break time="700ms"/> and then walk on.</speak>'
    )
    gap = longest_silence_ms(broken, RATE)
    assert 700 <= gap <= 700 + 400  # the break plus the voice's own lead-out and lead-in
    assert longest_silence_ms(plain, RATE) < 400


@pytest.mark.parametrize(("time", "ms"), [("1s", 1000), ("1.5s", 1500), ("300ms", 300)])
async def test_break_time_units(synth, time, ms):
    pcm = await say_ssml(synth, f'<speak>Hello <break time="{time}"/> world.</speak>')
    assert ms <= longest_silence_ms(pcm, RATE) <= ms + 400


async def test_break_strengths_are_ordered(synth):
    gaps = []
    for strength in ("none", "weak", "strong", "x-strong"):
        pcm = await say_ssml(synth, f'<speak>Hello <break strength="{strength}"/> world.</speak>')
        gaps.append(longest_silence_ms(pcm, RATE))
    assert gaps == sorted(gaps)
    assert gaps[-1] - gaps[0] >= 1000  # x-strong 1200 ms vs none 0 ms


async def test_prosody_rate_changes_duration(synth):
    durations = {}
    for rate in ("x-slow", "slow", "medium", "fast", "x-fast"):
        pcm = await say_ssml(synth, f'<speak><prosody rate="{rate}">{SENTENCE}</prosody></speak>')
        durations[rate] = seconds(pcm)
    assert list(durations.values()) == sorted(durations.values(), reverse=True)
    assert durations["slow"] / durations["medium"] == pytest.approx(1 / 0.75, rel=0.15)
    assert durations["fast"] / durations["medium"] == pytest.approx(1 / 1.3, rel=0.15)


async def test_prosody_rate_percentages(synth):
    base = seconds(await say_ssml(synth, f"<speak>{SENTENCE}</speak>"))
    half = seconds(
        await say_ssml(synth, f'<speak><prosody rate="50%">{SENTENCE}</prosody></speak>')
    )
    minus = seconds(
        await say_ssml(synth, f'<speak><prosody rate="-20%">{SENTENCE}</prosody></speak>')
    )
    assert half / base == pytest.approx(2.0, rel=0.15)
    assert minus / base == pytest.approx(1.25, rel=0.1)


async def test_prosody_volume_changes_loudness(synth):
    levels = {}
    for volume in ("x-soft", "medium", "+6dB", "-6dB"):
        pcm = await say_ssml(
            synth, f'<speak><prosody volume="{volume}">{SENTENCE}</prosody></speak>'
        )
        levels[volume] = active_rms(pcm, RATE)
    assert levels["+6dB"] / levels["medium"] == pytest.approx(2.0, rel=0.1)
    assert levels["-6dB"] / levels["medium"] == pytest.approx(0.5, rel=0.1)
    assert levels["x-soft"] / levels["medium"] == pytest.approx(10 ** (-12 / 20), rel=0.15)


async def test_prosody_volume_silent_makes_no_sound(synth):
    pcm = await say_ssml(synth, f'<speak><prosody volume="silent">{SENTENCE}</prosody></speak>')
    assert len(pcm) > RATE  # the time passes ...
    assert np.abs(pcm).max() == 0  # ... in silence


async def test_prosody_pitch_changes_f0_not_duration(synth):
    f0, dur = {}, {}
    for pitch in ("-4st", "default", "+4st", "x-high"):
        pcm = await say_ssml(synth, f'<speak><prosody pitch="{pitch}">{SENTENCE}</prosody></speak>')
        f0[pitch], dur[pitch] = median_f0(pcm, RATE), seconds(pcm)
    assert f0["-4st"] < 0.93 * f0["default"] < 0.93**2 * f0["+4st"]
    assert f0["x-high"] > 1.2 * f0["default"]  # +6 semitones is a ratio of 1.41
    for pitch in ("-4st", "+4st"):
        assert dur[pitch] == pytest.approx(dur["default"], rel=0.06)


async def test_prosody_pitch_in_hertz_and_percent(synth):
    base = median_f0(await say_ssml(synth, f"<speak>{SENTENCE}</speak>"), RATE)
    up = median_f0(
        await say_ssml(synth, f'<speak><prosody pitch="+30%">{SENTENCE}</prosody></speak>'), RATE
    )
    down = median_f0(
        await say_ssml(synth, f'<speak><prosody pitch="-25Hz">{SENTENCE}</prosody></speak>'), RATE
    )
    assert up > 1.15 * base
    assert down < 0.9 * base


async def test_emphasis_is_slower_and_louder(synth):
    plain = await say_ssml(synth, "<speak>This is important.</speak>")
    strong = await say_ssml(
        synth, '<speak><emphasis level="strong">This is important.</emphasis></speak>'
    )
    reduced = await say_ssml(
        synth, '<speak><emphasis level="reduced">This is important.</emphasis></speak>'
    )
    assert seconds(strong) > 1.1 * seconds(plain) > 1.1 * seconds(reduced)
    assert (
        active_rms(strong, RATE) > 1.3 * active_rms(plain, RATE) > 1.3 * active_rms(reduced, RATE)
    )


async def test_say_as_characters_is_longer_than_the_word(synth):
    word = await say_ssml(synth, "<speak>cab</speak>")
    spelled = await say_ssml(synth, '<speak><say-as interpret-as="characters">cab</say-as></speak>')
    assert seconds(spelled) > 1.5 * seconds(word)


async def test_say_as_spell_out_matches_the_letter_names(synth):
    spelled = await say_ssml(synth, '<speak><say-as interpret-as="spell-out">ABC</say-as></speak>')
    letters = await say_ssml(synth, "<speak>ay, bee, see</speak>")
    assert np.array_equal(spelled, letters)


async def test_say_as_digits_and_cardinal_differ(synth):
    digits = await say_ssml(synth, '<speak><say-as interpret-as="digits">1234</say-as></speak>')
    cardinal = await say_ssml(synth, '<speak><say-as interpret-as="cardinal">1234</say-as></speak>')
    four = await say_ssml(synth, "<speak>one two three four</speak>")
    assert np.array_equal(digits, four)
    assert abs(seconds(cardinal) - seconds(digits)) > 0.3


async def test_say_as_ordinal_date_time_telephone_speak_their_words(synth):
    cases = [
        ('<say-as interpret-as="ordinal">21</say-as>', "twenty-first"),
        (
            '<say-as interpret-as="date" format="dmy">14/03/2025</say-as>',
            "March fourteenth, twenty twenty-five",
        ),
        ('<say-as interpret-as="time">14:05</say-as>', "two oh five pee em"),
        (
            '<say-as interpret-as="telephone">555-0199</say-as>',
            "five five five, zero one nine nine",
        ),
    ]
    for markup, words in cases:
        rendered = await say_ssml(synth, f"<speak>{markup}</speak>")
        assert np.array_equal(rendered, await say_ssml(synth, f"<speak>{words}</speak>")), markup


async def test_sub_speaks_the_alias(synth):
    sub = await say_ssml(synth, '<speak><sub alias="World Wide Web Consortium">W3C</sub></speak>')
    alias = await say_ssml(synth, "<speak>World Wide Web Consortium</speak>")
    original = await say_ssml(synth, "<speak>W3C</speak>")
    assert seconds(sub) == pytest.approx(seconds(alias), rel=0.05)
    assert abs(seconds(sub) - seconds(original)) > 0.3


async def test_sentences_and_paragraphs_add_pauses(synth):
    run_on = await say_ssml(synth, "<speak>First part second part third part</speak>")
    sentences = await say_ssml(
        synth, "<speak><s>First part</s><s>second part</s><s>third part</s></speak>"
    )
    paragraphs = await say_ssml(
        synth, "<speak><p>First part</p><p>second part</p><p>third part</p></speak>"
    )
    assert longest_silence_ms(run_on, RATE) < 250
    assert longest_silence_ms(sentences, RATE) >= 250
    assert longest_silence_ms(paragraphs, RATE) >= 600
    assert seconds(run_on) < seconds(sentences) < seconds(paragraphs)


async def test_unknown_tags_keep_their_text(synth):
    tagged = await say_ssml(
        synth, '<speak><voice name="x">Good <w role="x">morning</w></voice> <foo/>all.</speak>'
    )
    plain = await say_ssml(synth, "<speak>Good morning all.</speak>")
    assert np.array_equal(tagged, plain)


async def test_audio_plays_the_fetched_clip(synth):
    tone = (0.3 * 32767 * np.sin(2 * np.pi * 440 * np.arange(RATE // 2) / RATE)).astype(np.int16)
    fetched = []

    async def fetch(url):
        fetched.append(url)
        return wav_bytes(tone, RATE), "audio/wav"

    pcm = await say_ssml(
        synth,
        '<speak><audio src="https://example.com/chime.wav">chime</audio></speak>',
        fetch=fetch,
    )
    assert fetched == ["https://example.com/chime.wav"]
    assert len(pcm) == pytest.approx(len(tone), abs=RATE // 100)
    assert median_f0(pcm, RATE, fmax=500) == pytest.approx(440, rel=0.03)


async def test_audio_falls_back_to_its_content_when_the_fetch_fails(synth):
    pcm = await say_ssml(
        synth,
        '<speak><audio src="https://example.com/gone.mp3"><desc>a chime</desc>ding dong</audio>'
        "</speak>",
    )
    assert np.array_equal(pcm, await say_ssml(synth, "<speak>ding dong</speak>"))


async def test_a_prosody_change_mid_phrase_adds_no_pause(synth):
    plain = await say_ssml(synth, "<speak>Take the second left now.</speak>")
    marked = await say_ssml(
        synth, '<speak>Take the <prosody pitch="+3st">second</prosody> left now.</speak>'
    )
    assert longest_silence_ms(marked, RATE) <= longest_silence_ms(plain, RATE) + 30
    assert seconds(marked) == pytest.approx(seconds(plain), rel=0.1)


def test_trim_silence_keeps_a_margin_and_leaves_silence_alone():
    pcm = np.concatenate([np.zeros(1600), np.full(800, 5000), np.zeros(1600)]).astype(np.int16)
    trimmed = trim_silence(pcm, 16_000, start=True, end=True, keep_ms=30)
    assert len(trimmed) == 800 + 2 * 480
    assert len(trim_silence(pcm, 16_000, start=False, end=True, keep_ms=0)) == 1600 + 800
    silent = np.zeros(1000, dtype=np.int16)
    assert len(trim_silence(silent, 16_000, start=True, end=True)) == 1000
