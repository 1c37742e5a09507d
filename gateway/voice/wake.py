"""Wake-word detection: speech becomes an utterance only after the wake phrase.

Two detectors share one interface (:class:`WakeListener`), built by :func:`make_detector`:

- :class:`WakeWordDetector` runs a microWakeWord model (``pymicro-wakeword``: ``hey_jarvis``,
  ``okay_nabu``, ``alexa``, ``hey_mycroft``) on the 16 kHz stream, at about 0.3 % of one core.
- :class:`PhraseSpotter` supports any phrase ("hey floor"): it cuts short speech segments with the
  VAD and endpointer and looks for the phrase in their Whisper transcripts. It runs Whisper on
  every segment of speech while idle, so it costs ~25 times more CPU, reacts later and hears
  the phrase less reliably; it is a fallback a user chooses, not the default.

``scripts/bench_wake.py`` measures recall, false wakes per hour, firing delay and CPU for both.

Both report a :class:`WakeDetection` carrying the sample index where the wake phrase ends, so the
session can start the utterance right after it.

Privacy by construction
-----------------------
Nothing said before the wake phrase leaves a detector: no method or attribute returns audio,
features or transcripts, and a detection carries sample indices and a score only. What a
detector holds is bounded by what its computation needs:

- :class:`WakeWordDetector`: fewer than 160 samples (10 ms) not yet making a feature step, the
  feature front end's 30 ms analysis window, fewer than 3 feature frames, and the model's
  internal activations. The model is reloaded after each detection.
- :class:`PhraseSpotter`: the VAD's pending samples and the endpointer's pre-roll and current
  segment (at most ``max_utterance_ms``, 3 s); each segment is handed to the transcriber and
  dropped, and its transcript never leaves :meth:`PhraseSpotter.process`.

To start the utterance at :attr:`WakeDetection.end`, the session itself keeps the last
``max_lookback`` samples of the stream (see :class:`WakeListener`) and drops everything before
``end`` once a detection arrives.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

from gateway.audio import SAMPLE_RATE, float_to_pcm16
from gateway.catalogue import ModelNotAvailable, wake_words
from gateway.voice.endpoint import Endpointer, EndpointSettings, Utterance
from gateway.voice.stt import SpeechToText, Transcriber, TranscriberBusy, Word
from gateway.voice.vad import SileroVad, VadStream
from gateway.voice.words import edit_distance, words

_log = logging.getLogger(__name__)

#: Samples per feature step of the microWakeWord front end (10 ms).
STEP_SAMPLES = 160
#: Prefix of a :func:`make_detector` name that selects the phrase spotter.
PHRASE_PREFIX = "phrase:"
#: The wake choice that turns the wake word off.
WAKE_OFF = "off"

#: How long after the end of the wake phrase each model fires, in ms: the median over the
#: generated clips of ``scripts/bench_wake.py`` (piper and espeak-ng voices, 0.8–1.4× speed,
#: clean and noisy). :attr:`WakeDetection.end` is the firing sample minus this.
MODEL_LATENCY_MS: dict[str, int] = {
    "hey_jarvis": 120,
    "okay_nabu": 180,
    "alexa": 230,
    "hey_mycroft": 60,
}


@dataclass(frozen=True)
class WakeDetection:
    """The wake phrase was heard.

    Sample indices count from the first sample the detector was given (or since its last
    :meth:`~WakeListener.reset`).

    Attributes:
        model: the detector's name: a microWakeWord model, or ``phrase:<text>``.
        end: estimated index one past the wake phrase's last sample; the utterance starts here.
        detected_at: samples the detector had consumed when it decided; ``detected_at - end``
            is how much audio the session must still have to start the utterance at ``end``.
        score: the model's smoothed probability, or for a phrase the mean Whisper probability
            of the matched words; in [0, 1].
    """

    model: str
    end: int
    detected_at: int
    score: float


class WakeListener(Protocol):
    """What a session needs from a wake detector (both :func:`make_detector` results)."""

    @property
    def name(self) -> str:
        """The name :func:`make_detector` was given."""
        ...

    @property
    def max_lookback(self) -> int:
        """The most samples ``detected_at - end`` can be: the session keeps this much audio."""
        ...

    async def listen(self, audio: np.ndarray) -> list[WakeDetection]:
        """Feed 16 kHz mono audio (int16, or float32 in [-1, 1]) of any length."""
        ...

    def reset(self) -> None:
        """Forget all audio: the next sample is index 0 of a new stream."""
        ...


@dataclass(frozen=True)
class WakeSettings:
    """How eagerly a microWakeWord model fires.

    Attributes:
        threshold: smoothed probability above which the model fires; ``None`` uses the model's
            own cutoff (0.85–0.97, tuned by its author for few false wakes). Lower catches more
            accents and noisier rooms, and wakes more often on other speech.
        refractory_ms: after a detection, further detections are suppressed this long, so a
            repeated or drawn-out wake phrase wakes once.
    """

    threshold: float | None = None
    refractory_ms: int = 2000

    def __post_init__(self) -> None:
        if self.threshold is not None and not 0.0 < self.threshold < 1.0:
            raise ValueError("threshold must be between 0 and 1 (or None for the model's own)")
        if self.refractory_ms < 0:
            raise ValueError("refractory_ms must be >= 0")


def _as_pcm16(audio: np.ndarray) -> np.ndarray:
    pcm = audio if audio.dtype == np.int16 else float_to_pcm16(audio.astype(np.float32))
    return pcm.reshape(-1)


class WakeWordDetector:
    """A microWakeWord model listening to one audio stream.

    Each stream needs its own detector: the model object holds the stream's state (its
    interpreter's streaming activations, the last probabilities and pending feature frames), so
    it cannot be shared. One costs about 0.25 MB and 1 ms to create, and 0.3 ms to reset.
    """

    def __init__(self, model: str, settings: WakeSettings | None = None) -> None:
        try:
            builtin = Model(model)
        except ValueError:
            raise ModelNotAvailable(
                f"unknown wake word model {model!r}: use one of {wake_words()}, "
                f"or '{PHRASE_PREFIX}<your phrase>' for a custom phrase"
            ) from None
        self.settings = settings or WakeSettings()
        self._model = MicroWakeWord.from_builtin(builtin)
        self._features = MicroWakeWordFeatures()
        self._threshold = self.settings.threshold or self._model.probability_cutoff
        self._latency = SAMPLE_RATE * MODEL_LATENCY_MS[builtin.value] // 1000
        self._refractory = SAMPLE_RATE * self.settings.refractory_ms // 1000
        self._name = builtin.value
        self.reset()

    @property
    def name(self) -> str:
        """The model's name, e.g. ``hey_jarvis``."""
        return self._name

    @property
    def phrase(self) -> str:
        """What to say, e.g. "Hey Jarvis"."""
        return str(self._model.wake_word)

    @property
    def threshold(self) -> float:
        """The smoothed probability above which the model fires."""
        return self._threshold

    @property
    def max_lookback(self) -> int:
        """Samples from :attr:`WakeDetection.end` to ``detected_at`` (the model's latency)."""
        return self._latency

    def reset(self) -> None:
        """Forget all audio: the next sample is index 0 of a new stream."""
        self._model.reset()
        self._features.reset()
        self._pending = np.zeros(0, dtype=np.int16)
        self._position = 0
        self._quiet_until = 0

    def process(self, audio: np.ndarray) -> list[WakeDetection]:
        """Feed 16 kHz mono audio (int16, or float32 in [-1, 1]) of any length.

        Returns the detections it caused, usually none. Samples that do not fill a 10 ms step
        wait for the next call.
        """
        data = np.concatenate([self._pending, _as_pcm16(audio)])
        steps = len(data) // STEP_SAMPLES
        detections = []
        # One step at a time, so each feature frame (and each detection) is pinned to the sample
        # that completed it.
        for i in range(steps):
            step = data[i * STEP_SAMPLES : (i + 1) * STEP_SAMPLES]
            self._position += STEP_SAMPLES
            for features in self._features.process_streaming(step.tobytes()):
                score = self._model.process_streaming_prob(features)
                if score is not None and score > self._threshold:
                    detection = self._fire(score)
                    if detection:
                        detections.append(detection)
        self._pending = data[steps * STEP_SAMPLES :].copy()
        return detections

    async def listen(self, audio: np.ndarray) -> list[WakeDetection]:
        """:meth:`process`, for the :class:`WakeListener` interface (cheap enough to run inline)."""
        return self.process(audio)

    def _fire(self, score: float) -> WakeDetection | None:
        # The smoothed probability stays above the threshold for several inferences after the
        # phrase; reloading the model forgets the phrase so it fires once.
        self._model.reset()
        if self._position < self._quiet_until:
            return None
        self._quiet_until = self._position + self._refractory
        return WakeDetection(
            model=self._name,
            end=max(0, self._position - self._latency),
            detected_at=self._position,
            score=float(score),
        )


