"""Silero VAD v6 streaming on real generated speech, silence and noise."""

from __future__ import annotations

import numpy as np
import pytest
from faster_whisper.vad import get_vad_model

from gateway.audio import pcm16_to_float
from gateway.testing.speech import espeak_wav, noise, piper_16k, silence
from gateway.voice.vad import CHUNK_SAMPLES, VadStream


def _probs(vad, audio: np.ndarray) -> np.ndarray:
    return vad.stream().process(audio)[1]


@pytest.mark.parametrize("speak", [espeak_wav, piper_16k])
def test_speech_is_found_where_it_is(vad, speak):
    speech = speak("Please turn off the kitchen lights in the living room.")
    audio = np.concatenate([silence(1000), speech, silence(1000)])
    probs = _probs(vad, audio)
    lead = 1000 * 16 // CHUNK_SAMPLES  # chunks wholly inside the leading second of silence
    inside = probs[lead + 3 : lead + len(speech) // CHUNK_SAMPLES - 3]
    assert probs[:lead].max() < 0.1
    assert probs[-lead + 2 :].max() < 0.1
    assert np.mean(inside > 0.5) > 0.7, "most chunks of running speech are speech"


@pytest.mark.parametrize("level", [0.0, 0.003, 0.03, 0.1])
def test_silence_and_white_noise_are_not_speech(vad, level):
    audio = noise(3000, level) if level else silence(3000)
    assert _probs(vad, audio).max() < 0.5


def test_any_piece_sizes_give_the_reference_probabilities(vad):
    audio = np.concatenate([silence(300), espeak_wav("Hello there, how are you?"), silence(300)])
    audio = audio[: len(audio) // CHUNK_SAMPLES * CHUNK_SAMPLES]
    reference = get_vad_model()(pcm16_to_float(audio)).reshape(-1)  # faster-whisper's batch run
    stream, got, i = vad.stream(), [], 0
    rng = np.random.default_rng(7)
    while i < len(audio):
        n = int(rng.integers(1, 3000))
        chunks, probs = stream.process(audio[i : i + n])
        assert chunks.shape == (len(probs), CHUNK_SAMPLES)
        got.append(probs)
        i += n
    np.testing.assert_allclose(np.concatenate(got), reference, atol=1e-5)


def test_partial_chunks_wait_for_the_rest(vad):
    stream = vad.stream()
    chunks, probs = stream.process(np.zeros(500, np.int16))
    assert chunks.shape == (0, CHUNK_SAMPLES) and len(probs) == 0
    chunks, probs = stream.process(np.ones(24, np.int16))
    assert len(probs) == 1 and chunks[0, -1] == pytest.approx(1 / 32768)


def test_streams_sharing_a_session_keep_their_own_state(vad):
    a = espeak_wav("One two three four five.")
    b = noise(len(a) * 1000 // 16000, 0.02)
    alone_a, alone_b = _probs(vad, a), _probs(vad, b)
    sa, sb, got_a, got_b = VadStream(vad), VadStream(vad), [], []
    for i in range(0, len(a), 1000):
        got_a.append(sa.process(a[i : i + 1000])[1])
        got_b.append(sb.process(b[i : i + 1000])[1])
    np.testing.assert_allclose(np.concatenate(got_a), alone_a, atol=1e-6)
    np.testing.assert_allclose(np.concatenate(got_b), alone_b, atol=1e-6)
