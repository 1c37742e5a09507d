"""Turn-taking, sans I/O: when the person's turn ends, when an agent is interrupted, when the
session sleeps and wakes.

:class:`TurnTaker` is handed each VAD chunk with its speech probability, the time ``now`` (it
never reads a clock), and the results of the work it asked for (speculative decodes, partial
transcripts); it returns :data:`Action` values for its driver (listening, which the session
that owns it has carry them out). Every rule of turn-taking lives here or in the turn rule it
applies (gateway/proxy/turn_rule.py), so each is tested on synthetic input in milliseconds
(``tests/proxy/test_turn_taker.py``, ``test_turn_rule.py``):

* **end of turn**: the :class:`Endpointer` finds pauses; at ``speculate_ms`` of silence a decode
  starts (:class:`StartDecode`) — at ``idle_speculate_ms`` when the driver says the model is idle
  (``hear(..., model_idle=True)``); its result, with the audio end-of-turn signals, is a
  :class:`Verdict`, and the :class:`TurnRule` turns the verdict into how much silence to wait
  before ending the turn — short when everything says "finished", longer the more the signals doubt
  it, never more than the rule's ``max_wait_ms``. Every :class:`EndTurn` says why it ended and what
  the rule chose (assert on that, not on wall time);
* **a person cut off**: when a turn ended early and the person went on speaking within the
  rule's ``unfinished_ms``, they had only paused; no later turn of the session ends at a shorter
  silence than that pause (:attr:`TurnTaker.learned_wait_ms`, ``TurnRule.learn_pauses``);
* **a client that stops sending**: a gap of ``gap_ms`` with no audio at all counts as
  silence (:meth:`TurnTaker.no_audio`, which the driver calls while its input is empty);
* **barge-in**: ``barge_in_ms`` of voiced audio while an agent is audible pauses it
  (:class:`PausePlayback`) and opens an :class:`~gateway.proxy.overlap.Overlap`, which decides
  from the words of fast decodes (:class:`StartOverlapDecode`) whether the agent resumes (a
  backchannel, a noise: the utterance is dropped, no turn) or stops (an interruption: the turn
  goes on); chunks the driver marks as the agent's own echo count as silence
  (``overlap.decide`` False: it stops at once, as before);
* **wake windows**: asleep, audio reaches nothing but the wake detector; after the wake word
  speech must begin within ``wake_listen_ms``; after the answer to a request the person woke
  the device for (not a greeting, a notice, or an agent speaking later), ``follow_up_ms`` to answer;
* **push-to-talk**: speech counts only while held, and letting go ends the turn;
* **partial transcripts**: at most one every ``partial_interval_ms`` while speech is under way;
* **continuations**: speech that begins within ``continuation_ms`` of the last word of a
  hands-free turn just ended (so its answer has not been heard, or only its first words) goes
  on with that turn: :class:`ContinueTurn` (the driver drops the answer unplayed), and the turn
  that ends next holds both parts' audio as one utterance (:attr:`EndTurn.continues`).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace
from typing import Literal, Protocol

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.proxy.overlap import (
    Overlap,
    OverlapDecision,
    OverlapDecode,
    OverlapGoOn,
    OverlapPauseAgain,
    OverlapSettings,
)
from gateway.proxy.turn_rule import Decision, EndReason, TurnRule, Verdict
from gateway.voice.endpoint import (
    Endpointer,
    EndpointSettings,
    SpeechPaused,
    SpeechResumed,
    SpeechStarted,
    Utterance,
)
from gateway.voice.vad import CHUNK_MS
from gateway.voice.words import Reading

State = Literal["idle", "listening", "hearing", "thinking", "speaking"]

# ---------------------------------------------------------------------------------- actions


@dataclass(frozen=True, eq=False)
class StartDecode:
    """Decode ``audio`` (the utterance so far) and judge it; answer with
    :meth:`TurnTaker.judged` quoting ``id``. ``voiced_end`` indexes ``audio``."""

    id: int
    audio: np.ndarray
    voiced_end: int

    @property
    def speech_end_s(self) -> float:
        """Seconds from the clip's start to the end of speech."""
        return self.voiced_end / SAMPLE_RATE


@dataclass(frozen=True)
class CancelDecode:
    """The decode ``id`` is outdated (speech resumed): drop it if it has not started."""

    id: int


