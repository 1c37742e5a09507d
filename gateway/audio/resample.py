"""Sample-rate and channel conversion with PyAV's resampler (libswresample).

Streaming use keeps one :class:`Resampler` per stream so filter state carries across chunks;
:func:`resample` converts a whole clip at once.
"""

from __future__ import annotations

import av
import numpy as np

from gateway.audio.frames import SAMPLE_RATE

_LAYOUTS = {1: "mono", 2: "stereo"}


class Resampler:
    """Converts int16 PCM chunks from ``(in_rate, in_channels)`` to mono int16 at ``out_rate``.

    Input arrays are interleaved int16, shape ``(n * channels,)``. Output chunks are 1-D int16.
    """

    def __init__(self, in_rate: int, out_rate: int = SAMPLE_RATE, in_channels: int = 1) -> None:
        if in_channels not in _LAYOUTS:
            raise ValueError(f"unsupported channel count {in_channels}; use 1 or 2")
        self.in_rate, self.out_rate, self.in_channels = in_rate, out_rate, in_channels
        self._passthrough = in_rate == out_rate and in_channels == 1
        self._rs = av.AudioResampler(format="s16", layout="mono", rate=out_rate)

    def process(self, pcm: np.ndarray) -> np.ndarray:
        """Convert one chunk; may return fewer or more samples than a plain ratio (filter delay)."""
        if self._passthrough:
            return pcm.astype(np.int16, copy=False)
        if pcm.size == 0:
            return np.zeros(0, dtype=np.int16)
        frame = av.AudioFrame.from_ndarray(
            np.ascontiguousarray(pcm, dtype=np.int16).reshape(1, -1),
            format="s16",
            layout=_LAYOUTS[self.in_channels],
        )
        frame.sample_rate = self.in_rate
        return self._collect(self._rs.resample(frame))

    def flush(self) -> np.ndarray:
        """Drain the samples still held by the filter at the end of a stream."""
        if self._passthrough:
            return np.zeros(0, dtype=np.int16)
        return self._collect(self._rs.resample(None))

    @staticmethod
    def _collect(frames: list[av.AudioFrame]) -> np.ndarray:
        if not frames:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate([f.to_ndarray().reshape(-1) for f in frames]).astype(np.int16)


def resample(
    pcm: np.ndarray, in_rate: int, out_rate: int = SAMPLE_RATE, in_channels: int = 1
) -> np.ndarray:
    """Convert a whole int16 clip to mono at ``out_rate``."""
    rs = Resampler(in_rate, out_rate, in_channels)
    return np.concatenate([rs.process(pcm), rs.flush()])
