"""Smart Turn v3.2 (pipecat's audio end-of-turn model, BSD-2-Clause), when it is installed.

The weights ship inside the PyPI wheel ``pipecat-ai==1.14.0``; the gateway depends on it only
through the optional ``smart-turn`` extra, because pipecat's base dependencies (numba, llvmlite,
openai, pillow, protobuf, … — 18 packages this project does not otherwise need) are large, and
on the benchmark's paused requests the model adds little (see ``scripts/bench_turns.py``). The
file is found through the installed distribution's file list, so no pipecat module is imported.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.workers import model_threads

#: The model file inside the ``pipecat-ai`` distribution.
MODEL_FILE = "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx"
#: The model reads the last 8 s of audio (zero-padded in front).
WINDOW_S = 8


class _Session(Protocol):
    """What this module runs of an ``onnxruntime.InferenceSession`` (a package without types)."""

    def run(
        self, output_names: list[str] | None, input_feed: dict[str, np.ndarray]
    ) -> list[np.ndarray]: ...


class _Features(Protocol):
    """faster-whisper's ``FeatureExtractor``: log-mel features of a waveform."""

    def __call__(self, waveform: np.ndarray, padding: int = ...) -> np.ndarray: ...


@functools.cache
def smart_turn_path() -> Path | None:
    """The installed model file, or None without the ``smart-turn`` extra."""
    try:
        dist = importlib.metadata.distribution("pipecat-ai")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if str(f) == MODEL_FILE:
            path = Path(str(dist.locate_file(f)))
            return path if path.exists() else None
    return None


class SmartTurn:
    """P(complete) from Smart Turn v3.2, on the audio up to the pause."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._session: _Session | None = None

    def _load(self) -> _Session:
        if self._session is None:
            import onnxruntime

            path = self._path or smart_turn_path()
            if path is None:
                raise FileNotFoundError("Smart Turn is not installed (the smart-turn extra)")
            opts = onnxruntime.SessionOptions()
            opts.inter_op_num_threads = 1
            opts.intra_op_num_threads = model_threads()  # 1 unless a test shakes it
            opts.log_severity_level = 4
            self._session = onnxruntime.InferenceSession(
                str(path), providers=["CPUExecutionProvider"], sess_options=opts
            )
        return self._session

    def score(self, audio: np.ndarray, voiced_end: int) -> float | None:
        """P(complete) for the audio so far (the model wants the silence after the speech)."""
        from faster_whisper.feature_extractor import FeatureExtractor

        x = audio.astype(np.float32)
        if audio.dtype == np.int16:
            x /= 32768.0
        n = WINDOW_S * SAMPLE_RATE
        x = x[-n:]
        x = np.pad(x, (n - len(x), 0))
        x = (x - x.mean()) / np.sqrt(x.var() + 1e-7)
        feats = _extractor(FeatureExtractor)(x, padding=0)[:, : WINDOW_S * 100]
        out = self._load().run(None, {"input_features": feats[None].astype(np.float32)})
        return float(np.asarray(out[0]).reshape(-1)[0])


@functools.cache
def _extractor(cls: Callable[..., _Features]) -> _Features:
    return cls(feature_size=80, chunk_length=WINDOW_S)
