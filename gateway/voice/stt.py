"""Speech to text with faster-whisper: one model per process, inference in a bounded executor.

Decoding drives faster-whisper's pieces directly (feature extractor, the CTranslate2 ``Whisper``
model's ``encode``/``generate``, and ``find_alignment`` for word timings) instead of
``WhisperModel.transcribe``, because ``transcribe`` always pads to Whisper's 30 s window and an
utterance is usually 1–5 s. Two window modes:

- ``"full"``: the clip padded to 30 s (3000 mel frames), as Whisper was trained.
- ``"fitted"``: the clip plus ``fitted_padding_s`` of silence. The encoder's cost grows with the
  window, so this is several times faster, but Whisper sometimes stops early or loops on a short
  window. A guard checks the result (see :func:`needs_full_window`) and decodes again with the
  full window when it looks wrong.

``scripts/bench_stt.py`` (44 clips, 1.4–7.3 s: 22 sentences by espeak-ng and piper, cut by the
real VAD and endpointer; tiny.en, int8, on an idle 2-core machine; a selection of its rows):

=======  ====  =======  =======  ========  =====  ==========  =========  =======
window   beam  threads  padding  median s  p95 s  WER espeak  WER piper  WER all
=======  ====  =======  =======  ========  =====  ==========  =========  =======
full     5     2        –        0.767     0.923  19.0 %      0.0 %      9.5 %
fitted   5     2        4 s      0.352     0.570  14.7 %      0.4 %      7.5 %
fitted   5     2        3 s      0.340     0.508  12.4 %      0.4 %      6.4 %
fitted   5     1        1 s      0.200     0.337  20.1 %      4.5 %      12.3 %
fitted   5     1        3 s      0.239     0.368  12.4 %      0.4 %      6.4 %
fitted   5     1        4 s      0.264     0.377  14.7 %      0.4 %      7.5 %
fitted   3     1        4 s      0.198     0.274  13.6 %      0.0 %      6.8 %
fitted   1     1        4 s      0.194     0.254  23.7 %      0.8 %      12.2 %
=======  ====  =======  =======  ========  =====  ==========  =========  =======

Hence the defaults: a fitted window with 4 s of padding, beam 3, one thread. The fitted window is
as accurate as the full one and 3× faster. On a window this short the decoder, not the encoder,
is most of the time (~30 ms encoding, ~160 ms of beam search for a 2 s clip), and CTranslate2's
decoder steps are too small to split: two threads made them *slower* (beam 5: 0.35 against
0.26 s), while one thread also leaves the second core to speech synthesis. With 1 s of padding
Whisper starts the sentence again in 6 of 8 piper clips (the loop is cut off, but costs decoder
steps and sometimes a word). 3 s gave the fewest errors here, but 4 s stays: in
``scripts/bench_turns.py`` 3 s punctuated one more of piper's mid-sentence pauses as a finished
sentence (cut-offs at the 350 ms pause 57 → 71 % in one of two sets, the same in the other), and
not cutting people off comes first. Beam 3 is as accurate as beam 5 here (6.8 against 7.5 %;
two runs, in either order: 0.199 / 0.198 s median against 0.235 / 0.223 s) and punctuates the
same: re-judged with ``scripts/bench_turns.py --rejudge``, three kept sets cut 39 of 63 piper
pauses at beam 3 against 41 at beam 5, and no complete request at either. Greedy saves little
more (0.194 s in an earlier run) and loses accuracy on the harder (espeak) voice.

Scheduling: every session of the process shares one model and one queue. Final transcripts (and
the speculative decodes that usually become them) go first, in arrival order; partial transcripts
are live captions only, so one is decoded only when a worker is free and nothing waits, and
not while finals kept the model busy more than half of the last 3 s (the free worker is then
only a gap between other people's finals) — under load they are skipped instead of delaying
someone's answer. A caller that stops waiting (a
speculation overtaken by more speech) takes its queued decode out of the queue; one already
running stops at its next stage (after the encoder, after the beam search) instead of running
on to word alignment and a possible full-window retry for nobody.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, TypeVar

import ctranslate2
import numpy as np
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_suppressed_tokens, merge_punctuations

from gateway.audio import SAMPLE_RATE, pcm16_to_float
from gateway.catalogue import DEFAULT_STT_MODEL, whisper_model_path
from gateway.errors import Busy, ConfigError
from gateway.voice.decode_queue import Priority
from gateway.voice.whisper_checks import (
    loop_start,
    needs_full_window,
    repeats_itself,
    restart_at,
    words_key,
)
from gateway.voice.whisper_engine import (
    FULL_FRAMES,
    HOP,
    Flag,
    check_abandoned,
    check_language,
    fitted_frames,
    shared_engine,
)
from gateway.voice.words import Reading
from gateway.workers import PoolFull, model_threads

_MAX_SECONDS = 30.0
R = TypeVar("R")
# faster-whisper's defaults for gluing punctuation onto words.
_PREPEND = "\"'“¿([{-"
_APPEND = "\"'.。,，!！?？:：”)]}、"


@dataclass(frozen=True)
class SttSettings:
    """How speech is decoded.

    Attributes:
        model: a catalogue name (``tiny.en``, ``base``, a user folder's name) or a model path.
        compute_type: CTranslate2 quantisation; ``int8`` is fastest on CPU at no measurable loss.
        cpu_threads: threads per inference. One is fastest on fitted windows, where the
            decoder's small steps dominate (0.26 against 0.35 s median with two; see the table
            above), and leaves the other core to synthesis. Two threads only pay on the full
            30 s window, whose encoder pass is large.
        workers: inferences run at once (worker threads). One: with 12 people talking
            (``scripts/load.py``, one-thread decodes) two workers took first audio from p50 /
            p95 1.16 / 2.24 s to 2.68 / 3.72 s, taking the second core from synthesis.
        max_pending: final transcriptions admitted at once (running + queued); beyond that
            :class:`TranscriberBusy` is raised at once instead of queueing work whose answer
            would come too late to matter. Partial transcripts do not count: they never queue.
        beam_size: 1 is greedy. 3 is as accurate as 5 on the bench (WER 6.8 against 7.5 %,
            greedy 12.2 %) for about 30 ms less per decode, which is the wait for a finished
            request; a beam yields alternates (see the table above).
        busy_beam_size: the beam for a final transcript while other decodes wait for the
            model, or when it waited behind others (> 50 ms: its listener is already late). Greedy
            needs about 60 % of beam 5's time, so a backlog drains faster; the price (under load
            only) is the beam's accuracy edge on hard audio (WER on espeak-ng speech 29.5 % vs
            20 %, the same on piper's) and the alternates. With 12 people talking this took the
            first-audio p95 from 1.05–1.51 s to 0.92–1.04 s (with synthesis at a lower priority).
        alternates: at most this many other hypotheses (needs ``beam_size > 1``; free then:
            the beam computes them anyway). Variants differing only in case or punctuation
            are dropped.
        language: the language spoken, as Whisper's code (``en``, ``de``…); ``None`` detects it
            at every utterance (multilingual models only; ``.en`` models are English). Name it
            with a multilingual model: on a short request detection guesses wrong (``base``
            heard espeak-ng's English "Good night." as Japanese, "Lock the back door." as Thai).
        window: ``"fitted"`` or ``"full"`` (see the module docstring).
        fitted_padding_s: silence added after the clip in fitted mode. With little room after
            the last word Whisper tends to say the sentence again instead of ending (the loop is
            cut, but its steps are paid and it may take a word along). On the bench's 44 clips
            (beam 5, one thread) 1, 2, 3 and 4 s gave WER 12.3, 9.1, 6.4 and 7.5 % at 0.20,
            0.22, 0.24 and 0.26 s median; 4 s because 3 s ended more mid-sentence pauses as
            finished sentences (see the module docstring).
        coverage_tolerance_s: in fitted mode, the last word must end no earlier than this before
            the end of speech, or the full window is tried.
    """

    model: str = DEFAULT_STT_MODEL
    compute_type: str = "int8"
    cpu_threads: int = field(default_factory=model_threads)
    workers: int = 1
    max_pending: int = 8
    beam_size: int = 3
    busy_beam_size: int = 1
    alternates: int = 2
    language: str | None = None
    window: Literal["fitted", "full"] = "fitted"
    fitted_padding_s: float = 4.0
    coverage_tolerance_s: float = 0.8


@dataclass(frozen=True)
class Word:
    """One word with its time in seconds from the clip's start and Whisper's probability."""

    word: str
    start: float
    end: float
    probability: float


@dataclass(frozen=True)
class Transcript:
    """What was said in one clip.

    Attributes:
        text: the transcript, stripped.
        language: ISO code of the language decoded.
        words: word timings, in order, inside the clip.
        confidence: mean word probability in [0, 1] (0 with no words). Word probabilities come
            from the decoder's token probabilities, averaged per word; unlike ``avg_logprob`` they
            do not depend on the length of the text.
        avg_logprob: the decoder's mean log probability per token, as Whisper reports it.
        alternates: other hypotheses from the beam, best first (empty with ``beam_size`` 1).
        window: the window that produced the text: ``"fitted"`` or ``"full"``.
        fell_back: True when the fitted window's result was rejected and the full one used.
        audio_s: length of the clip in seconds.
        decode_s: wall time of the decode(s) in the worker, in seconds.
        queued_s: time spent waiting for a worker before decoding began, in seconds.
        beam: the beam the text was decoded with (``busy_beam_size`` under load; 0 unknown).
        detailed: False when the recogniser gave text only (a stock Wyoming server,
            ``gateway.speech.asr``): then ``words`` is empty and ``confidence``, ``avg_logprob``
            and ``window`` mean nothing, and nobody may show them as if they were measured.
        nearest: a partial decode's reading in the words it was asked to read in, as this
            project's speech server sends it (:attr:`Partial.nearest`); None otherwise.
    """

    text: str
    language: str
    words: tuple[Word, ...]
    confidence: float
    avg_logprob: float
    alternates: tuple[str, ...]
    window: str
    fell_back: bool
    audio_s: float
    decode_s: float
    queued_s: float = 0.0
    beam: int = 0
    detailed: bool = True
    nearest: Reading | None = None


@dataclass(frozen=True)
class Partial:
    """A quick look at the words so far (:meth:`SpeechToText.transcribe_partial`).

    Attributes:
        text: the words, stripped.
        avg_logprob: Whisper's mean log probability per token of this decode, as it
            reports it for a final transcript (``Transcript.avg_logprob``): higher (nearer 0)
            is surer. Per token, not normalised to words: a word is one token or several, so
            the same certainty reads differently on short and long texts. 0.0 when no words
            were decoded (nothing to be unsure of: read it with ``text``). None when the
            recogniser gave text only (a stock Wyoming server).
    """

    text: str
    avg_logprob: float | None
    #: The likeliest reading of the clip in the words asked for (``within``), when the decode
    #: has others; None when none was asked, the decode is in those words, or not known.
    nearest: Reading | None = None


class SpeechToText(Protocol):
    """What a session needs from speech recognition: :class:`Transcriber` in this process, or
    ``gateway.speech.asr.RemoteTranscriber`` over Wyoming."""

    @property
    def pending(self) -> int:
        """Transcriptions admitted and not yet finished."""
        ...

    @property
    def queue_wait_s(self) -> float:
        """Moving average of how long final transcriptions waited lately."""
        ...

    @property
    def partials_skipped(self) -> int:
        """Partial transcripts skipped (busy, or not offered by the recogniser)."""
        ...

    @property
    def full_window_retries(self) -> int:
        """Fitted-window results decoded again on the full window (0 where not known)."""
        ...

    @property
    def abandoned(self) -> int:
        """Decodes stopped because their caller stopped waiting."""
        ...

    @property
    def detailed(self) -> bool:
        """Whether transcripts carry word timings and confidences and partials are offered
        (a stock Wyoming server gives text only)."""
        ...

    async def warm_up(self) -> None:
        """Get ready, so the first person is not kept waiting."""
        ...

    async def transcribe(
        self, audio: np.ndarray, *, speech_end_s: float | None = None, prompt: str | None = None
    ) -> Transcript:
        """The final transcript of a clip; raises :class:`TranscriberBusy` under load."""
        ...

    async def transcribe_partial(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        beam: int = 1,
        within: tuple[str, ...] = (),
    ) -> Partial:
        """A quick look at the words so far and how sure Whisper was of them (``prompt``: text
        taken as what came before; ``beam``: the beam search's width, 1 greedy, at most
        :data:`MAX_PARTIAL_BEAM`; ``within``: words to find the nearest reading in,
        :attr:`Partial.nearest`); raises :class:`TranscriberBusy` when skipped."""
        ...


#: The widest beam a partial decode is given (a wider one asked for is narrowed to it): partials
#: are for the moment, and a request from the network must not buy an arbitrarily long decode.
MAX_PARTIAL_BEAM = 5
#: The most words (and characters a word) a partial's ``within`` may hold: a request from the
#: network must not buy an arbitrarily large vocabulary.
MAX_WITHIN_WORDS = 128
MAX_WITHIN_CHARS = 32
#: The longest reading looked for in ``within``, in tokens ("Mm-hmm, okay." is 7), and the
#: most readings scored.
_READING_TOKENS = 12
_READINGS = 12
#: Punctuation a reading in ``within`` may have between and after its words.
_READING_MARKS = (".", ",", "?", "!", "...", "-")


def check_within(within: tuple[str, ...]) -> tuple[str, ...]:
    """``within`` as :meth:`SpeechToText.transcribe_partial` takes it; raises ValueError when
    it holds more than :data:`MAX_WITHIN_WORDS` words or a word longer than
    :data:`MAX_WITHIN_CHARS` characters, or is no list of words."""
    if len(within) > MAX_WITHIN_WORDS:
        raise ValueError(f"within holds {len(within)} words; at most {MAX_WITHIN_WORDS}")
    for word in within:
        if not isinstance(word, str) or not word.strip() or len(word) > MAX_WITHIN_CHARS:
            raise ValueError(
                f"within's words are non-empty strings of at most {MAX_WITHIN_CHARS} "
                f"characters, not {str(word)[:40]!r}"
            )
    return within


class TranscriberBusy(Busy):
    """``max_pending`` transcriptions are already admitted (or, for a partial transcript, the
    model is busy); try later or raise the setting."""


@dataclass(frozen=True)
class _Decoded:
    text: str
    words: tuple[Word, ...]
    avg_logprob: float
    alternates: tuple[str, ...]
    #: The text repeated itself before a restart was cut off (:func:`restart_at`): the fitted
    #: window's guard still treats it as a loop.
    looped: bool = False
    nearest: Reading | None = None


#: A final transcript that waited longer than this for the model is decoded with
#: ``busy_beam_size``: its listener is already waiting longer than they should.
_LATE_START_S = 0.05


class Transcriber:
    """Transcribes 16 kHz clips. Cheap to create: the model and executor are shared per process.

    Several sessions may hold Transcribers with the same model settings; they share one loaded
    model, one executor and one admission bound.
    """

    def __init__(self, settings: SttSettings | None = None) -> None:
        self.settings = settings or SttSettings()
        check_language(self.settings.language)
        self._engine = shared_engine(
            whisper_model_path(self.settings.model),
            compute_type=self.settings.compute_type,
            cpu_threads=self.settings.cpu_threads,
            workers=self.settings.workers,
            max_pending=self.settings.max_pending,
        )
        if self.settings.language not in (None, "en") and not self._engine.whisper.is_multilingual:
            raise ConfigError(
                f"the speech model {self.settings.model!r} hears English only, not "
                f"{self.settings.language!r}: choose a multilingual model (--stt-model base)"
            )

    @property
    def detailed(self) -> bool:
        """Always: Whisper in this process gives word timings, confidences and partials."""
        return True

    @property
    def pending(self) -> int:
        """Transcriptions admitted and not yet finished, across all sharers of the model."""
        return self._engine.queue.pending

    @property
    def queue_wait_s(self) -> float:
        """Moving average of how long final transcriptions waited for the model lately:
        above a fraction of a second, the process has more speech than it can keep up with."""
        return self._engine.queue.final_wait_s

    @property
    def partials_skipped(self) -> int:
        """Partial transcripts skipped because the model was busy, since the process started."""
        return self._engine.queue.partials_skipped

    @property
    def full_window_retries(self) -> int:
        """Fitted-window results rejected by the guard and decoded again on the full window
        (each costs a slow decode), since the process started."""
        return self._engine.full_window_retries

    @property
    def abandoned(self) -> int:
        """Decodes stopped part-way because their caller stopped waiting (speech resumed
        after a speculative start), since the process started."""
        return self._engine.abandoned

    async def warm_up(self) -> None:
        """Run one decode so the first real one does not pay the ~1 s first-call cost."""
        tone = 0.1 * np.sin(np.linspace(0, 2 * np.pi * 220, SAMPLE_RATE)).astype(np.float32)
        await self._run(Priority.FINAL, self._decode_fitted_then_full, tone, 1.0)
        await self._run(Priority.FINAL, self._decode_full, tone)

    async def transcribe(
        self, audio: np.ndarray, *, speech_end_s: float | None = None, prompt: str | None = None
    ) -> Transcript:
        """Transcribe a clip (int16, or float32 in [-1, 1]) of at most 30 s.

        ``speech_end_s`` is where speech ends inside the clip (e.g. ``Utterance.voiced_end_s``);
        the fitted-window guard checks words reach it. Default: the clip's end.

        ``prompt`` is text Whisper takes as what came before (its ``initial_prompt``): naming
        an unusual phrase there (a custom wake phrase) makes it far likelier to be heard as such.

        Raises :class:`TranscriberBusy` when ``max_pending`` transcriptions are in flight.
        """
        clip = self._as_float(audio)
        end = len(clip) / SAMPLE_RATE if speech_end_s is None else speech_end_s
        if self.settings.window == "full":
            job: tuple[Callable[..., Transcript], tuple[Any, ...]] = (
                self._decode_full,
                (clip, prompt),
            )
        else:
            job = (self._decode_fitted_then_full, (clip, end, prompt))
        transcript, waited = await self._run_timed(Priority.FINAL, job[0], *job[1])
        return replace(transcript, queued_s=waited)

    async def transcribe_partial(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        beam: int = 1,
        within: tuple[str, ...] = (),
    ) -> Partial:
        """A quick look at the words so far while the person speaks: greedy (``beam`` 1),
        fitted window, no word timings, no guard, with the decode's ``avg_logprob``
        (:class:`Partial`). For display and barge-in, never as the final text. ``prompt`` is
        Whisper's ``initial_prompt``, as for :meth:`transcribe` (speech over an agent is
        decoded with backchannels named there, and a beam: ``OverlapSettings``).

        ``within``: when the decode has words outside these, also the likeliest reading made
        of them (:class:`Reading`): a beam search that may write only their tokens, then the
        decode and that reading scored alike by the unconstrained model (one batched forced
        pass): 171 CPU-ms more (median; 336 at most) on up to 1.2 s of speech (tiny.en, one
        thread, the overlaps of three sets), and only then.

        Raises :class:`TranscriberBusy` at once, without queueing, when the model is busy, and
        ValueError for a ``within`` :func:`check_within` refuses.
        """
        clip = self._as_float(audio)
        beam = min(max(1, beam), MAX_PARTIAL_BEAM)
        within = check_within(tuple(within))
        return await self._run(Priority.PARTIAL, self._decode_partial, clip, prompt, beam, within)

    @staticmethod
    def _as_float(audio: np.ndarray) -> np.ndarray:
        clip = pcm16_to_float(audio) if audio.dtype == np.int16 else audio.astype(np.float32)
        if len(clip) > _MAX_SECONDS * SAMPLE_RATE:
            raise ValueError(
                f"clip is {len(clip) / SAMPLE_RATE:.1f} s; Whisper takes at most 30 s "
                "(cut utterances shorter with EndpointSettings.max_utterance_ms)"
            )
        return clip

    async def _run(self, priority: Priority, fn: Callable[..., R], *args: Any) -> R:
        return (await self._run_timed(priority, fn, *args))[0]

    async def _run_timed(
        self, priority: Priority, fn: Callable[..., R], *args: Any
    ) -> tuple[R, float]:
        """``fn(*args, abandon=…)`` on a worker, and the seconds it waited for one. ``abandon``
        is set when the caller stops waiting: ``fn`` checks it between stages."""
        abandon = threading.Event()
        job = functools.partial(fn, abandon=abandon)
        try:
            future = self._engine.queue.submit(priority, job, *args)
        except PoolFull:
            if priority is Priority.PARTIAL:
                raise TranscriberBusy("the model is busy; partial transcript skipped") from None
            raise TranscriberBusy(
                "speech-to-text is saturated: too many transcriptions pending "
                "(raise SttSettings.max_pending or add cores)"
            ) from None
        try:
            # Cancelling the awaiting task cancels the future: a queued decode leaves the queue.
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            abandon.set()  # a running decode stops at its next stage
            raise

    def _decode_full(
        self, clip: np.ndarray, prompt: str | None = None, abandon: Flag | None = None
    ) -> Transcript:
        started = time.perf_counter()
        beam = self._final_beam()
        decoded, language = self._decode(
            clip, FULL_FRAMES, beam=beam, prompt=prompt, abandon=abandon
        )
        return self._transcript(decoded, language, clip, "full", False, started, beam)

    def _decode_fitted_then_full(
        self,
        clip: np.ndarray,
        speech_end_s: float,
        prompt: str | None = None,
        abandon: Flag | None = None,
    ) -> Transcript:
        started = time.perf_counter()
        frames = fitted_frames(len(clip), self.settings.fitted_padding_s)
        beam = self._final_beam()
        decoded, language = self._decode(clip, frames, beam=beam, prompt=prompt, abandon=abandon)
        check_abandoned(abandon, self._engine)
        if frames < FULL_FRAMES and (
            decoded.looped
            or needs_full_window(
                decoded.text,
                decoded.words,
                speech_end_s=speech_end_s,
                tolerance_s=self.settings.coverage_tolerance_s,
            )
        ):
            self._engine.full_window_retries += 1  # read by monitoring; a lost update is harmless
            decoded, language = self._decode(
                clip, FULL_FRAMES, beam=beam, prompt=prompt, abandon=abandon
            )
            return self._transcript(decoded, language, clip, "full", True, started, beam)
        return self._transcript(decoded, language, clip, "fitted", False, started, beam)

    def _decode_partial(
        self,
        clip: np.ndarray,
        prompt: str | None = None,
        beam: int = 1,
        within: tuple[str, ...] = (),
        abandon: Flag | None = None,
    ) -> Partial:
        frames = fitted_frames(len(clip), self.settings.fitted_padding_s)
        decoded, _ = self._decode(
            clip, frames, beam=beam, final=False, prompt=prompt, within=within, abandon=abandon
        )
        return Partial(decoded.text, decoded.avg_logprob, decoded.nearest)

    def _final_beam(self) -> int:
        """The beam for a final transcript starting now: narrower while others wait, or when
        this one waited behind other people's (its listener is already late; a greedy decode
        catches up)."""
        queue = self._engine.queue
        busy = queue.waiting > 0 or queue.late_start_s > _LATE_START_S
        return self.settings.busy_beam_size if busy else self.settings.beam_size

    def _decode(
        self,
        clip: np.ndarray,
        frames: int,
        *,
        beam: int,
        final: bool = True,
        prompt: str | None = None,
        within: tuple[str, ...] = (),
        abandon: Flag | None = None,
    ) -> tuple[_Decoded, str]:
        """One encoder pass over a ``frames``-long window, one decoder pass with ``beam``, and
        (when ``final``) word alignment and beam alternates, or (``within``) the nearest
        reading in those words. Raises :class:`DecodeAbandoned` between stages once
        ``abandon`` is set."""
        engine = self._engine
        window = np.zeros(frames * HOP, dtype=np.float32)
        window[: len(clip)] = clip[: len(window)]
        # The extractor appends one frame of its own padding; drop it to keep the length even.
        features = engine.model.feature_extractor(window)[:, :frames]
        encoded = engine.whisper.encode(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None]))
        )
        check_abandoned(abandon, engine)
        language = self._language(encoded)
        tokenizer = engine.tokenizer(language)
        previous = (
            [tokenizer.sot_prev, *tokenizer.encode(" " + prompt.strip())][:200] if prompt else []
        )
        prompt_ids = [*previous, *tokenizer.sot_sequence, tokenizer.no_timestamps]
        # Whisper's loops run to the token limit; a budget fitted to the clip keeps them cheap.
        # Fast speech is ~4 tokens/s, so 8/s plus a margin leaves real text whole.
        budget = min(10 + int(8 * len(clip) / SAMPLE_RATE), 440 - len(prompt_ids))
        result = engine.whisper.generate(
            encoded,
            [prompt_ids],
            beam_size=beam,
            num_hypotheses=min(beam, 1 + self.settings.alternates),
            max_length=len(prompt_ids) + budget,
            return_scores=True,
            suppress_blank=True,
            suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        text = tokenizer.decode(tokens).strip()
        if repeats_itself(text):
            # Whisper looping in the padding ("Open the door. Open the door. Open the"): keep
            # the text up to where it started again. A final transcript is then checked by the
            # coverage guard (needs_full_window), so a loop that swallowed real speech still
            # gets the full window; a partial one is only shown, never sent.
            split_words, word_tokens = tokenizer.split_to_word_tokens([*tokens, tokenizer.eot])
            cut = loop_start(split_words[:-1])
            if cut:
                tokens = [t for group in word_tokens[:cut] for t in group]
                text = tokenizer.decode(tokens).strip()
        looped = repeats_itself(text)
        if tokens:
            split_words, word_tokens = tokenizer.split_to_word_tokens([*tokens, tokenizer.eot])
            cut = restart_at(split_words[:-1])
            if cut:
                tokens = [t for group in word_tokens[:cut] for t in group]
                text = tokenizer.decode(tokens).strip()
        # CTranslate2 returns the cumulative log probability divided by the length (penalty 1);
        # faster-whisper reports it over length + 1 (the end token), and so do we.
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
        seen = {words_key(text)}
        alternates = []
        for seq in result.sequences_ids[1:]:
            alt = tokenizer.decode([t for t in seq if t < tokenizer.eot]).strip()
            if words_key(alt) not in seen:
                seen.add(words_key(alt))
                alternates.append(alt)
        check_abandoned(abandon, engine)
        words = self._align(tokenizer, tokens, encoded, len(clip)) if final and tokens else ()
        nearest = None
        if within and tokens:
            nearest = self._nearest(tokenizer, encoded, prompt_ids, tokens, within, beam)
        decoded = _Decoded(text, words, avg_logprob, tuple(alternates), looped, nearest)
        return decoded, language

    def _nearest(
        self,
        tokenizer: Tokenizer,
        encoded: ctranslate2.StorageView,
        prompt_ids: list[int],
        tokens: list[int],
        within: tuple[str, ...],
        beam: int,
    ) -> Reading | None:
        """The likeliest reading of the encoded clip in ``within``'s words, and its gap to
        ``tokens`` (:class:`Reading`); None when ``tokens`` are all such words already.

        A beam search whose every other token is suppressed proposes readings; its scores are
        renormalised over the allowed tokens (with the end token unlikely, it loops: "Okay,
        right, right, right."), so its hypotheses and each one's beginnings up to a mark
        ("Okay.", "Okay, right.") are scored again with the decode, by the whole model,
        forced, in one batch: ``return_logits_vocab`` gives the logits at each position of a
        prompt's text as well as at the step after it (the end token's). A decode or reading
        that starts over is scored once (:func:`_once`)."""
        whisper = self._engine.whisper
        allowed, suppressed = _vocabulary(tokenizer, within)
        if all(t in allowed for t in tokens):
            return None
        found = whisper.generate(
            encoded,
            [prompt_ids],
            beam_size=beam,
            num_hypotheses=beam,
            max_length=len(prompt_ids) + _READING_TOKENS,
            suppress_blank=True,
            suppress_tokens=suppressed,
        )[0]
        marks = {t for mark in _READING_MARKS for t in tokenizer.encode(mark)}
        readings: dict[tuple[int, ...], None] = {}
        for hypothesis in found.sequences_ids:
            said = _once(tokenizer, [t for t in hypothesis if t < tokenizer.eot])
            for i, t in enumerate(said):
                if t in marks or i == len(said) - 1:
                    readings.setdefault(tuple(said[: i + 1]))
        candidates = [list(r) for r in readings][:_READINGS]
        if not candidates:
            return None
        texts = [_once(tokenizer, tokens), *candidates]
        batch = np.repeat(np.asarray(encoded), len(texts), 0)
        forced = whisper.generate(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(batch)),
            [[*prompt_ids, *text] for text in texts],
            beam_size=1,
            max_length=_forced_length(prompt_ids, max(map(len, texts)), tokenizer),
            return_logits_vocab=True,
            suppress_blank=False,
            suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
        )
        own, *near = (
            _forced_logprob(r.logits, text, tokenizer.eot)
            for r, text in zip(forced, texts, strict=True)
        )
        scored = [(p, c) for p, c in zip(near, candidates, strict=True) if p is not None]
        if own is None or not scored:
            return None
        likeliest, reading = max(scored, key=lambda pc: pc[0])
        return Reading(tokenizer.decode(reading).strip(), own - likeliest)

    def _language(self, encoded: ctranslate2.StorageView) -> str:
        if not self._engine.whisper.is_multilingual:
            return "en"
        if self.settings.language:
            return self.settings.language
        # [(token, probability), …] per clip, most likely first (ctranslate2 ships no types).
        ranked: list[tuple[str, float]] = self._engine.whisper.detect_language(encoded)[0]
        token, _probability = ranked[0]
        return token[2:-2]  # "<|de|>" -> "de"

    def _align(
        self, tokenizer: Tokenizer, tokens: list[int], encoded: ctranslate2.StorageView, n: int
    ) -> tuple[Word, ...]:
        # Alignment runs over the clip's frames only, as faster-whisper does, so word times
        # cannot fall in the padding.
        content_frames = min(FULL_FRAMES, -(-n // HOP))
        alignment = self._engine.model.find_alignment(tokenizer, [tokens], encoded, content_frames)
        timings = alignment[0] if alignment else []
        merge_punctuations(timings, _PREPEND, _APPEND)
        return tuple(
            Word(t["word"].strip(), float(t["start"]), float(t["end"]), float(t["probability"]))
            for t in timings
            if t["word"].strip()
        )

    @staticmethod
    def _transcript(
        decoded: _Decoded,
        language: str,
        clip: np.ndarray,
        window: str,
        fell_back: bool,
        started: float,
        beam: int,
    ) -> Transcript:
        words = decoded.words
        return Transcript(
            text=decoded.text,
            language=language,
            words=words,
            confidence=float(np.mean([w.probability for w in words])) if words else 0.0,
            avg_logprob=decoded.avg_logprob,
            alternates=decoded.alternates,
            window=window,
            fell_back=fell_back,
            audio_s=len(clip) / SAMPLE_RATE,
            decode_s=time.perf_counter() - started,
            beam=beam,
        )


@functools.lru_cache(maxsize=8)
def _vocabulary(tokenizer: Tokenizer, within: tuple[str, ...]) -> tuple[frozenset[int], list[int]]:
    """The tokens a reading in ``within``'s words may use (each word as written, lower case and
    capitalised, after a space or not; :data:`_READING_MARKS`; the end token), and every other
    text token (to suppress)."""
    allowed = {tokenizer.eot}
    for word in within:
        for form in {word, word.lower(), word.capitalize()}:
            allowed.update(tokenizer.encode(" " + form))
            allowed.update(tokenizer.encode(form))
    for mark in _READING_MARKS:
        allowed.update(tokenizer.encode(mark))
    return frozenset(allowed), [t for t in range(tokenizer.eot) if t not in allowed]


def _forced_length(prompt_ids: list[int], longest: int, tokenizer: Tokenizer) -> int:
    """The ``max_length`` that gives a forced pass a row for each of ``longest`` tokens and
    the step after (and little more: a text that does not end there is decoded on to it).
    Measured on CTranslate2 4.x: after previous text (``sot_prev``) the rows are
    ``max_length`` less the prompt's length less one; with none, half of ``max_length``."""
    if prompt_ids and prompt_ids[0] == tokenizer.sot_prev:
        return len(prompt_ids) + longest
    return 2 * (longest + 1)