@dataclass(frozen=True, eq=False)
class EndTurn:
    """The turn is over: send ``utterance``. ``decode`` is the id of a decode of exactly this
    audio, if one ran; ``early`` when a verdict ended it before the plain end silence.
    ``offset`` turns the utterance's sample indices into samples heard since the session
    began (the endpointer restarts its count when the session sleeps).

    The decision, for timings and tests (assert on these, not on wall time): ``reason`` why it
    ended, ``wait_ms`` the silence the rule chose at the last pause (None: no verdict came in
    time), ``verdict_ms`` the silence at which that verdict arrived (None: none did) — the
    turn ended at the later of the two."""

    utterance: Utterance
    decode: int | None
    early: bool
    offset: int = 0
    reason: EndReason = "end silence"
    wait_ms: int | None = None
    verdict_ms: int | None = None
    #: The utterance goes on from the turn ended before it: its audio holds both (from the
    #: first one's start), to be transcribed as one and to take the first one's place.
    continues: bool = False


@dataclass(frozen=True)
class ContinueTurn:
    """The person went on with the turn that just ended (within ``continuation_ms`` of its
    last word): its answer is dropped unplayed, and the next :class:`EndTurn` holds the whole
    request."""


@dataclass(frozen=True)
class StopPlayback:
    """Barge-in: stop the agent being played and drop what is queued."""


@dataclass(frozen=True)
class PausePlayback:
    """The person's voice over the agent: hold its playout (keep what is queued) while the
    overlap is decided."""


@dataclass(frozen=True)
class ResumePlayback:
    """The overlap was a backchannel, a noise or echo: the paused agent goes on. ``heard`` (not
    None): it goes on before the decision, the person's words so far being backchannels
    (``OverlapSettings.go_on``); the decision follows."""

    heard: str | None = None


@dataclass(frozen=True, eq=False)
class StartOverlapDecode:
    """Decode ``audio`` (the overlap so far, ``voiced_ms`` of voice) fast, for its words;
    answer with :meth:`TurnTaker.overlap_heard` quoting ``id``."""

    id: int
    audio: np.ndarray
    voiced_ms: int
    #: Whisper's ``initial_prompt`` for it (``OverlapSettings.prompt``; None: none).
    prompt: str | None = None
    #: The beam search's width (``OverlapSettings.beam``; 1: greedy).
    beam: int = 1
    #: Words to read it in too (``OverlapDecode.within``): answer the reading as ``near``.
    within: tuple[str, ...] = ()
    #: Decode it with the second recogniser (``OverlapDecode.second``); none: answer None.
    second: bool = False
    #: Have the feedback reader read the words too (``OverlapDecode.feedback``): answer its
    #: P(a listener's feedback) as ``feedback`` (no reader, or words it is not asked about,
    #: :func:`gateway.proxy.overlap.feedback_words`: None).
    feedback: bool = False
    #: Read them without the backchannel's word they would begin with (``OverlapDecode.begun``).
    begun: bool = False


@dataclass(frozen=True)
class OverlapDecided:
    """What speech over the agent was (for the page and the record: not a turn unless an
    ``interruption``)."""

    decision: OverlapDecision


@dataclass(frozen=True)
class StateChanged:
    """The session's state, for the UI."""

    state: State


@dataclass(frozen=True)
class Sleep:
    """Back to waiting for the wake word: forget half-heard audio (reset the VAD)."""


@dataclass(frozen=True, eq=False)
class StartPartial:
    """Transcribe ``audio`` (the utterance so far) for a partial transcript; answer with
    :meth:`TurnTaker.partial_done`."""

    audio: np.ndarray


@dataclass(frozen=True)
class ShowPartial:
    """A partial transcript to show."""

    text: str


Action = (
    StartDecode
    | ContinueTurn
    | CancelDecode
    | EndTurn
    | StopPlayback
    | PausePlayback
    | ResumePlayback
    | StartOverlapDecode
    | OverlapDecided
    | StateChanged
    | Sleep
    | StartPartial
    | ShowPartial
)


