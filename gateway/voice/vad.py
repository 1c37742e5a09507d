"""Streaming voice activity detection with Silero VAD v6, run directly with onnxruntime.

The model is the one ``faster-whisper`` ships and runs in ``faster_whisper/vad.py``: it scores
512-sample chunks of 16 kHz audio (32 ms), each preceded by the last 64 samples of the chunk before
it, and carries an LSTM state ``(h, c)``, each ``(1, 1, 128)``, from chunk to chunk. Its input's
first axis is time, so a batch of consecutive chunks runs in one call with the state threaded through.

One :class:`SileroVad` (the ONNX session) serves the whole process; each audio stream has its own
:class:`VadStream` holding the state, the context and the samples not yet making a full chunk.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import onnxruntime

from gateway.audio import SAMPLE_RATE, pcm16_to_float
from gateway.catalogue import silero_vad_path
from gateway.workers import model_threads

#: Samples the model scores at a time (32 ms at 16 kHz); the only size v6 accepts at this rate.
CHUNK_SAMPLES = 512
#: Milliseconds of audio in one chunk.
CHUNK_MS = CHUNK_SAMPLES * 1000 // SAMPLE_RATE
#: Samples of the previous chunk prepended to each chunk.
CONTEXT_SAMPLES = 64
_STATE_SHAPE = (1, 1, 128)


class SileroVad:
    """The Silero VAD v6 ONNX session. Thread-safe: onnxruntime sessions allow concurrent ``run``."""

    def __init__(self, path: Path | None = None) -> None:
        opts = onnxruntime.SessionOptions()
        # A 32 ms chunk costs well under a millisecond; more threads only add contention with STT.
        opts.inter_op_num_threads = 1
        opts.intra_op_num_threads = model_threads()  # 1 unless a test shakes it
        opts.log_severity_level = 4
        self._session = onnxruntime.InferenceSession(
            str(path or silero_vad_path()), providers=["CPUExecutionProvider"], sess_options=opts
        )

    def score(
        self, windows: np.ndarray, h: np.ndarray, c: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Speech probabilities of consecutive ``(n, 576)`` context+chunk windows; new ``(h, c)``."""
        probs, h, c = self._session.run(None, {"input": windows, "h": h, "c": c})
        return np.asarray(probs, dtype=np.float32).reshape(-1), h, c

    def stream(self) -> VadStream:
        """A new stream with fresh state that shares this session."""
        return VadStream(self)


@functools.cache
def shared_vad() -> SileroVad:
    """The process-wide VAD session, loaded on first use."""
    return SileroVad()


class VadStream:
    """Scores one audio stream, fed in pieces of any length.

    :meth:`process` returns the complete chunks seen so far and one probability per chunk; samples
    that do not yet fill a chunk wait (at most 511 of them) for the next call.
    """

    def __init__(self, vad: SileroVad | None = None) -> None:
        self._vad = vad or shared_vad()
        self.reset()

    def reset(self) -> None:
        """Forget all audio: the next sample starts a new stream."""
        self._h = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._c = np.zeros(_STATE_SHAPE, dtype=np.float32)
        self._context = np.zeros(CONTEXT_SAMPLES, dtype=np.float32)
        self._pending = np.zeros(0, dtype=np.float32)

    def process(self, audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Feed 16 kHz mono audio (int16, or float32 in [-1, 1]).

        Returns ``(chunks, probabilities)``: float32 chunks of shape ``(n, 512)`` in stream order
        and their ``n`` speech probabilities in [0, 1].
        """
        samples = pcm16_to_float(audio) if audio.dtype == np.int16 else audio.astype(np.float32)
        data = np.concatenate([self._pending, samples.reshape(-1)])
        n = len(data) // CHUNK_SAMPLES
        self._pending = data[n * CHUNK_SAMPLES :]
        chunks = data[: n * CHUNK_SAMPLES].reshape(n, CHUNK_SAMPLES)
        if n == 0:
            return chunks, np.zeros(0, dtype=np.float32)
        # Each window is the previous chunk's last 64 samples followed by the chunk itself.
        tails = np.vstack([self._context, chunks[:-1, -CONTEXT_SAMPLES:]])
        windows = np.ascontiguousarray(np.hstack([tails, chunks]))
        probs, self._h, self._c = self._vad.score(windows, self._h, self._c)
        self._context = chunks[-1, -CONTEXT_SAMPLES:].copy()
        return chunks, probs
