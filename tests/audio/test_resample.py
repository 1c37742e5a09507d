"""Sample-rate and channel conversion with PyAV (gateway/audio/resample.py): lengths, pitch,
streaming against a whole clip, stereo, and the pass-through."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, Resampler, resample


def tone(hz: float, seconds: float, rate: int, level: float = 0.5) -> np.ndarray:
    t = np.arange(int(rate * seconds)) / rate
    return (level * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)


def dominant_hz(pcm: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64) * np.hanning(len(pcm))))
    return float(np.argmax(spectrum) * rate / len(pcm))


@pytest.mark.parametrize(("in_rate", "out_rate"), [(48_000, 16_000), (22_050, 16_000), (16_000, 48_000)])
def test_a_whole_clip_keeps_its_duration_and_its_pitch(in_rate: int, out_rate: int) -> None:
    clip = tone(440.0, 1.0, in_rate)
    out = resample(clip, in_rate, out_rate)
    assert out.dtype == np.int16
    assert abs(len(out) - out_rate) <= out_rate // 100  # within 10 ms of one second
    assert abs(dominant_hz(out, out_rate) - 440.0) < 3.0
    # Level kept: a resampler that dropped or doubled the signal would change the RMS.
    rms_in = np.sqrt(np.mean(clip.astype(np.float64) ** 2))
    rms_out = np.sqrt(np.mean(out[out_rate // 10 : -out_rate // 10].astype(np.float64) ** 2))
    assert rms_out == pytest.approx(rms_in, rel=0.05)


def test_streaming_in_chunks_gives_the_whole_clip_conversion() -> None:
    clip = tone(300.0, 0.5, 48_000)
    whole = resample(clip, 48_000)
    rs = Resampler(48_000)
    # 20 ms chunks at 48 kHz, as WebRTC delivers them: the filter state carries across them.
    parts = [rs.process(clip[i : i + 960]) for i in range(0, len(clip), 960)]
    streamed = np.concatenate([*parts, rs.flush()])
    assert len(streamed) == len(whole)
    assert np.max(np.abs(streamed.astype(np.int32) - whole)) <= 1


def test_stereo_is_mixed_to_mono() -> None:
    left = tone(440.0, 0.5, 48_000)
    silent = np.zeros_like(left)
    interleaved = np.column_stack([left, silent]).reshape(-1)
    out = resample(interleaved, 48_000, SAMPLE_RATE, in_channels=2)
    assert abs(len(out) - SAMPLE_RATE // 2) <= SAMPLE_RATE // 100
    assert abs(dominant_hz(out, SAMPLE_RATE) - 440.0) < 3.0
    peak = np.max(np.abs(out[SAMPLE_RATE // 10 : -SAMPLE_RATE // 10]))
    assert 0 < peak < np.max(np.abs(left))  # one silent channel mixed in lowers the level


def test_the_same_rate_in_mono_passes_through_untouched() -> None:
    rs = Resampler(SAMPLE_RATE)
    pcm = np.arange(-100, 100, dtype=np.int16)
    assert rs.process(pcm) is pcm  # no copy, no filter delay
    assert rs.flush().size == 0


def test_an_empty_chunk_gives_nothing() -> None:
    assert Resampler(48_000).process(np.zeros(0, np.int16)).size == 0


def test_more_than_two_channels_are_refused() -> None:
    with pytest.raises(ValueError, match="use 1 or 2"):
        Resampler(48_000, in_channels=6)
