"""Listening: the person's audio in, finished turns out.

One :class:`Listener` per session runs the VAD, the wake word (its detector, the look-back that
starts an utterance right after the phrase, and the phrase stripped from the transcript), the
turn-taker (:class:`gateway.proxy.turn_taker.TurnTaker`, sans I/O: it decides, this carries out),
the speculative decodes with their end-of-turn signals, and the partial transcripts.

Time: the driver hands each input item over with ONE ``now`` (:meth:`Listener.hear`); results
that arrive later (a decode's verdict, a partial transcript) read the session's clock (in its
:class:`~gateway.proxy.services.Services`, passed in). So a test drives it with recorded VAD
probabilities, recorded transcripts and a fake clock, with no model loaded and no real sleeping (tests/proxy/test_listening.py).

The turn-taker is the session's (it is handed in): this part drives it with the audio and
carries out what it decides, and the session tells it what the other parts did (sent,
replied…) through :meth:`Listener.apply`. What listening decides goes out as typed events
(:mod:`gateway.proxy.events`) to the session's one sink: a finished turn (``TurnEnded``, for
uttering), a barge-in (``StopAgent``), what the page shows. Speech over an agent pauses it
(``PauseAgent``) while fast decodes of the overlap decide (:mod:`gateway.proxy.overlap`): the
decision goes out (``OverlapJudged``), then the agent resumes (``ResumeAgent``) or stops
(``StopAgent``). A person going on with the turn just ended is ``TurnContinued`` (its answer is
to be dropped). What it needs to know of the rest of the session it asks ``around``
(:class:`Surroundings`); the echo guard marks chunks that are the agent's own voice.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

from gateway.audio.echo import EchoGuard
from gateway.errors import SpeechError
from gateway.proxy.events import (
    OverlapJudged,
    PartialText,
    PauseAgent,
    ResumeAgent,
    Sink,
    StateShown,
    StopAgent,
    Told,
    TurnContinued,
    TurnEnded,
    WakeWordHeard,
)
from gateway.proxy.overlap import READ_BACK_P, feedback_words, read_back
from gateway.proxy.services import Services
from gateway.proxy.settings import SessionSettings
from gateway.proxy.timing import Timing
from gateway.proxy.turn_rule import Verdict
from gateway.proxy.turn_taker import (
    Action,
    CancelDecode,
    ContinueTurn,
    EndTurn,
    OverlapDecided,
    PausePlayback,
    ResumePlayback,
    ShowPartial,
    Sleep,
    StartDecode,
    StartOverlapDecode,
    StartPartial,
    StateChanged,
    StopPlayback,
    TurnTaker,
)
from gateway.voice.semantic import Primed, SemanticSignal
from gateway.voice.stt import SpeechToText, TranscriberBusy, Transcript
from gateway.voice.turn_signals import TurnSignal
from gateway.voice.wake import PHRASE_PREFIX, WakeDetection, WakeListener, make_detector
from gateway.voice.words import Reading, words

if TYPE_CHECKING:
    from gateway.voice.feedback import FeedbackReader

log = logging.getLogger(__name__)

#: Tries at reading the agent's line into the semantic signal's slot for a person who started to
#: speak, and the wait between them while the model is busy (a request is rarely under 400 ms).
PRIME_TRIES = 4
PRIME_RETRY_S = 0.08


class VadStreamLike(Protocol):
    """What listening needs of a VAD stream (:class:`gateway.voice.vad.VadStream`, or a
    recorded one in tests): chunks of audio with each chunk's speech probability."""

    def process(self, audio: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...

    def reset(self) -> None: ...


class Surroundings(Protocol):
    """What listening asks of the rest of the session, when it needs to know (the session
    answers)."""

    @property
    def model_idle(self) -> bool:
        """Nothing else needs the speech model: an early decode delays nobody."""

    @property
    def agent_audible(self) -> bool:
        """An agent is being played: speech then needs ``barge_in_ms`` to count."""

    @property
    def busy(self) -> bool:
        """An utterance is between its end and its reply: the wake window stays open."""

    @property
    def agent_said(self) -> str | None:
        """What an agent said last: the semantic signal reads the person's words after it."""

    @property
    def agent_heard(self) -> str:
        """The words of the reply being played the person has heard so far (a little more:
        an estimate), which a listener's read-back repeats."""

    @property
    def semantic(self) -> SemanticSignal | None:
        """The semantic end-of-turn signal, if installed."""


def strip_wake_phrase(text: str, wake: str | None) -> str:
    """Drop the phrase of wake word ``wake`` (None: none) that Whisper still heard at the start
    of ``text`` (the cut is never exact)."""
    if wake is None:
        return text
    phrase = words(wake.split(":")[-1].replace("_", " "))
    said = text.split()
    head = ["".join(words(w)) for w in said[: len(phrase)]]
    if phrase and head == phrase:
        return " ".join(said[len(phrase) :]).lstrip(",.;: ").strip()
    return text


def score_signals(
    signals: Mapping[str, TurnSignal], audio: np.ndarray, voiced_end: int
) -> dict[str, float]:
    """Each signal's P(finished); a signal that cannot judge (too little voice) is left out."""
    scores = {}
    for name, signal in signals.items():
        try:
            p = signal.score(audio, voiced_end)
        except Exception:  # a model (onnxruntime, numpy): the turn still ends on the others
            log.exception("end-of-turn signal %s failed", name)
            continue
        if p is not None:
            scores[name] = p
    return scores


class Listener:
    """The listening part of one session (see the module's docstring): ``turns`` the session's
    turn-taker, ``sink`` where its events go, ``around`` what it asks of the rest of the
    session, ``services`` the session's (its clock, wake detectors on the network)."""

    def __init__(
        self,
        settings: SessionSettings,
        *,
        turns: TurnTaker,
        vad: VadStreamLike,
        transcriber: SpeechToText,
        second_reader: SpeechToText | None = None,
        feedback_reader: FeedbackReader | None = None,
        signals: Mapping[str, TurnSignal],
        sink: Sink,
        around: Surroundings,
        services: Services,
        echo: EchoGuard | None = None,
    ) -> None:
        self.settings = settings
        #: The rules of turn-taking (the session's); this listener carries out what it decides.
        self.turns = turns
        self._vad = vad
        self._transcriber = transcriber
        #: Reads again the overlaps whose words would interrupt (``StartOverlapDecode.second``;
        #: None: there is none, and those words interrupt).
        self._second_reader = second_reader
        #: Reads an overlap's words as a listener's feedback or not (``StartOverlapDecode.
        #: feedback``; None: there is none, and the rules alone decide).
        self._feedback_reader = feedback_reader
        self._signals = signals
        self._sink = sink
        self._around = around
        self._echo = echo
        self._services = services
        #: (samples heard up to the end of a chunk, when that chunk arrived), for timings.
        self._arrivals: deque[tuple[int, float]] = deque(maxlen=1024)
        #: Speculative decodes by the turn-taker's id (a new one starts at each pause).
        self._decodes: dict[int, asyncio.Task[Transcript]] = {}
        #: The semantic signal's score and cost by decode id (bounded like ``_decodes``).
        self._semantic: dict[int, tuple[float | None, float]] = {}
        #: Who this person is to the semantic signal: their calls keep a slot of their own.
        self._semantic_key = object()
        self._partial: asyncio.Task[None] | None = None
        self._background: set[asyncio.Future[None]] = set()
        self._wake: WakeListener | None = None
        self.wake_name = "off"
        self._wake_pos = 0  # samples the wake detector has heard
        #: Time spent decoding overlaps since the session last read it (its decision's log).
        self.overlap_decode_ms = 0.0
        self._lookback: deque[np.ndarray] = deque()
        self._lookback_samples = 0

    # ------------------------------------------------------------------ input
    async def hear(self, pcm: np.ndarray, arrived: float, now: float) -> None:
        """One input item: ``pcm`` (16 kHz int16) that arrived at ``arrived``, handled at
        ``now`` (the driver's one reading of the clock for this item)."""
        if self.turns.mode == "ptt" and not self.turns.ptt_down:
            return
        if self._wake is not None:
            detections = await self._wake.listen(pcm)
            take_trouble = getattr(self._wake, "take_trouble", None)  # a remote detector's
            trouble = take_trouble() if take_trouble is not None else None
            if trouble:  # its service failed: the person is told, in one line naming it
                self._sink.emit(Told(trouble, "@error"))
            self._remember(pcm)
            self._wake_pos += len(pcm)
            if detections:
                await self._woke(detections[-1], arrived, now)
                return
            busy = self._around.busy
            self.apply(self.turns.check_awake(now, busy=busy), now)
            if not self.turns.awake(now, busy=busy):
                return  # asleep: this audio goes nowhere but the detector
        self._hear(pcm, arrived, now)

    def no_audio(self, now: float) -> None:
        """No audio is waiting at ``now`` while a turn may be under way: the turn-taker counts
        the gap as silence (``TurnRule.gap_ms``), so a client that stops sending (a muted
        microphone, a stalled connection) does not hold its turn open."""
        if not self.turns.active:
            return
        position = self.turns.position
        actions = self.turns.no_audio(now)
        if self.turns.position > position:
            self._arrivals.append((self.turns.position, now))
        self.apply(actions, now)

    def _hear(self, pcm: np.ndarray, arrived: float, now: float) -> None:
        chunks, probs = self._vad.process(pcm)
        for chunk, p in zip(chunks, probs, strict=True):
            self._arrivals.append((self.turns.position + len(chunk), arrived))
            voiced = float(p) >= self.settings.endpoint.activation
            echo = self._echo is not None and self._echo.heard(chunk, arrived, voiced)
            actions = self.turns.hear(
                chunk,
                float(p),
                now,
                agent_audible=self._around.agent_audible,
                model_idle=self._around.model_idle,
                echo=echo,
            )
            self.apply(actions, now)

    def arrival(self, sample: int) -> float:
        """When the chunk holding ``sample`` arrived; the oldest known if older."""
        arrived = self._services.now()
        for end, t in reversed(self._arrivals):
            if end <= sample:
                break
            arrived = t
        return arrived

    # ------------------------------------------------------------------ the turn-taker's actions
    def set_ptt(self, down: bool, now: float) -> None:
        """Push-to-talk held or let go (letting go ends the utterance)."""
        self.apply(self.turns.set_ptt(down, now), now)

    def playing(self, speaking: bool, now: float) -> None:
        """Agent audio started or stopped playing."""
        self.apply(self.turns.playing(speaking, now), now)

    def apply(self, actions: list[Action], now: float) -> None:
        """Carry out what the turn-taker decided at ``now`` (here, or told to the sink)."""
        for a in actions:
            if isinstance(a, StartDecode):
                self._start_decode(a)
            elif isinstance(a, CancelDecode):
                task = self._decodes.pop(a.id, None)
                if task is not None:
                    # Its audio is outdated: a decode still queued leaves the queue for others.
                    task.cancel()
            elif isinstance(a, EndTurn):
                self._end_turn(a, now)
            elif isinstance(a, ContinueTurn):
                self._sink.emit(TurnContinued())
            elif isinstance(a, StopPlayback):
                self._sink.emit(StopAgent())
            elif isinstance(a, PausePlayback):
                self._sink.emit(PauseAgent())
            elif isinstance(a, ResumePlayback):
                self._sink.emit(ResumeAgent(a.heard))
            elif isinstance(a, OverlapDecided):
                decode_ms, self.overlap_decode_ms = self.overlap_decode_ms, 0.0
                self._sink.emit(OverlapJudged(a.decision, decode_ms))
            elif isinstance(a, StartOverlapDecode):
                self._background_task(self._decode_overlap(a))
            elif isinstance(a, StateChanged):
                self._sink.emit(StateShown(a.state))
                if a.state == "hearing":
                    self._prime_semantic()
            elif isinstance(a, Sleep):
                self._vad.reset()
            elif isinstance(a, StartPartial):
                self._partial = asyncio.get_running_loop().create_task(self._run_partial(a.audio))
            elif isinstance(a, ShowPartial):
                self._sink.emit(PartialText(a.text))
                # Its words but the last (a word still being said may change) read ahead too:
                # the pause's call then pays for the last few words only.
                self._prime_semantic(a.text.rsplit(maxsplit=1)[0] if " " in a.text.strip() else "")

    def _start_decode(self, a: StartDecode) -> None:
        task = asyncio.get_running_loop().create_task(
            self._transcriber.transcribe(a.audio, speech_end_s=a.speech_end_s)
        )
        self._decodes[a.id] = task
        while len(self._decodes) > 4:  # bounded: only the newest pause's decode matters
            self._decodes.pop(next(iter(self._decodes))).cancel()
        self._background_task(self._judge(a, task))

    async def _judge(self, a: StartDecode, task: asyncio.Task[Transcript]) -> None:
        """The audio signals (off the event loop) while the decode runs; then the verdict."""
        rule = self.settings.turn_rule
        signals = {n: self._signals[n] for n in rule.signals}
        scores: dict[str, float] = {}
        if signals:
            scores = await asyncio.to_thread(score_signals, signals, a.audio, a.voiced_end)
        await asyncio.wait([task])
        if task.cancelled() or task.exception() is not None:
            self._verdict(a.id, None)
        elif not (rule.semantic and self.turns.awaiting(a.id)):
            self._verdict(a.id, Verdict(task.result().text, scores))
        elif self.settings.paced:
            await self._amend_with_semantic(a.id, task.result().text, scores)
        else:
            await self._wait_for_semantic(a.id, task.result().text, scores)

    def _verdict(self, decode_id: int, verdict: Verdict | None) -> None:
        now = self._services.now()
        self.apply(self.turns.judged(decode_id, verdict, now), now)

    async def _amend_with_semantic(
        self, decode_id: int, text: str, scores: dict[str, float]
    ) -> None:
        """In real time the words' signal never holds the turn past the rule's own wait: the
        transcript and the voice decide now, and the signal's score amends that if it comes
        before the turn ends. At 12 people its calls (70-80 ms median, 255 p95 while the machine
        was saturated) held every verdict back: the end of speech -> reply p95 went from
        0.81-0.94 s to 1.31-1.46 s. Under such load it now comes late and the turn goes as
        without it."""
        self._verdict(decode_id, Verdict(text, scores))
        semantic = self._around.semantic
        if semantic is None:
            return
        if not self.turns.awaiting(decode_id):  # the verdict ended the turn: no time at all
            semantic.attempted(False)
            return
        # Not asked for when the turn ends sooner than such a call takes these days: it could
        # only cost the machine CPU that others' turns need.
        left_ms = self.turns.due_ms() - self.turns.silence_ms
        semantic.attempted(left_ms >= semantic.typical_ms)
        if left_ms < semantic.typical_ms:
            return
        p = await self._semantic_score(decode_id, text)
        if p is not None:
            self._verdict(decode_id, Verdict(text, {**scores, "semantic": p}))

    async def _wait_for_semantic(self, decode_id: int, text: str, scores: dict[str, float]) -> None:
        """Replayed faster than real time (``talk --fast``, tests) the verdict waits for the
        words' score: silence there is not time."""
        p = await self._semantic_score(decode_id, text)
        self._verdict(decode_id, Verdict(text, scores if p is None else {**scores, "semantic": p}))

    async def _semantic_score(self, decode_id: int, text: str) -> float | None:
        """The semantic signal's P(finished) for ``text``, off the event loop, given up after
        its ``timeout_ms`` (the turn is then judged without it). Run only while the pause can
        still end the turn (speech not resumed); if speech resumes during the call, the
        turn-taker ignores the verdict it is part of."""
        semantic = self._around.semantic
        if semantic is None:
            return None
        t = time.monotonic()  # the call's cost, in real time whatever the clock
        p: float | None
        try:
            p = await asyncio.wait_for(
                asyncio.to_thread(
                    functools.partial(
                        semantic.score, text, self._around.agent_said, key=self._semantic_key
                    )
                ),
                semantic.settings.timeout_ms / 1000,
            )
        except TimeoutError:
            p = None
        except Exception:  # the model would not load (llama.cpp): judge the turn without it
            log.exception("the semantic end-of-turn signal failed")
            p = None
        self._semantic[decode_id] = (p, (time.monotonic() - t) * 1000)
        while len(self._semantic) > 8:
            self._semantic.pop(next(iter(self._semantic)))
        return p

    def _prime_semantic(self, words: str = "") -> None:
        """The person is speaking: have the semantic signal read what the agent said last (and
        ``words``, what the person has said so far) now, while they talk, so that their pause's
        call pays only for what is new."""
        semantic = self._around.semantic
        if semantic is None or not self.settings.turn_rule.semantic:
            return
        said = self._around.agent_said
        prime = functools.partial(semantic.prime, said, words, key=self._semantic_key)
        self._background_task(self._prime(prime, tries=1 if words else PRIME_TRIES))

    async def _prime(self, prime: Callable[[], Primed], tries: int) -> None:
        # The model busy with another person's call (a quarter of the time at 12 people: calls
        # of 50-70 ms, ~2 a second): try again while this person is still speaking, so that
        # their pause's call need not read the agent's line.
        for _ in range(tries):
            if await asyncio.to_thread(prime) != "busy" or self.turns.state != "hearing":
                return
            await asyncio.sleep(PRIME_RETRY_S)

    def _end_turn(self, a: EndTurn, now: float) -> None:
        task = self._decodes.pop(a.decode, None) if a.decode is not None else None
        for other in self._decodes.values():
            other.cancel()
        self._decodes.clear()
        timing = Timing(
            last_voiced=self.arrival(a.offset + a.utterance.voiced_end - 1),
            endpoint=now,
            early_end=a.early,
            end_reason=a.reason,
            wait_ms=a.wait_ms,
            verdict_ms=a.verdict_ms,
            continued=a.continues,
        )
        if a.decode is not None and a.decode in self._semantic:
            timing.semantic, timing.semantic_ms = self._semantic.pop(a.decode)
        started = self.arrival(a.utterance.start)
        wake = self._wake.name if self._wake is not None else None
        self._sink.emit(TurnEnded(a.utterance, task, timing, started, wake))

    async def _decode_overlap(self, a: StartOverlapDecode) -> None:
        """The overlap's words (failed, unread or busy: None, and the overlap decides without
        them), timed into ``overlap_decode_ms`` and given to the turn-taker."""
        text: str | None = None
        logprob: float | None = None  # Whisper's avg_logprob of that decode (None: not given)
        near: Reading | None = None  # its reading in ``a.within``'s words (None: not given)
        feedback: float | None = None  # the feedback reader's P (None: not asked, not known)
        what = "second reading" if a.second else "decode"
        t = time.monotonic()
        try:
            text, logprob, near = await (self._read_again(a) if a.second else self._read(a))
        except asyncio.CancelledError:
            raise
        except SpeechError as e:
            # A speech server down: one line, and the overlap decides without words.
            log.warning("the overlap's %s failed: %s", what, e)
        except Exception:  # a model's own bug: its stack is worth having
            log.exception("the overlap's %s failed", what)
        read = a.feedback and self._feedback_reader is not None
        said = feedback_words(text, opened=not a.begun) if read else None
        echoed = False  # the words repeat what the agent said: feedback, the reader not asked
        if said is not None and read_back(said, self._around.agent_heard):
            log.info("overlap: %r reads back what the agent said", " ".join(said))
            feedback, echoed = READ_BACK_P, True
        elif said is not None:
            feedback = await self._read_feedback(said)
        self.overlap_decode_ms += (time.monotonic() - t) * 1000
        now = self._services.now()
        heard = self.turns.overlap_heard(
            a.id, text, a.voiced_ms, now, logprob, near, feedback, read_back=echoed
        )
        self.apply(heard, now)

    async def _read_feedback(self, said: list[str]) -> float | None:
        """The feedback reader's P(a listener's feedback) for the overlap's words
        (:func:`~gateway.proxy.overlap.feedback_words`), off the event loop (None: no reader,
        or no answer: the reader gives up after its own timeout and says so once in the
        log)."""
        reader = self._feedback_reader
        if reader is None:
            return None
        try:
            return await asyncio.to_thread(reader.score, said)
        except Exception:  # the reader's own bug: the rules decide without it
            log.exception("the feedback reader failed")
            return None

    async def _read(self, a: StartOverlapDecode) -> tuple[str, float | None, Reading | None]:
        """A partial decode, or (the model busy with a partial's sibling) a final one, which
        someone waiting for the agent deserves."""
        try:
            partial = await self._transcriber.transcribe_partial(
                a.audio, prompt=a.prompt, beam=a.beam, within=a.within
            )
            return partial.text, partial.avg_logprob, partial.nearest
        except TranscriberBusy:
            final = await self._transcriber.transcribe(a.audio, prompt=a.prompt)
            return final.text, final.avg_logprob if final.detailed else None, None

    async def _read_again(
        self, a: StartOverlapDecode
    ) -> tuple[str | None, float | None, Reading | None]:
        """The second recogniser's reading (None: there is none, or it is busy with another
        person's: the first reading's words decide)."""
        if self._second_reader is None:
            return None, None, None
        try:
            partial = await self._second_reader.transcribe_partial(
                a.audio, prompt=a.prompt, beam=a.beam
            )
        except TranscriberBusy:
            return None, None, None
        return partial.text, partial.avg_logprob, None

    async def _run_partial(self, audio: np.ndarray) -> None:
        text: str | None = None
        try:
            text = (await self._transcriber.transcribe_partial(audio)).text
        except TranscriberBusy:
            pass  # partials are a nicety; the final transcript has priority
        finally:
            self.apply(self.turns.partial_done(text), self._services.now())

    # ------------------------------------------------------------------ wake word
    @property
    def waking(self) -> bool:
        """Whether a wake word is in use."""
        return self._wake is not None

    def set_wake(self, name: str, now: float) -> None:
        """Choose the wake word (or ``off``); listening falls asleep until it is heard."""
        name = (name or "off").strip()
        self._close_wake()
        if name == "off":
            self._wake = None
        else:
            # A phrase is matched in the transcript, here; a model's name may run on the network.
            phrase = name.startswith(PHRASE_PREFIX)
            detector = None if phrase else self._services.wake_listener(name)
            if detector is None:
                detector = make_detector(name, transcriber=self._transcriber)
            self._wake = detector
        self.wake_name = name
        self._lookback.clear()
        self._lookback_samples = 0
        self.apply(self.turns.set_wake(self._wake is not None, now), now)

    def _close_wake(self) -> None:
        if self._wake is not None and hasattr(self._wake, "close"):
            self._wake.close()  # a remote detector's stream

    def _remember(self, pcm: np.ndarray) -> None:
        """Keep just enough recent audio to start an utterance right after the wake phrase."""
        assert self._wake is not None
        self._lookback.append(pcm)
        self._lookback_samples += len(pcm)
        while (
            self._lookback
            and self._lookback_samples - len(self._lookback[0]) >= self._wake.max_lookback
        ):
            self._lookback_samples -= len(self._lookback.popleft())

    async def _woke(self, detection: WakeDetection, arrived: float, now: float) -> None:
        self._vad.reset()
        self.apply(self.turns.woke(now), now)  # the wake word is a barge-in
        self._sink.emit(WakeWordHeard(detection.model))
        # The utterance starts where the phrase ended: feed what came after it, drop the rest.
        buffered = np.concatenate(list(self._lookback)) if self._lookback else np.zeros(0, np.int16)
        self._lookback.clear()
        self._lookback_samples = 0
        after = self._wake_pos - detection.end
        if 0 < after <= len(buffered):
            self._hear(buffered[-after:], arrived, now)

    # ------------------------------------------------------------------ lifecycle
    def _background_task(self, coro: Awaitable[None]) -> None:
        # Kept referenced until done: the loop holds only weak references to tasks.
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def settled(self) -> None:
        """Wait until every decode, verdict and partial started so far has been handled (for
        drivers that replay recorded audio faster than real time, and tests)."""
        while True:
            pending = [t for t in (*self._background, self._partial) if t and not t.done()]
            if not pending:
                return
            await asyncio.wait(pending)

    def close(self) -> None:
        """Stop what is running and let go of the wake detector."""
        for task in (*self._decodes.values(), self._partial, *self._background):
            if task is not None:
                task.cancel()
        self._close_wake()
