"""Audio core: the frame format every stage speaks, and conversion into and out of it.

Inside the gateway, audio is 16 kHz mono. Stages exchange numpy arrays: ``int16`` for PCM on the
wire, ``float32`` in [-1, 1] for models. Conversions happen at the edges (see :mod:`.resample`).
"""

from gateway.audio.frames import (
    FRAME_MS,
    FRAME_SAMPLES,
    SAMPLE_RATE,
    float_to_pcm16,
    pcm16_to_float,
    read_wav,
    wav_bytes,
    write_wav,
)
from gateway.audio.resample import Resampler, resample

__all__ = [
    "FRAME_MS",
    "FRAME_SAMPLES",
    "SAMPLE_RATE",
    "Resampler",
    "float_to_pcm16",
    "pcm16_to_float",
    "read_wav",
    "resample",
    "wav_bytes",
    "write_wav",
]
