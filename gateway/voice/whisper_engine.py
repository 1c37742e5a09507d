"""faster-whisper loaded once per process: the model, its tokenizers, its decode queue, the
window sizes it is fed, and the languages it knows."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import ctranslate2
from faster_whisper import WhisperModel
from faster_whisper.tokenizer import _LANGUAGE_CODES, Tokenizer

from gateway.audio import SAMPLE_RATE
from gateway.errors import ConfigError, SpeechError
from gateway.voice.decode_queue import DecodeQueue

HOP = 160  # samples per mel frame
FULL_FRAMES = 3000  # Whisper's 30 s window
#: Fitted windows come in steps of 0.5 s. CTranslate2's oneDNN convolutions compile and cache
#: kernels for every input length they meet and keep them (up to 1024 cached primitives): 60
#: new lengths grew the process by 63 MB, so lengths to the frame made it grow with every new
#: clip length heard. In steps, a 4–14 s window has 20 lengths. The extra padding (0.25 s on
#: average) is ~1 ms of a ~30 ms encoder pass.
WINDOW_STEP_FRAMES = 50


#: Set when nobody waits for a decode any more (see
#: :meth:`gateway.voice.stt.Transcriber._run_timed`).
Flag = threading.Event


class DecodeAbandoned(SpeechError):
    """A decode stopped between stages: its caller no longer waits for it (nobody sees this
    error: the caller was cancelled, and the worker is free for the next decode)."""


def check_abandoned(abandon: Flag | None, engine: Engine) -> None:
    """Stop here if the decode's caller has stopped waiting."""
    if abandon is not None and abandon.is_set():
        engine.abandoned += 1  # read by monitoring and tests; a lost update is harmless
        raise DecodeAbandoned


class Engine:
    """A loaded model, its tokenizers and its scheduler; one per process."""

    def __init__(
        self, path: Path, *, compute_type: str, cpu_threads: int, workers: int, max_pending: int
    ) -> None:
        self.model = WhisperModel(
            str(path), device="cpu", compute_type=compute_type, cpu_threads=cpu_threads
        )
        self.whisper: ctranslate2.models.Whisper = self.model.model
        self.queue = DecodeQueue(workers, max_pending)
        self._lock = threading.Lock()
        self._tokenizers: dict[str, Tokenizer] = {}
        self.full_window_retries = 0
        self.abandoned = 0

    def tokenizer(self, language: str) -> Tokenizer:
        with self._lock:
            if language not in self._tokenizers:
                self._tokenizers[language] = Tokenizer(
                    self.model.hf_tokenizer,
                    self.whisper.is_multilingual,
                    task="transcribe",
                    language=language,
                )
            return self._tokenizers[language]


def check_language(language: str | None) -> None:
    """Raise :class:`ConfigError` unless ``language`` is None or a code Whisper knows."""
    if language is not None and language not in _LANGUAGE_CODES:
        raise ConfigError(
            f"Whisper has no language {language!r}: give its code, e.g. en, de, fr, es "
            f"({len(_LANGUAGE_CODES)} known)"
        )


@functools.cache
def shared_engine(
    path: Path, *, compute_type: str, cpu_threads: int, workers: int, max_pending: int
) -> Engine:
    """The process's engine for a model file and these settings (loaded on first use)."""
    return Engine(
        path,
        compute_type=compute_type,
        cpu_threads=cpu_threads,
        workers=workers,
        max_pending=max_pending,
    )


def fitted_frames(samples: int, padding_s: float) -> int:
    """Mel frames for a clip of ``samples`` plus at least ``padding_s`` of silence, rounded up
    to a multiple of :data:`WINDOW_STEP_FRAMES` (so even, as the encoder halves it), ≤ 3000."""
    frames = -(-(samples + round(padding_s * SAMPLE_RATE)) // HOP)
    return min(FULL_FRAMES, -(-frames // WINDOW_STEP_FRAMES) * WINDOW_STEP_FRAMES)
