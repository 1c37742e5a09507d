"""The synthesizer's cache of short texts said before (``gateway.render.speech_cache``): which
texts it keeps, the least recently used going first, and the synthesizer serving a text from it
(no synthesis, the same audio) only when the text was said whole before."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.render.speech_cache import SpeechCache, SpeechCacheSettings
from gateway.render.tts import Synthesizer
from tests.render.helpers import RATE, STEADY


def chunk(value: int, n: int = 4) -> np.ndarray:
    return np.full(n, value, np.int16)


def test_keeps_only_short_texts_and_nothing_when_off() -> None:
    cache = SpeechCache(SpeechCacheSettings(entries=4, max_chars=10))
    assert cache.keeps("You said:")  # 9
    assert not cache.keeps("Open the garage door.")  # a request the load benchmark makes
    assert not cache.keeps("")
    off = SpeechCache(SpeechCacheSettings(entries=0))
    assert not off.keeps("Hi.")
    off.put("k", [chunk(1)])
    assert len(off) == 0 and off.get("k") is None


def test_the_least_recently_used_text_goes_first() -> None:
    cache = SpeechCache(SpeechCacheSettings(entries=2))
    cache.put("a", [chunk(1)])
    cache.put("b", [chunk(2)])
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("c", [chunk(3)])
    assert cache.get("b") is None  # so b went
    kept_a, kept_c = cache.get("a"), cache.get("c")
    assert kept_a is not None and kept_c is not None
    assert kept_a[0][0] == 1 and kept_c[0][0] == 3
    assert (cache.hits, cache.misses, len(cache)) == (3, 1, 2)


def test_kept_audio_is_a_read_only_copy() -> None:
    cache = SpeechCache()
    made = [chunk(5)]
    cache.put("k", made)
    made[0][:] = 0  # the listener's own chunk changes after it was kept
    kept = cache.get("k")
    assert kept is not None and int(kept[0][0]) == 5
    with pytest.raises(ValueError):
        kept[0][0] = 1


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="0 or more"):
        SpeechCacheSettings(entries=-1)


async def speak(synth: Synthesizer, text: str) -> list[np.ndarray]:
    return [c async for c in synth.stream(text, STEADY, rate=RATE)]


@pytest.mark.slow
async def test_a_short_text_said_again_is_not_synthesized_again() -> None:
    synth = Synthesizer()
    try:
        first = await speak(synth, "You said:")
        made = synth.sentences
        again = await speak(synth, "You said:")
        assert synth.sentences == made  # no synthesis the second time
        assert len(again) == len(first) and all(
            np.array_equal(a, b) for a, b in zip(first, again, strict=True)
        )
        again[0][:] = 0  # a listener changing its chunk does not change what is kept
        third = await speak(synth, "You said:")
        assert np.array_equal(third[0], first[0]) and synth.cache.hits == 2
        # Another voice (or rate) is another entry: never the wrong voice's audio.
        other = [
            c async for c in synth.stream("You said:", STEADY, rate=RATE * 2)
        ]
        assert synth.sentences == made + 1 and len(other[0]) > 1.5 * len(first[0])
        # A long text is synthesized every time.
        long = "Please turn off the kitchen lights."
        await speak(synth, long)
        before = synth.sentences
        await speak(synth, long)
        assert synth.sentences == before + 1
    finally:
        synth.close()


@pytest.mark.slow
async def test_a_text_cut_off_part_way_is_not_kept_and_off_means_off() -> None:
    synth = Synthesizer()
    try:
        stream = synth.stream("One. Two.", STEADY, rate=RATE)  # two sentences, two chunks
        async for _ in stream:
            break  # a barge-in after the first sentence
        await stream.aclose()
        assert len(synth.cache) == 0
        await speak(synth, "One. Two.")
        assert len(synth.cache) == 1
    finally:
        synth.close()
    off = Synthesizer(cache=SpeechCacheSettings(entries=0))
    try:
        await speak(off, "You said:")
        made = off.sentences
        await speak(off, "You said:")
        assert off.sentences == made + 1 and off.cache.hits == 0
    finally:
        off.close()