def phrase_words(text: str) -> list[str]:
    """Lower-case words with punctuation dropped ("Hey, Floor!" → ["hey", "floor"])."""
    return words(text.replace("'", "").replace("’", ""))


def find_phrase(
    phrase: Sequence[str], words: Sequence[str], max_edits: int
) -> tuple[int, int] | None:
    """The span ``[i, j)`` of ``words`` closest to ``phrase``, if within ``max_edits`` letters.

    Letters are compared with spaces removed and the span may have one word more or fewer than
    the phrase, so Whisper's "hay floor", "hey flor" and "heyfloor" all match "hey floor".
    Among equally close spans the earliest wins.
    """
    target = "".join(phrase)
    best: tuple[int, int, int] | None = None  # (distance, i, j)
    lengths = range(max(1, len(phrase) - 1), len(phrase) + 2)
    for i in range(len(words)):
        for n in lengths:
            if i + n > len(words):
                break
            distance = edit_distance(target, "".join(words[i : i + n]))
            if distance <= max_edits and (best is None or distance < best[0]):
                best = (distance, i, i + n)
    return (best[1], best[2]) if best else None


def _spotter_segments() -> EndpointSettings:
    return EndpointSettings(end_silence_ms=400, max_utterance_ms=3000)


@dataclass(frozen=True)
class PhraseSettings:
    """How the phrase spotter cuts and matches.

    Attributes:
        endpoint: segmentation of idle speech. Segments are capped at 3 s: a wake phrase is
            short, and Whisper's cost per segment grows with its length. The 400 ms end silence
            answers sooner than an utterance's (:class:`EndpointSettings`) at the price of more,
            shorter segments.
        max_edit_ratio: letters that may differ from the phrase, as a fraction of its letters
            (at least one): 0.15 lets "hey flor" and "hay floor" match "hey floor" (8 letters,
            1 edit). Higher catches more mishearings and wakes on more near-rhymes.
        refractory_ms: segments ending this soon after a detection are not transcribed.
    """

    endpoint: EndpointSettings = field(default_factory=_spotter_segments)
    max_edit_ratio: float = 0.15
    refractory_ms: int = 2000