def _forced_logprob(logits: list[Any], tokens: list[int], end: int) -> float | None:
    """The log-probability of ``tokens`` then the end token, from a forced pass's logits
    (one row per position of the prompt's text, then the generated steps); None when the
    pass gave fewer rows."""
    if not logits:
        return None
    rows = np.asarray(logits[0], np.float32)
    rows = rows.reshape(-1, rows.shape[-1])[: len(tokens) + 1].astype(np.float64)
    if len(rows) < len(tokens) + 1:
        return None
    top = rows.max(axis=1, keepdims=True)
    logp = rows - top - np.log(np.exp(rows - top).sum(axis=1, keepdims=True))
    return float(sum(logp[i, t] for i, t in enumerate([*tokens, end])))


def _once(tokenizer: Tokenizer, tokens: list[int]) -> list[int]:
    """``tokens`` once when all they say is their first words again and again, the last
    perhaps cut ("Excuse me. Excuse me. Exc" → "Excuse me."; "Yes? Yes? Yes?" → "Yes?"):
    Whisper's loop, not what was said. "Yeah, yeah, but why?" stays whole."""
    split, pieces = tokenizer.split_to_word_tokens([*tokens, tokenizer.eot])
    keys: list[str] = []
    groups: list[list[int]] = []
    for piece, group in zip(split[:-1], pieces[:-1], strict=True):
        key = " ".join(words_key(piece))
        if key or not groups:
            keys.append(key)
            groups.append(list(group))
        else:
            groups[-1] += group  # a mark belongs to the word before it
    for k in range(1, len(keys) // 2 + 1):
        unit, rest = keys[:k], keys[k:]
        last = len(rest) - 1
        if all(
            w == unit[i % k] or (i == last and unit[i % k].startswith(w))
            for i, w in enumerate(rest)
        ):
            return [t for group in groups[:k] for t in group]
    return tokens