class TurnSettingsLike(Protocol):
    """The settings the turn-taker reads (``SessionSettings`` has them all). Read-only, so that
    a frozen dataclass fits."""

    @property
    def endpoint(self) -> EndpointSettings: ...
    @property
    def early_endpoint(self) -> bool: ...
    @property
    def barge_in_ms(self) -> int: ...
    @property
    def partial_interval_ms(self) -> int: ...
    @property
    def follow_up_ms(self) -> int: ...
    @property
    def wake_listen_ms(self) -> int: ...
    @property
    def turn_rule(self) -> TurnRule: ...
    @property
    def overlap(self) -> OverlapSettings: ...
    @property
    def continuation_ms(self) -> int: ...


@dataclass
class _Pause:
    id: int
    voiced_end: int  # absolute sample index
    decision: Decision | None = None  # None until judged
    verdict_ms: int | None = None  # the silence when the verdict arrived

    @property
    def wait_ms(self) -> int | None:
        return None if self.decision is None else self.decision.wait_ms


class TurnTaker:
    """The rules of turn-taking for one session. Feed it; do what it returns."""

    def __init__(self, settings: TurnSettingsLike) -> None:
        self.settings = settings
        self.rule = settings.turn_rule
        self.state: State = "listening"
        self.mode: Literal["handsfree", "ptt"] = "handsfree"
        self.ptt_down = False
        self._wake = False
        self._open_until = math.inf  # awake until then; inf: engaged, or no wake word
        #: With a wake word: a request the person woke the device for was sent, so what plays
        #: now is its answer and a follow-up window may follow (cleared when it falls asleep).
        self._asked = False
        self._voiced_run = 0
        self._next_id = 0
        self._pause: _Pause | None = None
        self._partial_running = False
        self._last_partial = -math.inf
        self._offset = 0  # samples heard before the current endpointer's first
        self._endpointer = self._new_endpointer()
        self._heard_at = -math.inf  # ``now`` of the last chunk heard
        self._covered_until = -math.inf  # time the audio (heard, or a gap's silence) reaches
        self._blank: np.ndarray | None = None  # a silent chunk, shaped like the ones heard
        #: The shortest silence that ends a turn in this session: raised when the person went
        #: on after an early end (``TurnRule.learn_pauses``); 0 until then.
        self.learned_wait_ms = 0
        self._early_end: int | None = None  # last voiced sample (absolute) of an early end
        self._model_idle = False  # as the driver said at the last chunk
        #: Speech over a paused agent, undecided (None: none).
        self._overlap: Overlap | None = None
        self._overlap_audio: list[np.ndarray] = []
        self._overlap_state: State = "speaking"  # the state to go back to on a resume
        self._overlap_pause: int | None = None  # voiced_end of a pause within the overlap
        #: The backchannel that last resumed the agent, while an overlap may still join it
        #: (``overlap.join_ms``): its audio, its voice, and the audio heard since (ms).
        self._resumed: tuple[list[np.ndarray], int, int] | None = None
        #: The last few chunks: the head of an overlap (its voice began before it counted).
        self._recent: deque[np.ndarray] = deque(maxlen=8)
        self._audible = False  # as the driver said at the last chunk
        self._echo_run = 0  # ms of voiced chunks in a row the driver marked as echo
        #: The turn under way interrupted the agent: more of its voice stops, never pauses.
        self._interrupting = False
        self._echo_told = False  # echo reported once per playback
        #: Each kind of overlap decided in this session, counted (the benchmark reads them).
        self.overlaps: dict[str, int] = {}
        #: The last turn ended (its audio up to its last word, and where that audio began and
        #: its last word ended, in samples since the session began), while it may be continued.
        self._last_turn: tuple[np.ndarray, int, int] | None = None
        #: The turn under way continues the last one: that one's audio, and its first sample.
        self._joined: tuple[np.ndarray, int] | None = None
        #: Turns that went on from the one before (the benchmark reads it).
        self.continued = 0
        self._joined_told = False  # ContinueTurn given for the turn under way

    def _new_endpointer(self) -> Endpointer:
        # The rule's silence, not the endpointer's own default. With early ends the endpointer's
        # end is only the bound (patience: the rule ends turns sooner).
        end = self.rule.max_wait_ms if self.settings.early_endpoint else self.rule.end_silence_ms
        return Endpointer(replace(self.settings.endpoint, end_silence_ms=end))

    # ------------------------------------------------------------------ queries
    @property
    def active(self) -> bool:
        """True while a turn is under way (speech started, not yet ended)."""
        return self._endpointer.active

    @property
    def silence_ms(self) -> int:
        """Silence since the last voiced chunk of the turn under way."""
        return self._endpointer.silence_ms

    @property
    def position(self) -> int:
        """Samples heard since the session began."""
        return self._offset + self._heard

    @property
    def _heard(self) -> int:
        return self._endpointer.position

    def current_audio(self) -> np.ndarray | None:
        """The turn so far (with the turn it continues, if it does), or None."""
        audio = self._endpointer.current_audio()
        if audio is None or self._joined is None:
            return audio
        return np.concatenate([self._prefix(self.position - len(audio), audio.dtype), audio])

    def _prefix(self, first: int, dtype: np.dtype) -> np.ndarray:
        """What the continued turn's audio holds before sample ``first`` (since the session
        began) of the turn under way: its own audio, then silence up to ``first``."""
        assert self._joined is not None
        spoken, start = self._joined
        n = max(0, first - start)
        prefix = spoken[:n].astype(dtype)
        if len(prefix) < n:  # the pause between the two (its end silence was not kept)
            prefix = np.concatenate([prefix, np.zeros(n - len(prefix), dtype)])
        return prefix

    def due_ms(self) -> int:
        """Silence at which the turn under way ends, as things stand."""
        plain = self.rule.end_silence_ms
        pause = self._pause
        if pause is None or not self.settings.early_endpoint:
            return plain
        if pause.wait_ms is None:
            # Judging under way: a patient rule waits for the verdict (up to its bound).
            patient = self.rule.signals or self.rule.semantic
            return max(plain, self.rule.max_wait_ms) if patient else plain
        return pause.wait_ms

    def accepts_audio(self, now: float, *, busy: bool = False) -> bool:
        """Whether audio goes past the wake detector (push-to-talk released: nowhere).

        ``busy``: an utterance is being handled or a reply played — the session stays awake.
        """
        if self.mode == "ptt" and not self.ptt_down:
            return False
        return not self._wake or self.awake(now, busy=busy)

    def awake(self, now: float, *, busy: bool = False) -> bool:
        """Whether a wake window is open (always, without a wake word)."""
        if not self._wake or now < self._open_until or self.active:
            return True
        return self.state in ("thinking", "speaking") or busy

    # ------------------------------------------------------------------ audio
    def hear(
        self,
        chunk: np.ndarray,
        probability: float,
        now: float,
        *,
        agent_audible: bool = False,
        model_idle: bool = False,
        echo: bool = False,
    ) -> list[Action]:
        """One VAD chunk. ``agent_audible``: an agent is being played or synthesized.
        ``model_idle``: nothing else needs the speech model now (no decode running or queued,
        nobody else mid-utterance), so a decode may start at ``idle_speculate_ms``.
        ``echo``: the driver's echo guard recognised the agent's own voice in this chunk: it
        counts as silence (the agent must not interrupt itself, nor its words become a turn)."""
        self._heard_at = self._covered_until = now
        self._model_idle = model_idle
        if self._blank is None or len(self._blank) != len(chunk):
            self._blank = np.zeros_like(chunk)
        out: list[Action] = []
        if echo and probability >= self.settings.endpoint.activation:
            probability = 0.0
            self._echo_run += CHUNK_MS
            barge = self.settings.barge_in_ms
            if barge and self._echo_run >= barge and not self._echo_told:
                self._echo_told = True
                decision = OverlapDecision("echo", "", self._echo_run, "echo", 0)
                self._count(decision)
                out.append(OverlapDecided(decision))
        else:
            self._echo_run = 0
        return out + self._hear(chunk, probability, now, agent_audible=agent_audible)

    def no_audio(self, now: float) -> list[Action]:
        """No audio has come since the last chunk (the driver asks when its input is empty).

        Once the gap reaches the rule's ``gap_ms`` it counts as silence: silent chunks up to
        ``now`` go to the endpointer, so a client that stops sending (a muted microphone, a
        stalled connection) ends its turn as a silent microphone would — a decode, a verdict,
        the rule's wait — instead of holding it open to the rule's bound or for ever. Audio
        arriving later simply follows the silence (speech resumed, or a new turn).
        """
        if not self.active or self._blank is None:
            return []
        if (now - self._heard_at) * 1000 < self.rule.gap_ms:
            return []
        out: list[Action] = []
        step = len(self._blank) / SAMPLE_RATE
        while self.active and self._covered_until + step <= now:
            self._covered_until += step
            out += self._hear(self._blank, 0.0, now, agent_audible=False)
        return out

    def _hear(
        self, chunk: np.ndarray, probability: float, now: float, *, agent_audible: bool
    ) -> list[Action]:
        s = self.settings
        out: list[Action] = []
        voiced = probability >= s.endpoint.activation
        self._voiced_run = self._voiced_run + CHUNK_MS if voiced else 0
        self._audible = agent_audible
        self._recent.append(chunk)
        if self._resumed is not None and self._overlap is None:
            before, voice, since = self._resumed
            since += CHUNK_MS
            late = since - self._voiced_run > s.overlap.join_ms  # its voice began too late
            self._resumed = None if late else (before, voice, since)
        if self._overlap is not None:
            out += self._overlap_chunk(chunk, voiced, now)
        elif s.barge_in_ms and self._voiced_run >= s.barge_in_ms and agent_audible:
            out += self._barge_in(now)
        ep = s.endpoint
        self._endpointer.speculate_at(ep.idle_speculate_ms if self._model_idle else ep.speculate_ms)
        for ev in self._endpointer.process(chunk, probability):
            out += self._on_event(ev, now)
        if self._overlap is not None:
            return out  # undecided: no turn ends, no partial shows what may be a backchannel
        if self.active and self.silence_ms >= self.due_ms():
            out += self._end(now, early=self.due_ms() < self.rule.end_silence_ms)
        if self.active and self._partial_due(now):
            audio = self.current_audio()
            if audio is not None and len(audio) >= SAMPLE_RATE // 2:
                self._partial_running = True
                self._last_partial = now
                out.append(StartPartial(audio))
        return out

    def awaiting(self, decode_id: int) -> bool:
        """Whether the verdict of decode ``decode_id`` can still end the turn (speech has not
        resumed since, and the turn has not ended): more work for it is worth doing."""
        pause = self._pause
        return pause is not None and pause.id == decode_id and self.active

    def judged(self, decode_id: int, verdict: Verdict | None, now: float) -> list[Action]:
        """A decode asked for by :class:`StartDecode` is done (``verdict`` None: it failed)."""
        pause = self._pause
        if pause is None or not self.awaiting(decode_id):
            return []  # outdated: speech resumed, or the turn already ended
        pause.verdict_ms = self.silence_ms
        if verdict is None:
            pause.decision = Decision(self.rule.end_silence_ms, "end silence")
        else:
            decision = self.rule.decide(verdict)
            if decision.wait_ms < self.learned_wait_ms:
                decision = Decision(self.learned_wait_ms, decision.reason)
            pause.decision = decision
        if self._overlap is None and self.silence_ms >= self.due_ms():
            return self._end(now, early=self.due_ms() < self.rule.end_silence_ms)
        return []

    def partial_done(self, text: str | None) -> list[Action]:
        """A partial transcript is ready (None: it was not made)."""
        self._partial_running = False
        if text and text.strip() and self.active:
            return [ShowPartial(text.strip())]
        return []

    def _partial_due(self, now: float) -> bool:
        interval = self.settings.partial_interval_ms
        return (
            interval > 0
            and not self._partial_running
            and now - self._last_partial >= interval / 1000
        )

    def _on_event(self, ev: object, now: float) -> list[Action]:
        out: list[Action] = []
        if isinstance(ev, SpeechStarted):
            self._learn_from(self._offset + ev.start)
            if self._joined is not None or self._continue():
                if not self._joined_told:
                    self._joined_told = True
                    out += [ContinueTurn(), StopPlayback()]
            elif self._overlap is not None:
                pass  # the agent is paused: the overlap decides
            elif self.settings.barge_in_ms and self._audible and self.settings.overlap.decide:
                out += self._barge_in(now)
            elif self.settings.barge_in_ms:
                out.append(StopPlayback())
            self._open_until = math.inf
            out += self._set_state("hearing")
        elif isinstance(ev, SpeechPaused):
            audio = self.current_audio()
            if self._overlap is not None:
                # Not decoded for a turn unless the overlap is an interruption (then it is).
                self._overlap_pause = ev.voiced_end
            elif audio is not None and self.settings.early_endpoint:
                self._next_id += 1
                self._pause = _Pause(self._next_id, ev.voiced_end)
                start = self._heard - len(audio)
                out.append(StartDecode(self._next_id, audio, ev.voiced_end - start))
        elif isinstance(ev, SpeechResumed):
            if self._pause is not None:
                out.append(CancelDecode(self._pause.id))
            self._pause = None
            self._overlap_pause = None
        elif isinstance(ev, Utterance):
            out += self._utterance(ev, early=False, reason="too long" if ev.cut else None)
        return out

    def _utterance(
        self, utt: Utterance, *, early: bool, reason: EndReason | None = None
    ) -> list[Action]:
        pause, self._pause = self._pause, None
        self._interrupting = False
        keep = utt.voiced_end - utt.start + SAMPLE_RATE * self.rule.end_silence_ms // 1000
        if len(utt.audio) > keep:
            # A patient wait leaves up to 2 s of silence at the end: the clip keeps no more of
            # it than the plain end silence, as before (agents get the speech, not the wait).
            utt = Utterance(utt.audio[:keep], utt.start, utt.start + keep, utt.voiced_end, utt.cut)
        continues = self._joined is not None
        if continues:
            self.continued += 1
            prefix = self._prefix(self._offset + utt.start, utt.audio.dtype)
            audio = np.concatenate([prefix, utt.audio])
            utt = Utterance(audio, utt.start - len(prefix), utt.end, utt.voiced_end, utt.cut)
        self._joined, self._joined_told = None, False
        self._last_turn = None
        if self.mode == "handsfree" and not utt.cut and self.settings.continuation_ms:
            spoken = utt.audio[: utt.voiced_end - utt.start]
            start = self._offset + utt.start
            self._last_turn = (spoken, start, self._offset + utt.voiced_end)
        # The decode and verdict of the pause this end closes, if the end is that pause's.
        this = pause if pause is not None and pause.voiced_end == utt.voiced_end else None
        decode = this.id if this else None
        decision = this.decision if this else None
        if reason is None:
            reason = "end silence" if decision is None else decision.reason
        self._early_end = self._offset + utt.voiced_end if early else None
        return [
            EndTurn(
                utt,
                decode,
                early,
                self._offset,
                reason=reason,
                wait_ms=None if decision is None else decision.wait_ms,
                verdict_ms=this.verdict_ms if this else None,
                continues=continues,
            )
        ]

    def _continue(self) -> bool:
        """Whether the speech just begun goes on with the last turn (its voice began within
        ``continuation_ms`` of that turn's last word); if so, the turn under way is joined to it."""
        last, self._last_turn = self._last_turn, None
        if last is None:
            return False
        spoken, start, last_word = last
        onset = self.position - self._voiced_run * SAMPLE_RATE // 1000
        if (onset - last_word) * 1000 > self.settings.continuation_ms * SAMPLE_RATE:
            return False
        self._joined = (spoken, start)
        return True

    # ------------------------------------------------------------------ speech over the agent
    def _barge_in(self, now: float) -> list[Action]:
        """Voice over an audible agent: stop it (``overlap.decide`` off), or pause it and open
        an overlap to decide."""
        o = self.settings.overlap
        if self._joined is not None or self._continue():
            # The answer to a request the person has not finished: not theirs to hear.
            if self._joined_told:
                return [StopPlayback()]
            self._joined_told = True
            return [ContinueTurn(), StopPlayback()]
        if not o.decide or self._interrupting:
            return [StopPlayback()]
        head, joined_ms, stretch_at = list(self._recent), 0, 0
        if self._resumed is not None:
            # Within join_ms of a backchannel: judged with it (its audio, then what came since;
            # the head's older chunks are that one's already).
            before, joined_ms, since = self._resumed
            new = head[-max(1, since // CHUNK_MS) :]
            head = (before + new)[-(o.max_decide_ms // CHUNK_MS) :]  # bounded, however many
            stretch_at = max(0, len(head) - len(new))  # it begins after the last's end
        self._resumed = None
        self._overlap = Overlap(
            o,
            now,
            voiced_ms=joined_ms + self._voiced_run,
            audio=list(head),
            joined_ms=joined_ms,
            stretch_at=stretch_at,
        )
        self._overlap_audio = head
        self._overlap_state = self.state
        self._overlap_pause = None
        return [PausePlayback()]

    def _overlap_chunk(self, chunk: np.ndarray, voiced: bool, now: float) -> list[Action]:
        assert self._overlap is not None
        self._overlap_audio.append(chunk)
        step = self._overlap.chunk(voiced, CHUNK_MS, now, chunk)
        return self._overlap_step(step, now)

    def overlap_heard(
        self,
        decode_id: int,
        text: str | None,
        voiced_ms: int,
        now: float,
        logprob: float | None = None,
        near: Reading | None = None,
        feedback: float | None = None,
        read_back: bool = False,
    ) -> list[Action]:
        """An overlap decode asked for by :class:`StartOverlapDecode` came back (``text``
        None: it failed; ``logprob``: Whisper's mean log-probability per token, None: not
        known; ``near``: its likeliest reading in ``within``'s words, None: not known;
        ``feedback``: the feedback reader's P(a listener's feedback), None: not known;
        ``read_back``: its words repeat the agent's, :func:`~gateway.proxy.overlap.read_back`)."""
        if self._overlap is None:
            return []  # decided meanwhile (its length, a stop, the session slept)
        heard = self._overlap.heard(
            decode_id, text, voiced_ms, now, logprob, near, feedback, read_back
        )
        return self._overlap_step(heard, now)

    def _overlap_step(
        self,
        step: OverlapDecode | OverlapGoOn | OverlapPauseAgain | OverlapDecision | None,
        now: float,
    ) -> list[Action]:
        if isinstance(step, OverlapDecode):
            assert self._overlap is not None  # the open overlap asked for it
            at = self._overlap.stretch_at
            heard = self._overlap_audio[at:] if step.last_stretch else None
            audio = np.concatenate(heard or self._overlap_audio)[step.start :]
            o = self._overlap.settings
            return [
                StartOverlapDecode(
                    step.id,
                    audio,
                    step.voiced_ms,
                    o.prompt or None,
                    o.beam,
                    step.within,
                    step.second,
                    step.feedback,
                    step.begun,
                )
            ]
        if isinstance(step, OverlapGoOn):
            return [ResumePlayback(step.text)]
        if isinstance(step, OverlapPauseAgain):
            return [PausePlayback()]
        if step is None:
            return []
        self._overlap = None
        chunks, self._overlap_audio = self._overlap_audio, []
        self._count(step)
        out: list[Action] = [OverlapDecided(step)]
        if step.kind == "backchannel" and self.settings.overlap.join_ms:
            self._resumed = (chunks, step.voiced_ms, 0)
        if step.kind != "interruption":
            # Not a turn: what the endpointer holds of it is dropped, and the agent goes on.
            self._offset += self._heard
            self._endpointer = self._new_endpointer()
            self._pause = None
            self._voiced_run = 0
            return [*out, ResumePlayback(), *self._set_state(self._overlap_state)]
        out.append(StopPlayback())
        self._interrupting = True
        pause, self._overlap_pause = self._overlap_pause, None
        if self.active and pause is not None and self.settings.early_endpoint:
            # The person has paused already: the turn's decode starts now, as at a pause.
            so_far = self.current_audio()
            if so_far is not None:
                self._next_id += 1
                self._pause = _Pause(self._next_id, pause)
                start = self._heard - len(so_far)
                out.append(StartDecode(self._next_id, so_far, pause - start))
        if self.active and self.silence_ms >= self.due_ms():
            out += self._end(now, early=self.due_ms() < self.rule.end_silence_ms)
        return out

    def _count(self, decision: OverlapDecision) -> None:
        self.overlaps[decision.kind] = self.overlaps.get(decision.kind, 0) + 1

    def _drop_overlap(self) -> list[Action]:
        """An open overlap ends without a decision (the agent stopped, the session slept)."""
        was, self._overlap = self._overlap, None
        self._overlap_audio = []
        self._resumed = None
        return [StopPlayback()] if was is not None else []

    def _learn_from(self, resumed: int) -> None:
        """Speech began at sample ``resumed``: if the last turn ended early and this is within
        the rule's ``unfinished_ms`` of its last word, the person had only paused."""
        last, self._early_end = self._early_end, None
        if last is None or not self.rule.learn_pauses:
            return
        paused_ms = (resumed - last) * 1000 // SAMPLE_RATE
        if paused_ms <= self.rule.unfinished_ms:
            wait = min(paused_ms + CHUNK_MS, self.rule.unfinished_ms)
            self.learned_wait_ms = max(self.learned_wait_ms, wait)

    def _end(self, now: float, *, early: bool, reason: EndReason | None = None) -> list[Action]:
        out: list[Action] = []
        for ev in self._endpointer.flush():
            if isinstance(ev, Utterance):
                out += self._utterance(ev, early=early, reason=reason)
        return out

    # ------------------------------------------------------------------ push-to-talk
    def set_mode(self, mode: Literal["handsfree", "ptt"]) -> None:
        """Hands-free, or push-to-talk (speech counts only while the button is held)."""
        self.mode = mode

    def set_ptt(self, down: bool, now: float) -> list[Action]:
        """The push-to-talk button: pressing interrupts the agent; letting go ends the turn."""
        self.ptt_down = down
        if down:
            self._drop_overlap()
            return [StopPlayback()]
        return self._end(now, early=False, reason="push-to-talk")

    # ------------------------------------------------------------------ the reply side
    def sent(self, now: float) -> list[Action]:
        """The turn's utterance is going to the agents: think."""
        self._asked = True  # only an awake person's turn is sent
        return self._set_state("thinking")

    def replied(self, now: float) -> list[Action]:
        """The agents have had their say on the utterance: the follow-up window opens."""
        self._follow_up(now)
        return []

    def dismissed(self, now: float) -> list[Action]:
        """The turn came to nothing (no words, or a stop command): listen again, with a wake
        word for ``follow_up_ms`` (the person woke the device for it; they may say it again)."""
        if self._wake:
            self._open_until = now + self.settings.follow_up_ms / 1000
        return self._set_state("listening")

    def playing(self, speaking: bool, now: float) -> list[Action]:
        """An agent's reply started or stopped playing. With a wake word, only the answer to
        a request opens the microphone; anything else (a greeting, a notice, an agent speaking
        later) plays to a sleeping session."""
        if self._wake and not self._asked:
            return []
        if speaking:
            self._open_until = math.inf
            self._echo_told = False
        else:
            self._drop_overlap()  # stopped by other means: the person's speech is a turn
            self._follow_up(now)
        return self._set_state("speaking" if speaking else "listening")

    def _follow_up(self, now: float) -> None:
        """After the answer to a request the person woke the device for, they may answer
        without the wake word for ``follow_up_ms``."""
        if self._wake and self._asked:
            self._open_until = now + self.settings.follow_up_ms / 1000

    # ------------------------------------------------------------------ wake word
    def set_wake(self, enabled: bool, now: float) -> list[Action]:
        """With a wake word the session sleeps until it is heard; without, it always listens."""
        self._wake = enabled
        if enabled:
            return self.sleep()
        self._open_until = math.inf
        return self._set_state("listening")

    def check_awake(self, now: float, *, busy: bool = False) -> list[Action]:
        """Fall asleep if the wake window has closed (the driver calls this per input)."""
        if self._wake and not self.awake(now, busy=busy) and self.state != "idle":
            return self.sleep()
        return []

    def sleep(self) -> list[Action]:
        """Back to waiting for the wake word: whatever was half-heard is forgotten."""
        self._open_until = 0.0
        self._asked = False
        stop = self._drop_overlap()
        self._reset()
        return [*stop, Sleep(), *self._set_state("idle")]

    def woke(self, now: float) -> list[Action]:
        """The wake word was heard: stop any reply, listen for ``wake_listen_ms``."""
        self._drop_overlap()
        self._reset()
        self._open_until = now + self.settings.wake_listen_ms / 1000
        return [StopPlayback(), *self._set_state("listening")]

    def _reset(self) -> None:
        self._offset += self._heard
        self._endpointer = self._new_endpointer()
        self._pause = None
        self._voiced_run = 0
        self._interrupting = False
        self._early_end = None  # speech after a sleep is a new request, not a resumed one
        self._last_turn = self._joined = None
        self._joined_told = False

    def _set_state(self, state: State) -> list[Action]:
        if state == self.state:
            return []
        self.state = state
        return [StateChanged(state)]
