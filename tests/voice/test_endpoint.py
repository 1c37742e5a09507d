"""The endpointer on real VAD output of generated speech, and on constructed probabilities."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gateway.testing.speech import espeak_wav, silence
from gateway.voice.endpoint import (
    Endpointer,
    EndpointSettings,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    Utterance,
)
from gateway.voice.vad import CHUNK_SAMPLES

MS = 16  # samples per millisecond


def _run(endpointer: Endpointer, chunks, probs) -> list:
    events = [e for c, p in zip(chunks, probs, strict=True) for e in endpointer.process(c, p)]
    return events + endpointer.flush()


def _synthetic(probs: list[float]) -> tuple[list[np.ndarray], list[float]]:
    """One chunk per probability, each filled with its index so positions can be checked."""
    return [np.full(CHUNK_SAMPLES, i, np.float32) for i in range(len(probs))], probs


def _chunks_for(ms: int, p: float) -> list[float]:
    return [p] * (ms * MS // CHUNK_SAMPLES)


def test_two_sentences_with_a_gap_make_two_utterances(vad):
    first = espeak_wav("Please turn off the kitchen lights.")
    second = espeak_wav("And lock the front door.")
    audio = np.concatenate([silence(600), first, silence(800), second, silence(1000)])
    chunks, probs = vad.stream().process(audio)
    events = _run(Endpointer(), chunks, probs.tolist())
    kinds = [type(e) for e in events]
    assert kinds.count(Utterance) == 2
    assert kinds.index(SpeechStarted) < kinds.index(Utterance)
    one, two = (e for e in events if isinstance(e, Utterance))

    # Where the sound is: espeak pads its output with near-silence at both ends.
    def loud(pcm: np.ndarray, offset: int) -> tuple[int, int]:
        idx = np.flatnonzero(np.abs(pcm) > 300)
        return offset + int(idx[0]), offset + int(idx[-1])

    speech1 = loud(first, 600 * MS)
    speech2 = loud(second, 600 * MS + len(first) + 800 * MS)
    tolerance = 150 * MS
    assert abs(one.start - (speech1[0] - 300 * MS)) < tolerance, "starts a pre-roll early"
    assert abs(one.voiced_end - speech1[1]) < tolerance
    assert abs(two.start - (speech2[0] - 300 * MS)) < tolerance
    assert abs(two.voiced_end - speech2[1]) < tolerance
    assert one.end <= two.start, "no sample belongs to both"
    for u in (one, two):
        assert len(u.audio) == u.end - u.start
        np.testing.assert_array_equal(u.audio, np.concatenate(chunks)[u.start : u.end])
        assert not u.cut


def test_pause_resume_within_one_utterance():
    chunks, probs = _synthetic(
        _chunks_for(0, 0)
        + _chunks_for(500, 0.9)
        + _chunks_for(300, 0.1)
        + _chunks_for(500, 0.9)
        + _chunks_for(700, 0.1)
    )
    events = _run(Endpointer(), chunks, probs)
    kinds = [type(e) for e in events]
    assert kinds == [SpeechStarted, SpeechPaused, SpeechResumed, SpeechPaused, Utterance]


def test_short_blip_is_not_speech_but_min_speech_is():
    s = EndpointSettings()
    # 192 ms: the shortest "No." piper said (the default once dropped half of them).
    for voiced_ms, expected in ((96, 0), (128, 0), (192, 1), (320, 1)):
        chunks, probs = _synthetic(
            _chunks_for(400, 0) + _chunks_for(voiced_ms, 0.9) + _chunks_for(800, 0)
        )
        events = _run(Endpointer(s), chunks, probs)
        assert sum(isinstance(e, Utterance) for e in events) == expected, voiced_ms


def test_pre_roll_is_bounded_and_leads_the_utterance():
    chunks, probs = _synthetic(_chunks_for(2000, 0) + _chunks_for(500, 0.9) + _chunks_for(700, 0))
    (utterance,) = [e for e in _run(Endpointer(), chunks, probs) if isinstance(e, Utterance)]
    first_voiced = 2000 * MS // CHUNK_SAMPLES
    pre_roll_chunks = -(-300 * MS // CHUNK_SAMPLES)
    assert utterance.audio[0] == first_voiced - pre_roll_chunks
    assert utterance.start == (first_voiced - pre_roll_chunks) * CHUNK_SAMPLES


def test_long_speech_is_cut_at_max_length_without_overlap():
    settings = EndpointSettings(max_utterance_ms=5000)
    chunks, probs = _synthetic(
        _chunks_for(200, 0) + _chunks_for(12_000, 0.95) + _chunks_for(800, 0)
    )
    utterances = [e for e in _run(Endpointer(settings), chunks, probs) if isinstance(e, Utterance)]
    assert len(utterances) == 3
    assert [u.cut for u in utterances] == [True, True, False]
    assert all(len(u.audio) <= 5000 * MS for u in utterances)
    for a, b in itertools.pairwise(utterances):
        assert a.end <= b.start


def test_hysteresis_between_thresholds():
    between = 0.42  # below activation 0.5, above deactivation 0.35
    idle = _run(Endpointer(), *_synthetic(_chunks_for(1000, between)))
    assert idle == [], "a middling probability does not start speech"
    chunks, probs = _synthetic(
        _chunks_for(400, 0.9) + _chunks_for(1000, between) + _chunks_for(800, 0)
    )
    (utterance,) = [e for e in _run(Endpointer(), chunks, probs) if isinstance(e, Utterance)]
    assert utterance.voiced_end == (1400 * MS // CHUNK_SAMPLES) * CHUNK_SAMPLES, (
        "once speaking, a middling probability keeps the speech going"
    )


def test_current_audio_grows_during_speech_only():
    endpointer = Endpointer()
    chunk = np.ones(CHUNK_SAMPLES, np.float32)
    assert endpointer.current_audio() is None
    for _ in range(10):
        endpointer.process(chunk, 0.9)
    audio = endpointer.current_audio()
    assert audio is not None and len(audio) == 10 * CHUNK_SAMPLES


@pytest.mark.parametrize(
    "kwargs",
    [
        {"activation": 0.3, "deactivation": 0.5},
        {"pause_ms": 600, "end_silence_ms": 500},
        {"idle_speculate_ms": 96},  # later than speculate_ms (64)
        {"idle_speculate_ms": 0},
    ],
)
def test_inconsistent_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        EndpointSettings(**kwargs)


def test_speculation_hint_comes_before_the_pause_is_long_enough_to_act_on():
    settings = EndpointSettings(speculate_ms=96, pause_ms=192, end_silence_ms=700)
    endpointer = Endpointer(settings)
    chunks, probs = _synthetic(_chunks_for(512, 0.9) + _chunks_for(800, 0.1))
    seen = []  # (silence_ms after the chunk, events it caused)
    for chunk, p in zip(chunks, probs, strict=True):
        events = endpointer.process(chunk, p)
        seen.append((endpointer.silence_ms, [type(e) for e in events]))
    paused_at = next(ms for ms, kinds in seen if SpeechPaused in kinds)
    assert paused_at == 96  # three 32 ms chunks of silence: decoding may start
    silences = [ms for ms, _ in seen]
    assert 192 in silences  # the session acts once silence_ms reaches pause_ms
    assert seen[-1][1] == [] and endpointer.silence_ms == 0  # 700 ms ended the utterance
    assert [k for _, kinds in seen for k in kinds].count(Utterance) == 1


def test_speculate_at_moves_the_hint_and_announces_a_pause_once():
    endpointer = Endpointer(EndpointSettings(speculate_ms=128, pause_ms=192, end_silence_ms=700))
    chunks, probs = _synthetic(_chunks_for(512, 0.9) + _chunks_for(320, 0.1))
    seen = []
    for i, (chunk, p) in enumerate(zip(chunks, probs, strict=True)):
        if i == len(chunks) - 8:  # after two silent chunks (64 ms), before the 128 ms hint
            endpointer.speculate_at(32)
        events = endpointer.process(chunk, p)
        seen.append((endpointer.silence_ms, [type(e) for e in events]))
    paused = [ms for ms, kinds in seen if SpeechPaused in kinds]
    assert paused == [96], "32 ms, set at 64 ms of silence: announced at the next chunk"
    with pytest.raises(ValueError, match="pause_ms"):
        endpointer.speculate_at(224)


def test_silence_ms_is_zero_while_voiced_or_idle():
    endpointer = Endpointer()
    chunk = np.zeros(CHUNK_SAMPLES, np.float32)
    assert endpointer.silence_ms == 0
    for _ in range(10):
        endpointer.process(chunk, 0.9)
    assert endpointer.silence_ms == 0
    endpointer.process(chunk, 0.1)
    assert endpointer.silence_ms == 32


def test_speculation_cannot_come_after_the_pause():
    with pytest.raises(ValueError, match="speculate_ms"):
        EndpointSettings(speculate_ms=300, pause_ms=200)
