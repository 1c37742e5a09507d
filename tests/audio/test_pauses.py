"""The pause inside a short sound (a comma between a backchannel's two parts), on recorded
clips and on made sounds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, read_wav
from gateway.audio.pauses import LEAD_MS, MIN_PART_MS, MIN_PAUSE_MS, longest_pause

CLIPS = Path(__file__).parent / "hum_clips"


def clip(name: str) -> np.ndarray:
    return read_wav(CLIPS / f"{name}.wav")[0]


def quiet(ms: int) -> np.ndarray:
    return np.zeros(ms * SAMPLE_RATE // 1000, np.int16)


@pytest.mark.parametrize("gap_ms", [MIN_PAUSE_MS + 20, 160, 400])
def test_the_pause_between_two_words_is_found_where_it_is(gap_ms):
    """ "Yeah, | stop." with a comma's pause: found from the first word's end to the second's
    onset, with the silence before and after the sound left out."""
    first, second = clip("yeah.piper"), clip("stop.piper")
    audio = np.concatenate([quiet(300), first, quiet(gap_ms), second, quiet(300)])
    pause = longest_pause(audio)
    assert pause is not None
    begins = (300 + len(first) * 1000 // SAMPLE_RATE) * SAMPLE_RATE // 1000
    assert abs(pause.start - begins) <= 2 * 160, "where the first word ends, within 20 ms"
    assert gap_ms - 20 <= pause.ms <= gap_ms + 60, "the clips' own faint edges may join it"
    assert abs(pause.before_ms - len(first) * 1000 // SAMPLE_RATE) <= 20
    assert pause.second_part == pause.end - LEAD_MS * SAMPLE_RATE // 1000


@pytest.mark.parametrize("gap_ms", [0, 40])
def test_a_pause_shorter_than_a_comma_is_none(gap_ms):
    audio = np.concatenate([clip("yeah.piper"), quiet(gap_ms), clip("yeah.piper")])
    assert longest_pause(audio) is None


@pytest.mark.parametrize("name", ["yeah.piper", "mm-hmm.piper", "hold-on.piper", "nope.en-gb"])
def test_a_word_or_two_said_at_once_have_none(name):
    """(A stop's closure can be one: piper's "What time is it?" has 90 ms after "what".)"""
    assert longest_pause(np.concatenate([quiet(500), clip(name), quiet(500)])) is None


def test_the_longest_of_two_pauses_and_float_audio():
    a = clip("yeah.piper")
    audio = np.concatenate([a, quiet(100), a, quiet(250), a]).astype(np.float32) / 32768
    pause = longest_pause(audio)
    assert pause is not None and 230 <= pause.ms <= 300
    assert pause.before_ms >= 2 * len(a) * 1000 // SAMPLE_RATE + 90


@pytest.mark.parametrize("audio", [quiet(0), quiet(5), quiet(1000)])
def test_silence_or_nothing_has_none(audio):
    assert longest_pause(audio) is None


def test_a_stops_closure_before_its_release_parts_nothing():
    """piper's "And then what?": 80 ms of closure before the "t", then 20 ms of burst. Too
    little sound after it (``MIN_PART_MS``) for a second part; a word after it is one."""
    burst = (np.random.default_rng(1).standard_normal(320) * 8000).astype(np.int16)
    word = clip("yeah.piper")
    assert longest_pause(np.concatenate([word, quiet(100), burst, quiet(300)])) is None
    pause = longest_pause(np.concatenate([word, quiet(100), word]))
    assert pause is not None and pause.after_ms >= MIN_PART_MS
    pause = longest_pause(np.concatenate([word, quiet(100), word, quiet(200), burst]))
    assert pause is not None and pause.ms < 150, "the longer pause before the burst parts nothing"
