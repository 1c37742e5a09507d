"""The echo guard on synthetic signals: a delayed, attenuated copy of what was played is echo;
a voice that was not played, or a person speaking over the echo, is not."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.audio.echo import EchoGuard, similarity
from gateway.testing.speech import piper_variant, trim

OUT = 24_000


def voice_like(seconds: float, seed: int, rate: int) -> np.ndarray:
    """Band-limited noise with a syllable-rate envelope: not periodic, so a lag is unique."""
    rng = np.random.default_rng(seed)
    n = int(seconds * rate)
    x = np.convolve(rng.standard_normal(n), np.hanning(rate // 800), "same")  # under ~1.6 kHz
    env = 0.55 + 0.45 * np.sin(2 * np.pi * 4 * np.arange(n) / rate + seed)
    return (6000 * x * env / np.abs(x).max()).astype(np.int16)


def down(x: np.ndarray, rate: int, to: int) -> np.ndarray:
    n = len(x) * to // rate
    return np.interp(np.arange(n) * rate / to, np.arange(len(x)), x).astype(np.int16)


def run(guard: EchoGuard, played: np.ndarray, mic16: np.ndarray, lag_s: float) -> list[bool]:
    """Release ``played`` 20 ms a frame from t=0; the microphone's 32 ms chunks arrive
    ``lag_s`` after the frames they hold. The verdicts once a full window is heard."""
    frame = OUT // 50
    frames = [(i * 0.02, played[i * frame : (i + 1) * frame]) for i in range(len(played) // frame)]
    out = []
    for j in range(len(mic16) // 512):
        arrived = (j + 1) * 0.032 + lag_s
        while frames and frames[0][0] <= arrived:
            guard.played(frames[0][1], frames.pop(0)[0])
        out.append(guard.heard(mic16[j * 512 : (j + 1) * 512], arrived))
    return out[6:]


@pytest.mark.parametrize("lag_ms,db", [(50, -10), (250, -25), (550, -18)])
def test_the_agents_voice_come_back_is_echo(lag_ms, db):
    played = voice_like(2.0, 1, OUT)
    echo16 = down(played, OUT, 16000).astype(np.float64) * 10 ** (db / 20)
    mic = np.concatenate([np.zeros(lag_ms * 16), echo16])[: len(echo16)].astype(np.int16)
    # Chunks arrive when their audio was captured; the echo is ``lag_ms`` behind the frames.
    verdicts = run(EchoGuard(OUT), played, mic, 0.0)
    assert np.mean(verdicts[lag_ms // 32 + 2 :]) > 0.95


def test_a_voice_that_was_not_played_is_not_echo():
    played = voice_like(2.0, 1, OUT)
    other = down(voice_like(2.0, 2, OUT), OUT, 16000)
    assert not any(run(EchoGuard(OUT), played, other, 0.1))


def test_a_person_over_the_echo_is_not_echo():
    played = voice_like(2.0, 1, OUT)
    echo16 = down(played, OUT, 16000).astype(np.float64) * 10 ** (-15 / 20)
    person = down(voice_like(2.0, 3, OUT), OUT, 16000).astype(np.float64)
    mic = (echo16 + person).astype(np.int16)
    assert not any(run(EchoGuard(OUT), played, mic, 0.05))


def test_nothing_played_lately_is_never_echo():
    guard = EchoGuard(OUT)
    mic = down(voice_like(1.0, 1, OUT), OUT, 16000)
    assert not any(guard.heard(mic[i : i + 512], 5.0) for i in range(0, len(mic) - 511, 512))
    assert guard.checks == 0


def test_similarity_of_a_scaled_copy_is_one_and_of_silence_zero():
    x = voice_like(0.5, 4, 8000).astype(np.float64)
    assert similarity(0.1 * x[1000:2000], x) == pytest.approx(1.0, abs=0.01)
    assert similarity(np.zeros(500), x) == 0.0


def test_the_echo_of_speech_after_a_pause_in_playback_is_echo_from_its_onset():
    """A reply that starts (or goes on after a stall): the microphone's window holds silence
    and the echo's first syllable, which only lines up with silence in the reference too."""
    guard = EchoGuard(OUT)
    played = voice_like(1.0, 5, OUT)
    echo16 = down(played, OUT, 16000).astype(np.float64) * 10 ** (-15 / 20)
    frame = OUT // 50
    for i in range(len(played) // frame):  # released at 10 s, a burst then paced
        guard.played(played[i * frame : (i + 1) * frame], 10.0 + max(0, i - 12) * 0.02)
    lag = 0.3
    silence = np.zeros(16000, np.int16)
    mic = np.concatenate([silence, echo16.astype(np.int16)])
    start = 10.0 + lag - 1.0  # the echo begins 0.3 s after the first frame was released
    verdicts = [
        guard.heard(mic[j * 512 : (j + 1) * 512], start + (j + 1) * 0.032)
        for j in range(len(mic) // 512)
    ]
    onset = len(silence) // 512
    assert all(verdicts[onset + 1 : onset + 12]), verdicts[onset : onset + 12]


@pytest.mark.slow  # piper
def test_a_person_in_the_agents_own_voice_saying_other_words_is_not_echo():
    """Piper over piper: the agent's reply, and a person in the same voice (at four paces)
    saying other things from the end of its first sentence. A vowel at the same pitch matches
    a short stretch of the reply by chance; the guard's window is long enough that such
    matches stay rare (a 192 ms window called 41 of their 755 voiced chunks echo, 384 ms none)."""
    first = "Tonight's dinner plan is a chicken and chorizo traybake, which takes forty minutes."
    played = piper_variant(f"{first} You'll need two chicken thighs per person and red onion.")
    onset = len(piper_variant(first)) + 3200
    called = voiced = 0
    for text in (
        "Okay, but can we make it vegetarian?",
        "Oh, wait, how long is the layover?",
        "Right, hang on, I said six people.",
        "Uh-huh, that's why it's so salty.",
    ):
        for pace in (0.95, 1.0, 1.1, 1.17):
            person = trim(piper_variant(text, length_scale=pace))
            mic = np.zeros(onset + len(person), np.int16)
            mic[onset:] = person
            guard, frame, released = EchoGuard(16000), 320, 0
            for j in range(len(mic) // 512):
                now = (j + 1) * 0.032
                while released + frame <= len(played) and (released + frame) / 16000 <= now:
                    guard.played(played[released : released + frame], released / 16000)
                    released += frame
                chunk = mic[j * 512 : (j + 1) * 512]
                loud = float(np.sqrt(np.mean(chunk.astype(np.float64) ** 2))) > 300
                called += guard.heard(chunk, now, loud)
                voiced += loud
    assert voiced > 600  # the sixteen renditions were heard
    assert called <= 10, f"{called} of {voiced} chunks of the person called echo"
