"""The gateway's internal audio format and WAV helpers."""

from __future__ import annotations

import io
import wave
from pathlib import Path

import numpy as np

#: Sample rate of every internal stage (what Whisper, Silero VAD and microWakeWord expect).
SAMPLE_RATE = 16_000
#: Frame duration used for pacing and transport.
FRAME_MS = 20
FRAME_SAMPLES = SAMPLE_RATE * FRAME_MS // 1000


def pcm16_to_float(pcm: np.ndarray | bytes) -> np.ndarray:
    """int16 PCM (array or raw little-endian bytes) to float32 in [-1, 1]."""
    arr = np.frombuffer(pcm, dtype="<i2") if isinstance(pcm, bytes | bytearray) else pcm
    return arr.astype(np.float32) / 32768.0


def float_to_pcm16(audio: np.ndarray) -> np.ndarray:
    """float32 in [-1, 1] to int16 PCM, clipping rather than wrapping."""
    return (audio.clip(-1.0, 1.0) * 32767.0).astype(np.int16)


def wav_bytes(pcm: np.ndarray, sample_rate: int = SAMPLE_RATE) -> bytes:
    """A mono 16-bit WAV file in memory."""
    if pcm.dtype != np.int16:
        pcm = float_to_pcm16(pcm)
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sample_rate)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def write_wav(path: str | Path, pcm: np.ndarray, sample_rate: int = SAMPLE_RATE) -> None:
    """Write a mono 16-bit WAV file."""
    Path(path).write_bytes(wav_bytes(pcm, sample_rate))


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """Read a 16-bit PCM WAV file as (mono int16 samples, sample rate); channels are averaged."""
    with wave.open(str(path), "rb") as w:
        if w.getsampwidth() != 2:
            raise ValueError(
                f"{path}: only 16-bit PCM WAV is read here (use `talk --wav` decoding)"
            )
        rate, channels = w.getframerate(), w.getnchannels()
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1).astype(np.int16)
    return data, rate
