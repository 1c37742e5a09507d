"""The internal audio format and WAV files (gateway/audio/frames.py)."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import frames
from gateway.audio.frames import float_to_pcm16, pcm16_to_float, read_wav, wav_bytes, write_wav


def test_a_frame_is_20_ms_at_16_khz() -> None:
    assert frames.SAMPLE_RATE == 16_000 and frames.FRAME_SAMPLES == 320


def test_pcm16_to_float_reads_arrays_and_little_endian_bytes_alike() -> None:
    pcm = np.array([0, 16384, -16384, 32767, -32768], dtype=np.int16)
    from_array = pcm16_to_float(pcm)
    from_bytes = pcm16_to_float(pcm.astype("<i2").tobytes())
    assert from_array.dtype == np.float32
    np.testing.assert_array_equal(from_array, from_bytes)
    np.testing.assert_allclose(from_array, [0.0, 0.5, -0.5, 32767 / 32768, -1.0])


def test_float_to_pcm16_clips_rather_than_wraps() -> None:
    out = float_to_pcm16(np.array([0.0, 0.5, 1.0, 1.5, -1.0, -3.0], dtype=np.float32))
    assert out.dtype == np.int16
    # 1.5 wrapped round int16 would come out negative: a loud click instead of a flat top.
    assert out.tolist() == [0, 16383, 32767, 32767, -32767, -32767]


def test_a_round_trip_through_float_keeps_the_samples_within_one_step() -> None:
    pcm = np.random.default_rng(1).integers(-32767, 32767, 1000).astype(np.int16)
    back = float_to_pcm16(pcm16_to_float(pcm))
    assert np.max(np.abs(back.astype(np.int32) - pcm)) <= 1


def test_wav_bytes_is_a_mono_16_bit_file_at_the_rate_given() -> None:
    pcm = np.arange(-500, 500, dtype=np.int16)
    with wave.open(io.BytesIO(wav_bytes(pcm, 22_050)), "rb") as w:
        assert (w.getnchannels(), w.getsampwidth(), w.getframerate()) == (1, 2, 22_050)
        assert np.frombuffer(w.readframes(w.getnframes()), "<i2").tolist() == pcm.tolist()


def test_wav_bytes_converts_float_audio() -> None:
    data = wav_bytes(np.array([0.0, 0.5, -2.0], dtype=np.float32))
    with wave.open(io.BytesIO(data), "rb") as w:
        assert w.getframerate() == frames.SAMPLE_RATE
        assert np.frombuffer(w.readframes(3), "<i2").tolist() == [0, 16383, -32767]


def test_write_then_read_gives_the_samples_and_rate_back(tmp_path: Path) -> None:
    pcm = np.random.default_rng(2).integers(-30000, 30000, 4800).astype(np.int16)
    write_wav(tmp_path / "a.wav", pcm, 48_000)
    back, rate = read_wav(tmp_path / "a.wav")
    assert rate == 48_000 and back.dtype == np.int16
    np.testing.assert_array_equal(back, pcm)


def test_read_wav_averages_the_channels(tmp_path: Path) -> None:
    left = np.array([100, 200, -300], dtype=np.int16)
    right = np.array([300, 0, -100], dtype=np.int16)
    with wave.open(str(tmp_path / "stereo.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(8_000)
        w.writeframes(np.column_stack([left, right]).astype("<i2").tobytes())
    mono, rate = read_wav(tmp_path / "stereo.wav")
    assert rate == 8_000 and mono.tolist() == [200, 100, -200]


def test_read_wav_refuses_other_sample_widths_and_says_what_to_use(tmp_path: Path) -> None:
    with wave.open(str(tmp_path / "u8.wav"), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8_000)
        w.writeframes(bytes([128, 200, 50]))
    with pytest.raises(ValueError, match="only 16-bit PCM"):
        read_wav(tmp_path / "u8.wav")
