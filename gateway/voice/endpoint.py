"""End-of-utterance detection: a pure state machine over VAD chunks.

:class:`Endpointer` is handed each VAD chunk with its speech probability and returns events; it
does no I/O and reads no clock — time is the count of samples seen, so a test can replay any audio
exactly. Sample indices in events count from the first sample the endpointer was given.

Events, in the order they can occur for one utterance::

    SpeechStarted → (SpeechPaused → SpeechResumed)* → [SpeechPaused] → Utterance

A :class:`SpeechPaused` is a hint that the person may have finished: a session can start decoding
speculatively and keep the result if the :class:`Utterance` follows without a resume.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from gateway.audio import SAMPLE_RATE


@dataclass(frozen=True)
class EndpointSettings:
    """Timing and threshold trade-offs; durations in milliseconds.

    Attributes:
        pre_roll_ms: audio kept from before the first voiced chunk and put at the head of the
            utterance. VAD fires a chunk or two after a soft onset ("h", "f", "s"); without this
            margin Whisper hears "ello" for "hello". Longer costs only decode time.
        min_speech_ms: voiced audio needed before speech counts as started. Shorter lets clicks,
            coughs and door knocks start utterances; longer drops short answers: piper's "No."
            is voiced for 192-320 ms (six renditions), and at 250 ms half of them were never
            heard. Barge-in has its own, shorter threshold (the session's ``barge_in_ms``).
        end_silence_ms: silence that ends an utterance. This is the main latency lever: every
            reply waits this long after the last word. People pause 200–500 ms inside sentences
            (breaths, commas, thinking); 550 ms rarely cuts a sentence in two while keeping the
            wait barely noticeable. Raise it for hesitant speakers or dictation. In a voice
            session the turn rule sets it (``TurnRule.end_silence_ms``, ``max_wait_ms``).
        pause_ms: silence after which a turn may end early, before ``end_silence_ms``, when
            what was said reads as finished (the session decides that; see
            :attr:`Endpointer.silence_ms`). Also the silence that drops a candidate with too
            little voice in it (a click).
        speculate_ms: silence after which :class:`SpeechPaused` is emitted so decoding can
            start early — before ``pause_ms``, so that the transcript is ready by the time the
            pause is long enough to act on. Short values make more wasted speculative decodes
            (at the gaps between words); long ones gain less time. Silence is counted in 32 ms
            VAD chunks, so 100 ms meant 128. On the turn-taking benchmark a finished request
            ends when its verdict arrives (this silence + the decode, ~300 ms), not at the
            200 ms pause: the decode is the wait. 64 ms gains 64 ms on every early end for
            0.13 wasted decodes per complete request (none at 100 ms; 0.32 at 32 ms); a wasted
            decode still queued is dropped when speech resumes. With one-thread decodes, 32 ms
            took ``talk``'s median from 395 to 363 ms (no more cut-offs) but 12 people's first
            audio from p50 / p95 1.16 / 2.24 s to 1.94 / 3.11 s (``scripts/load.py``): a decode
            already running when the real end comes holds the one Whisper worker. Hence
            ``idle_speculate_ms``.
        idle_speculate_ms: ``speculate_ms`` while nothing else needs the model — no decode
            running or queued and nobody else in the middle of an utterance (the turn-taker is
            told; see :meth:`Endpointer.speculate_at`). A decode wasted at a gap between words
            then delays nobody, so one person alone gets the earlier start; with many talking
            the model is rarely idle and ``speculate_ms`` holds (``load.py``: 6 of 99 decodes
            started at 32 ms with 12 people talking; alone, 8 of 10, the other two behind the
            person's own partial transcript). With beam-3 decodes that mostly
            fit inside the 200 ms pause it gains less than it did at beam 5: ``talk``'s median
            362 ms at 32 against 364 at 64; over WebRTC (``load.py``, one person, two 90 s runs
            each) the endpoint stage 252 / 259 against 282 / 262 ms. Longer requests, whose
            decode outlasts the pause, gain the whole 32 ms.
        max_utterance_ms: an utterance is cut here (and a new one starts if speech goes on). It
            bounds memory and decode time, and keeps the clip inside Whisper's 30 s window.
        activation: probability at or above which a chunk is speech.
        deactivation: probability below which a chunk is silence. Between the two thresholds a
            chunk continues whatever run (speech or silence) is under way: this hysteresis keeps
            a probability hovering around one value from toggling speech on and off.
    """

    pre_roll_ms: int = 300
    min_speech_ms: int = 160
    end_silence_ms: int = 550
    pause_ms: int = 200
    speculate_ms: int = 64
    idle_speculate_ms: int = 32
    max_utterance_ms: int = 15_000
    activation: float = 0.5
    deactivation: float = 0.35

    def __post_init__(self) -> None:
        if not 0.0 <= self.deactivation <= self.activation <= 1.0:
            raise ValueError("need 0 <= deactivation <= activation <= 1")
        if not 0 < self.pause_ms < self.end_silence_ms:
            raise ValueError("need 0 < pause_ms < end_silence_ms (a pause comes before the end)")
        if not 0 < self.speculate_ms <= self.pause_ms:
            raise ValueError("need 0 < speculate_ms <= pause_ms (decoding starts before acting)")
        if not 0 < self.idle_speculate_ms <= self.speculate_ms:
            raise ValueError("need 0 < idle_speculate_ms <= speculate_ms (idle starts sooner)")


@dataclass(frozen=True)
class SpeechStarted:
    """Speech has lasted ``min_speech_ms``; ``start`` is the first voiced sample."""

    start: int


@dataclass(frozen=True)
class SpeechPaused:
    """Silence for ``speculate_ms`` (or what :meth:`Endpointer.speculate_at` set) after voiced
    audio ending at sample ``voiced_end``."""

    voiced_end: int


@dataclass(frozen=True)
class SpeechResumed:
    """Speech came back after a :class:`SpeechPaused`, at sample ``sample``."""

    sample: int


@dataclass(frozen=True, eq=False)
class Utterance:
    """A finished utterance.

    Attributes:
        audio: samples ``[start, end)`` — pre-roll, speech, and the trailing silence that ended it.
        start: index of the clip's first sample.
        end: index one past the clip's last sample.
        voiced_end: index one past the last voiced chunk (``start <= voiced_end <= end``).
        cut: True when ``max_utterance_ms`` ended it rather than silence.
    """

    audio: np.ndarray
    start: int
    end: int
    voiced_end: int
    cut: bool = False

    @property
    def voiced_end_s(self) -> float:
        """Seconds from the clip's start to the end of speech (what the transcriber checks)."""
        return (self.voiced_end - self.start) / SAMPLE_RATE


EndpointEvent = SpeechStarted | SpeechPaused | SpeechResumed | Utterance


def _samples(ms: int) -> int:
    return SAMPLE_RATE * ms // 1000


class Endpointer:
    """Turns a stream of (chunk, speech probability) into utterance events.

    Memory is bounded: the pre-roll ring holds ``pre_roll_ms`` and an utterance at most
    ``max_utterance_ms`` of audio.
    """

    def __init__(self, settings: EndpointSettings | None = None) -> None:
        self.settings = s = settings or EndpointSettings()
        self._pre_roll: deque[np.ndarray] = deque()
        self._pre_roll_samples = 0
        self._max_pre_roll = _samples(s.pre_roll_ms)
        self._min_speech = _samples(s.min_speech_ms)
        self._end_silence = _samples(s.end_silence_ms)
        self._pause = _samples(s.pause_ms)
        self._speculate = _samples(s.speculate_ms)
        self._max_len = _samples(s.max_utterance_ms)
        self._position = 0  # samples seen so far
        self._chunks: list[np.ndarray] = []  # the candidate or current utterance
        self._start = 0  # sample index of self._chunks[0]
        self._first_voiced = 0
        self._voiced = 0  # voiced samples in the candidate (before SpeechStarted)
        self._voiced_end = 0
        self._speaking = False  # SpeechStarted was emitted for the current utterance
        self._in_silence = False
        self._paused = False

    @property
    def active(self) -> bool:
        """True between :class:`SpeechStarted` and its :class:`Utterance`."""
        return self._speaking

    @property
    def position(self) -> int:
        """Samples seen so far (the endpointer's clock)."""
        return self._position

    @property
    def silence_ms(self) -> int:
        """Silence since the last voiced chunk of the utterance under way (0 while voiced or
        when no speech is under way)."""
        if not self._speaking or not self._in_silence:
            return 0
        return (self._position - self._voiced_end) * 1000 // SAMPLE_RATE

    def speculate_at(self, ms: int) -> None:
        """Emit :class:`SpeechPaused` at ``ms`` of silence from now on, instead of the
        settings' ``speculate_ms`` (``idle_speculate_ms`` while the model is idle). A pause
        already longer than ``ms`` is announced at its next chunk; one already announced is
        not announced again."""
        if not 0 < ms <= self.settings.pause_ms:
            raise ValueError(
                f"need 0 < speculate ms <= pause_ms ({self.settings.pause_ms}), got {ms}"
            )
        self._speculate = _samples(ms)

    def current_audio(self) -> np.ndarray | None:
        """The utterance so far (for partial transcripts), or None when no speech is under way."""
        return np.concatenate(self._chunks) if self._speaking else None

    def process(self, chunk: np.ndarray, probability: float) -> list[EndpointEvent]:
        """Advance by one VAD chunk and its speech probability; returns the events it caused."""
        s = self.settings
        events: list[EndpointEvent] = []
        if self._speaking and self._position + len(chunk) - self._start > self._max_len:
            # Cut before the clip would outgrow the limit; this chunk opens the next utterance
            # (if it is speech), and its pre-roll holds no sample of the one just cut.
            events.append(self._finish(cut=True))
        begin = self._position
        self._position += len(chunk)
        if not self._chunks:
            if probability < s.activation:
                self._remember(chunk)
                return events
            self._begin_candidate(begin)
        self._chunks.append(chunk)
        if probability >= s.activation or (probability >= s.deactivation and not self._in_silence):
            return events + self._on_voiced(begin)
        return events + self._on_silent()

    def flush(self) -> list[EndpointEvent]:
        """End of stream: the utterance under way (if speech had started) ends here."""
        return [self._finish(cut=False)] if self._speaking else []

    def _remember(self, chunk: np.ndarray) -> None:
        self._pre_roll.append(chunk)
        self._pre_roll_samples += len(chunk)
        while self._pre_roll and self._pre_roll_samples - len(self._pre_roll[0]) >= (
            self._max_pre_roll
        ):
            self._pre_roll_samples -= len(self._pre_roll.popleft())

    def _begin_candidate(self, first_voiced: int) -> None:
        self._chunks = list(self._pre_roll)
        self._start = first_voiced - self._pre_roll_samples
        self._pre_roll.clear()
        self._pre_roll_samples = 0
        self._first_voiced = first_voiced
        self._voiced = 0
        self._in_silence = False
        self._paused = False

    def _on_voiced(self, begin: int) -> list[EndpointEvent]:
        events: list[EndpointEvent] = []
        self._in_silence = False
        self._voiced_end = self._position
        if self._paused:
            self._paused = False
            events.append(SpeechResumed(begin))
        if not self._speaking:
            self._voiced += self._position - begin
            if self._voiced >= self._min_speech:
                self._speaking = True
                events.append(SpeechStarted(self._first_voiced))
        return events

    def _on_silent(self) -> list[EndpointEvent]:
        self._in_silence = True
        silent = self._position - self._voiced_end
        if not self._speaking:
            # Too little voice before the silence: a click or a cough, not speech.
            if silent >= self._pause:
                self._drop_candidate()
            return []
        if silent >= self._end_silence:
            return [self._finish(cut=False)]
        if silent >= self._speculate and not self._paused:
            self._paused = True
            return [SpeechPaused(self._voiced_end)]
        return []

    def _drop_candidate(self) -> None:
        chunks, self._chunks = self._chunks, []
        for chunk in chunks:
            self._remember(chunk)

    def _finish(self, *, cut: bool) -> Utterance:
        audio = np.concatenate(self._chunks)
        utterance = Utterance(
            audio=audio,
            start=self._start,
            end=self._start + len(audio),
            voiced_end=self._voiced_end,
            cut=cut,
        )
        self._chunks = []
        self._speaking = False
        self._paused = False
        self._in_silence = False
        return utterance
