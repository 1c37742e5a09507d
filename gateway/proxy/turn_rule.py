"""The turn rule, sans I/O: how a :class:`Verdict` of the end-of-turn signals at one pause
becomes the silence to wait before the person's turn ends (:class:`TurnRule`), and why
(:data:`EndReason`). The turn-taker (gateway/proxy/turn_taker.py) applies it at each pause; the
words are read by gateway/proxy/sentences.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from gateway.proxy.sentences import looks_final, marked_final, said_words, unpunctuated_final

# ---------------------------------------------------------------------------------- verdicts


@dataclass(frozen=True)
class Verdict:
    """What the end-of-turn signals said at one pause.

    Attributes:
        text: the speculative transcript of the utterance so far (None: the decode failed).
        scores: each signal's probability that the turn is finished, by signal name: the
            audio signals (``prosody``, ``smart_turn``) and the semantic signal read from
            ``text`` (``semantic``, :mod:`gateway.voice.semantic`); a signal that could not
            judge (or did not answer in time) is left out.
    """

    text: str | None
    scores: Mapping[str, float] = field(default_factory=dict)


#: Why a turn ended, as :attr:`EndTurn.reason` and the session's timings say:
#: ``finished`` (the words and the voice both said so: the short pause), ``doubt`` (finished
#: words, a voice that doubts it: a longer wait), ``unfinished`` (the words do not read as
#: finished), ``unpunctuated`` (finished words but for the final mark, a finished-sounding
#: voice), ``one word`` (a finished-sounding one-word answer), ``end silence`` (no verdict
#: in time, or none wanted: the plain end silence or the rule's bound), ``push-to-talk``
#: (the button was let go), ``too long`` (the utterance reached its maximum length). The
#: semantic signal decided: ``semantic finished`` (the words are clearly a finished request:
#: sooner than the audio signals alone would have ended it), ``semantic unfinished`` (the words
#: are clearly unfinished: a longer wait than the transcript rule's), ``semantic unsure`` (the
#: words are neither, and the voice not very sure: the unfinished words' wait).
EndReason = Literal[
    "finished",
    "semantic finished",
    "semantic unfinished",
    "semantic unsure",
    "doubt",
    "unfinished",
    "unpunctuated",
    "one word",
    "end silence",
    "push-to-talk",
    "too long",
]


@dataclass(frozen=True)
class Decision:
    """What a :class:`TurnRule` made of a verdict: the silence to wait, and why."""

    wait_ms: int
    reason: EndReason


@dataclass(frozen=True)
class TurnRule:
    """How a :class:`Verdict` becomes the silence to wait before ending the turn.

    The transcript rule is the gate: a transcript that does not read as a finished sentence
    of ``min_words`` words waits ``unfinished_ms``. Past it, the audio signals named in
    ``signals`` are averaged into P(finished); the wait grows linearly from ``pause_ms`` (at
    P >= ``confident``) to ``doubt_ms`` (at P <= ``doubtful``). A question ("?") is not held
    back by a rising pitch — the prosody score is ignored for it.

    Attributes:
        signals: audio signals consulted (empty: the transcript alone, today's rule).
        pause_ms: the wait when everything says "finished".
        doubt_ms: the wait when the audio says "not finished" but the words do.
        unfinished_ms: the wait when the words do not read as finished.
        max_wait_ms: no turn waits longer than this silence (the endpointer's end silence
            while a verdict is awaited).
        end_silence_ms: the plain end silence: the wait when no verdict decides it (early
            ends off, or a failed decode), and the line between an early end
            and a plain one. The turn rule owns every silence of a session: the endpointer's
            ``end_silence_ms`` is set from this and ``max_wait_ms``.
        confident: P(finished) at or above which the wait is ``pause_ms``.
        doubtful: P(finished) at or below which the wait is ``doubt_ms``.
        min_words: words a transcript needs to end a turn early.
        one_word_ms: the wait for a finished-looking answer shorter than ``min_words`` ("Yes.")
            when the audio signals are confident it is finished (None: ``unfinished_ms``).
            Whisper punctuates fragments too, so one word alone is not trusted.
        unpunctuated_ms: the wait for words that read as a finished sentence but for the
            final punctuation (:func:`unpunctuated_final`) when the audio signals are confident
            it is finished (None, or no signal: ``unfinished_ms``). Off by default, measured:
            on the benchmark Whisper left the period off one complete request in 30 ("Open the
            garage door", prosody 0.65: 900 ms waited), but also off an espeak "Turn on the
            light" paused mid-sentence whose voice sounded finished, which at 400 ms was cut
            off. Whisper leaving the period off is itself a sign it heard no ending.
        gap_ms: no audio at all for this long, mid-turn, counts as silence (the client
            stopped sending: a muted microphone, a stalled connection). Clients send a frame
            every 20 ms; a shorter stall is waited for like late audio, since counting it as
            silence would put a pause into the person's speech.
        learn_pauses: when a turn ended early and the person went on speaking within
            ``unfinished_ms`` of their last word, they were cut off mid-sentence: for the rest of
            the session no turn ends at a shorter silence than that pause (plus one VAD chunk;
            at most ``unfinished_ms``). The request already sent cannot be taken back (OFP has
            no way to), but the same person is not cut off the same way again.
        semantic_low, semantic_high, semantic_pause_ms, semantic_wait_ms, semantic_over_voice:
            the semantic signal (None ``semantic_low``: not consulted); see :meth:`decide`.
        semantic_question: a question's prosody is ignored (a rising pitch ends it) only when
            the semantic signal scores it at least this; below, the voice judges it like any
            sentence (Whisper drops a dangling word and adds "?": "Can you find me a cheap
            hotel in |" came back "Can you find me a cheap hotel?", 0.036). The tuning set's
            whole questions scored 0.28-0.87: any value up to 0.28 leaves them alone.
        semantic_unpunctuated_ms: the wait for a bare transcript (no final mark, but
            :func:`unpunctuated_final`) whose words are sure (``semantic_high``) and whose voice
            is very sure (``semantic_voice``), instead of ``unfinished_ms`` (None: off).
        semantic_voice: the audio signals' P(finished) that ``semantic_unpunctuated_ms`` needs,
            and that unsure words need to end at the older rule's wait (``semantic_unsure_ms``).
            Chosen on the tuning set: its mid-sentence pauses with sure bare words sounded
            finished at most 0.63, its whole bare sentences 0.97-0.98 (0.6 cut 1-3 of 60).
        semantic_unsure_ms: the least wait for words the semantic signal is unsure of (between
            ``semantic_low`` and ``semantic_high``) unless the voice is very sure
            (``semantic_voice``) — the mirror of ``semantic_unpunctuated_ms``: when the words or
            the voice are unsure, the other must be very sure (None: unsure words are left to
            the transcript and the voice).
    """

    signals: tuple[str, ...] = ()
    pause_ms: int = 200
    doubt_ms: int = 700
    unfinished_ms: int = 700
    max_wait_ms: int = 700
    end_silence_ms: int = 700
    confident: float = 0.5
    doubtful: float = 0.5
    min_words: int = 2
    one_word_ms: int | None = None
    unpunctuated_ms: int | None = None
    gap_ms: int = 500
    learn_pauses: bool = True
    semantic_low: float | None = None
    semantic_high: float = 1.0
    semantic_pause_ms: int = 200
    semantic_wait_ms: int = 1500
    semantic_over_voice: bool = False
    semantic_question: float = 0.1
    semantic_unpunctuated_ms: int | None = 400
    semantic_voice: float = 0.9
    semantic_unsure_ms: int | None = None

    def __post_init__(self) -> None:
        if not 0 < self.pause_ms <= min(self.doubt_ms, self.unfinished_ms):
            raise ValueError("need 0 < pause_ms <= doubt_ms, unfinished_ms")
        if max(self.doubt_ms, self.unfinished_ms, self.end_silence_ms) > self.max_wait_ms:
            raise ValueError("need doubt_ms, unfinished_ms, end_silence_ms <= max_wait_ms")
        if not 0.0 <= self.doubtful <= self.confident <= 1.0:
            raise ValueError("need 0 <= doubtful <= confident <= 1")
        if self.semantic_low is not None:
            if not 0.0 <= self.semantic_low <= self.semantic_high <= 1.0:
                raise ValueError("need 0 <= semantic_low <= semantic_high <= 1")
            if not (self.semantic_pause_ms > 0 and self.semantic_wait_ms <= self.max_wait_ms):
                raise ValueError("need 0 < semantic_pause_ms, semantic_wait_ms <= max_wait_ms")
            if not (0.0 <= self.semantic_question <= 1.0 and 0.0 <= self.semantic_voice <= 1.0):
                raise ValueError("need semantic_question and semantic_voice within 0..1")
            if self.semantic_unpunctuated_ms is not None and not (
                self.semantic_pause_ms <= self.semantic_unpunctuated_ms <= self.max_wait_ms
            ):
                raise ValueError(
                    "need semantic_pause_ms <= semantic_unpunctuated_ms <= max_wait_ms"
                )
            if self.semantic_unsure_ms is not None and not (
                0 < self.semantic_unsure_ms <= self.max_wait_ms
            ):
                raise ValueError("need 0 < semantic_unsure_ms <= max_wait_ms")

    @property
    def semantic(self) -> bool:
        """Whether this rule consults the semantic signal (the session runs it only then)."""
        return self.semantic_low is not None

    def finished(self, verdict: Verdict) -> float | None:
        """P(finished) from the audio signals this rule consults (None: none of them judged)."""
        text = (verdict.text or "").strip()
        question = text.endswith("?")
        if question and self.semantic_low is not None:
            # A rising pitch ends a question, so the prosody is not asked about one — unless
            # the words are not clearly finished either: "Can you find me a cheap hotel in |
            # Rome" came back "Can you find me a cheap hotel?" (the dangling "in" dropped),
            # scored 0.036 and sounded unfinished (0.39); the tuning set's whole questions
            # scored 0.28-0.87, its cut ones <= 0.002.
            s = verdict.scores.get("semantic")
            question = s is None or s >= self.semantic_question
        names = [n for n in self.signals if not (n == "prosody" and question)]
        scores = [verdict.scores[n] for n in names if n in verdict.scores]
        return sum(scores) / len(scores) if scores else None

    def wait_ms(self, verdict: Verdict) -> int:
        """Silence after the last voiced chunk at which the turn ends."""
        return self.decide(verdict).wait_ms

    def decide(self, verdict: Verdict) -> Decision:
        """The silence to wait after the last voiced chunk, and why: the transcript and audio
        signals' decision, which the semantic signal lengthens when the words are clearly
        unfinished and shortens when they are clearly finished."""
        base = self._decide(verdict)
        s = verdict.scores.get("semantic") if self.semantic_low is not None else None
        if s is None or verdict.text is None or len(said_words(verdict.text)) < self.min_words:
            # One word alone is no sentence for the model either: "stop" scored 0.0000 (it
            # expects "stop the music"), "no" 0.02 — the one-word rule decides.
            return base
        if s <= (self.semantic_low or 0.0):
            if base.wait_ms < self.semantic_wait_ms:
                return Decision(self.semantic_wait_ms, "semantic unfinished")
            return base
        # Sure words stand in for the transcript rule's word list when Whisper ended the text
        # with a final mark, whatever its last word ("What are you looking at?"). Not without
        # one: Whisper leaving the mark off is itself a sign it heard no ending — an espeak
        # "turn on the light | in the kitchen please" came back bare, scored 0.057, sounded
        # finished, and was cut at the pause (the reason ``unpunctuated_ms`` is off).
        reads_final = marked_final(verdict.text, min_words=self.min_words)
        if s < self.semantic_high:
            # Words the model is unsure of end the turn only with a voice that is very sure:
            # the held-out pipeline heard "Text Maria that I am running | ten minutes late" as
            # "…running." at the pause (P 0.0072, a voice at 0.72) and ended the turn at 200 ms
            # at every pause length. The tuning set's one unsure whole sentence ("Set the
            # temperature to 20 degrees.", 0.012) sounded finished at 0.93.
            p = self.finished(verdict)
            if (
                self.semantic_unsure_ms is not None
                and base.wait_ms < self.semantic_unsure_ms
                and (p is None or p < self.semantic_voice)
            ):
                return Decision(self.semantic_unsure_ms, "semantic unsure")
            return base
        if not reads_final:
            # ...unless the voice is very sure too: on the tuning set "Tell me a joke" (0.15)
            # and "cancel my alarm" (0.07) came back bare from espeak voices whose prosody
            # scored 0.97-0.98 and waited the 900 ms of unfinished words, while the bare
            # mid-sentence pauses with sure words sounded finished at most 0.63 ("Call my
            # mother" | because...). Sure words, a voice that sure, and a transcript that
            # reads as finished but for its mark wait ``semantic_unpunctuated_ms``.
            p = self.finished(verdict)
            if (
                self.semantic_unpunctuated_ms is not None
                and p is not None
                and p >= self.semantic_voice
                and unpunctuated_final(verdict.text, min_words=self.min_words)
                and self.semantic_unpunctuated_ms < base.wait_ms
            ):
                return Decision(self.semantic_unpunctuated_ms, "semantic finished")
            return base
        # Sure words stand in for the transcript rule; the voice still judges (a complete
        # "Turn on the light" said with a voice that goes on is not ended), unless the rule
        # lets the words overrule it.
        p = None if self.semantic_over_voice else self.finished(verdict)
        wait = self._voice_wait(p, self.semantic_pause_ms)
        if wait < base.wait_ms:
            return Decision(wait, "semantic finished")
        return base

    def _voice_wait(self, p: float | None, pause_ms: int) -> int:
        """The wait for words that read as finished, by the audio signals' P(finished): from
        ``pause_ms`` (confident, or no signal) up to ``doubt_ms`` (doubtful)."""
        if p is None or p >= self.confident:
            return pause_ms
        if p <= self.doubtful:
            return max(pause_ms, self.doubt_ms)
        doubt = (self.confident - p) / (self.confident - self.doubtful)
        return round(pause_ms + doubt * (max(pause_ms, self.doubt_ms) - pause_ms))

    def _decide(self, verdict: Verdict) -> Decision:
        """The transcript rule and the audio signals' decision (without the semantic signal)."""
        if verdict.text is None:
            return Decision(self.unfinished_ms, "unfinished")
        p = self.finished(verdict)
        if not looks_final(verdict.text):
            if (
                self.unpunctuated_ms is not None
                and p is not None
                and p >= self.confident
                and unpunctuated_final(verdict.text, min_words=self.min_words)
            ):
                return Decision(min(self.unpunctuated_ms, self.unfinished_ms), "unpunctuated")
            return Decision(self.unfinished_ms, "unfinished")
        if not looks_final(verdict.text, min_words=self.min_words):
            if self.one_word_ms is not None and p is not None and p >= self.confident:
                return Decision(self.one_word_ms, "one word")
            return Decision(self.unfinished_ms, "unfinished")
        if p is None or p >= self.confident:
            return Decision(self.pause_ms, "finished")
        return Decision(self._voice_wait(p, self.pause_ms), "doubt")