class PhraseSpotter:
    """Spots a custom wake phrase in Whisper transcripts of short speech segments.

    Cost: every segment of speech heard while idle is transcribed: with tiny.en on 2 threads,
    about 4.3 s of CPU per minute of continuous speech (RTF 0.07), against 0.15 s for a
    microWakeWord model. Latency: the segment must end first, so a detection comes
    ``end_silence_ms`` after the segment's last word (1.4 s after "floor" in "hey floor, what
    time is it?", 0.4 s when the phrase is said alone) plus a decode of ~0.1 s;
    :meth:`process` awaits the decode before it reads further audio.

    Recall is the weak point: tiny.en often hears a short phrase said alone as something else
    ("hey floor" → "A4", "Take lore"); ``scripts/bench_wake.py`` prints the figures.
    """

    def __init__(
        self,
        phrase: str,
        transcriber: SpeechToText | None = None,
        *,
        vad: SileroVad | None = None,
        settings: PhraseSettings | None = None,
    ) -> None:
        self._words = phrase_words(phrase)
        if not self._words:
            raise ValueError(f"wake phrase {phrase!r} has no words: give one like 'hey floor'")
        self.settings = s = settings or PhraseSettings()
        self._name = PHRASE_PREFIX + " ".join(self._words)
        self._max_edits = max(1, round(s.max_edit_ratio * len("".join(self._words))))
        self._transcriber = transcriber or Transcriber()
        self._vad = VadStream(vad)
        self._refractory = SAMPLE_RATE * s.refractory_ms // 1000
        # A detection is decided at its segment's end, and the phrase ends inside the segment,
        # whose length (pre-roll and end silence included) is capped.
        self._max_lookback = SAMPLE_RATE * s.endpoint.max_utterance_ms // 1000
        self.reset()

    @property
    def name(self) -> str:
        """``phrase:`` and the normalised phrase, e.g. ``phrase:hey floor``."""
        return self._name

    @property
    def max_lookback(self) -> int:
        """The most samples from :attr:`WakeDetection.end` to ``detected_at``."""
        return self._max_lookback

    def reset(self) -> None:
        """Forget all audio: the next sample is index 0 of a new stream."""
        self._vad.reset()
        self._endpointer = Endpointer(self.settings.endpoint)
        self._quiet_until = 0

    async def process(self, audio: np.ndarray) -> list[WakeDetection]:
        """Feed 16 kHz mono audio (int16, or float32 in [-1, 1]) of any length.

        Returns the detections it caused. When a segment ends, this awaits its transcript.
        """
        chunks, probabilities = self._vad.process(audio)
        detections = []
        for chunk, probability in zip(chunks, probabilities, strict=True):
            for event in self._endpointer.process(chunk, float(probability)):
                if isinstance(event, Utterance):
                    detection = await self._spot(event)
                    if detection:
                        detections.append(detection)
        return detections

    async def listen(self, audio: np.ndarray) -> list[WakeDetection]:
        """:meth:`process`, for the :class:`WakeListener` interface."""
        return await self.process(audio)

    async def _spot(self, segment: Utterance) -> WakeDetection | None:
        if segment.end < self._quiet_until:
            return None
        try:
            # Naming the phrase as Whisper's preceding text makes an unusual phrase heard as
            # itself (measured: recall 45 % → 92 % before a request), at about twice the CPU.
            transcript = await self._transcriber.transcribe(
                segment.audio, speech_end_s=segment.voiced_end_s, prompt=" ".join(self._words)
            )
        except TranscriberBusy:
            _log.warning("wake phrase: speech-to-text is saturated, a speech segment was skipped")
            return None
        matched = self._match(transcript.words)
        if not matched:
            return None
        self._quiet_until = segment.end + self._refractory
        return WakeDetection(
            model=self._name,
            end=min(segment.end, segment.start + round(matched[-1].end * SAMPLE_RATE)),
            detected_at=segment.end,
            score=float(np.mean([w.probability for w in matched])),
        )

    def _match(self, words: Sequence[Word]) -> list[Word]:
        """The transcript's words that make up the phrase, or [] when it is not there."""
        tokens: list[str] = []
        owners: list[int] = []  # index in ``words`` of each token
        for index, word in enumerate(words):
            for token in phrase_words(word.word):
                tokens.append(token)
                owners.append(index)
        span = find_phrase(self._words, tokens, self._max_edits)
        if span is None:
            return []
        first, last = owners[span[0]], owners[span[1] - 1]
        return list(words[first : last + 1])


def known_wake(name: str) -> bool:
    """Whether ``name`` is a wake choice: :data:`WAKE_OFF`, a built-in microWakeWord model, or
    ``phrase:<text>`` (:func:`make_detector` builds the last two)."""
    return name == WAKE_OFF or name in wake_words() or name.startswith(PHRASE_PREFIX)


def make_detector(
    name: str,
    *,
    settings: WakeSettings | None = None,
    transcriber: SpeechToText | None = None,
) -> WakeWordDetector | PhraseSpotter:
    """A new detector for one stream: a microWakeWord model by name (``hey_jarvis``, ...), or
    ``phrase:<text>`` for the phrase spotter (``transcriber`` defaults to the shared tiny.en).

    ``settings`` applies to microWakeWord models; the spotter's refractory period comes from
    them too when given.
    """
    if name.startswith(PHRASE_PREFIX):
        phrase_settings = PhraseSettings(refractory_ms=(settings or WakeSettings()).refractory_ms)
        return PhraseSpotter(name[len(PHRASE_PREFIX) :], transcriber, settings=phrase_settings)
    return WakeWordDetector(name, settings)
