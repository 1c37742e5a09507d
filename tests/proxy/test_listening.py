"""Listening (gateway/proxy/listening.py) driven by recorded VAD probabilities, recorded
transcripts and a fake clock: no model is loaded and nothing sleeps.

Each 32 ms chunk goes in as one input item with its own ``now``; the decodes and verdicts it
starts are let finish (``Listener.settled``) before the next, so a verdict arrives at the
silence where its decode started (no decode time): the turn then ends at the rule's wait.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from unittest.mock import ANY

import numpy as np
import pytest

from gateway.proxy.events import (
    OverlapJudged,
    ProxyEvent,
    SessionEvent,
    StateShown,
    StopAgent,
    TurnEnded,
    WakeWordHeard,
)
from gateway.proxy.listening import PRIME_TRIES, Listener, strip_wake_phrase
from gateway.proxy.overlap import READING_WORDS, OverlapSettings
from gateway.proxy.services import Services
from gateway.proxy.settings import SessionSettings
from gateway.proxy.timing import Timing
from gateway.proxy.turn_taker import TurnTaker
from gateway.voice.endpoint import Utterance
from gateway.voice.semantic import SemanticSettings
from gateway.voice.stt import Partial, TranscriberBusy, Transcript
from gateway.voice.vad import CHUNK_SAMPLES
from gateway.voice.wake import WakeDetection
from gateway.voice.words import Reading

CHUNK_S = CHUNK_SAMPLES / 16_000


class RecordedVad:
    """A VAD stream that gives back the recorded probability of each chunk in turn (and
    remembers the audio it was given, and its resets)."""

    def __init__(self, probabilities: list[float]) -> None:
        self.probabilities = list(probabilities)
        self.heard: list[np.ndarray] = []
        self.resets = 0

    def process(self, audio: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        self.heard.append(audio)
        chunks = [audio[i : i + CHUNK_SAMPLES] for i in range(0, len(audio), CHUNK_SAMPLES)]
        probs = [self.probabilities.pop(0) if self.probabilities else 0.0 for _ in chunks]
        return chunks, np.array(probs, np.float32)

    def reset(self) -> None:
        self.resets += 1


def transcript(text: str) -> Transcript:
    return Transcript(text, "en", (), 0.9, -0.1, (), "fitted", False, 1.0, 0.0)


@dataclass
class RecordedTranscriber:
    """Gives the recorded transcript of the speech heard so far (by its length in samples)."""

    said: list[tuple[int, str]]  # (samples of speech at least, text), shortest first
    pending: int = 0
    decodes: int = 0

    async def transcribe(self, audio: np.ndarray, *, speech_end_s: float = 0.0) -> Transcript:
        self.decodes += 1
        text = ""
        for samples, words in self.said:
            if speech_end_s * 16_000 >= samples:
                text = words
        return transcript(text)

    partial: str | None = None  # what a partial transcript says (None: the model is busy)

    beams: list[int] = field(default_factory=list)  # each partial's beam
    withins: list[tuple[str, ...]] = field(default_factory=list)  # each partial's ``within``
    nearest: Reading | None = None  # what a partial's reading in ``within`` is

    async def transcribe_partial(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        beam: int = 1,
        within: tuple[str, ...] = (),
    ) -> Partial:
        self.beams.append(beam)
        self.withins.append(within)
        if self.partial is None:
            raise TranscriberBusy("partials are not recorded")
        return Partial(self.partial, -0.2, self.nearest if within else None)


class Voice:
    """A prosody signal that always hears a finished (or unfinished) voice."""

    def __init__(self, p: float) -> None:
        self.p = p

    def score(self, audio: np.ndarray, voiced_end: int) -> float | None:
        return self.p


@dataclass
class Recorded:
    """A listener over recorded streams, and what it did: the session's sink (the events it
    sends) and its surroundings (what it asks) at once."""

    vad: RecordedVad
    transcriber: RecordedTranscriber
    now: float = 100.0
    events: list[ProxyEvent] = field(default_factory=list)
    turns: list[tuple[Utterance, Timing]] = field(default_factory=list)
    barge_ins: int = 0
    wake: object = None
    semantic: object = None
    agent_said: str | None = None
    agent_heard: str = ""  # what the person has heard of the reply being played
    second: RecordedTranscriber | None = None  # the second recogniser (None: none)
    feedback: object = None  # the feedback reader (None: none)
    ended: list[TurnEnded] = field(default_factory=list)
    listener: Listener = field(init=False)
    model_idle = True
    agent_audible = False
    busy = False

    def __post_init__(self) -> None:
        settings = SessionSettings()
        self.listener = Listener(
            settings,
            turns=TurnTaker(settings),
            vad=self.vad,
            transcriber=self.transcriber,  # type: ignore[arg-type]
            second_reader=self.second,  # type: ignore[arg-type]
            feedback_reader=self.feedback,  # type: ignore[arg-type]
            signals={"prosody": Voice(0.9)},
            sink=self,  # type: ignore[arg-type]
            around=self,  # type: ignore[arg-type]
            services=Services(clock=lambda: self.now, wakes=lambda name: self.wake),  # type: ignore[arg-type,return-value]
        )

    def emit(self, event: SessionEvent) -> None:
        if isinstance(event, TurnEnded):
            self.ended.append(event)
            self.turns.append((event.utterance, event.timing))
        elif isinstance(event, StopAgent):
            self.barge_ins += 1
        else:
            self.events.append(event)  # type: ignore[arg-type]

    async def chunks(self, n: int) -> None:
        """``n`` chunks of audio, each one input item at its own time."""
        for _ in range(n):
            await self.listener.hear(np.zeros(CHUNK_SAMPLES, np.int16), self.now, self.now)
            await self.listener.settled()
            self.now += CHUNK_S


def probabilities(*runs: tuple[float, int]) -> list[float]:
    return [p for p, n in runs for _ in range(n)]


SPEECH = 40  # chunks (1.28 s)
LEAD = 10


def recorded(text: str, *runs: tuple[float, int]) -> Recorded:
    speech = sum(n for p, n in runs if p > 0.5)
    return Recorded(
        RecordedVad(probabilities((0.0, LEAD), *runs)),
        RecordedTranscriber([(0, ""), (speech * CHUNK_SAMPLES - 2 * CHUNK_SAMPLES, text)]),
    )


async def test_a_finished_sentence_ends_the_turn_after_the_rules_short_wait() -> None:
    r = recorded("Turn on the lights in the kitchen.", (0.9, SPEECH), (0.0, 60))
    await r.chunks(LEAD + SPEECH)
    assert r.listener.turns.active and not r.turns
    await r.chunks(5)  # 160 ms of silence: under the 200 ms a finished sentence waits
    assert not r.turns
    await r.chunks(10)
    [(utt, timing)] = r.turns
    assert timing.end_reason == "finished" and timing.wait_ms == 200 and timing.early_end
    assert r.events == [StateShown("hearing")]  # "thinking" once uttering has sent it
    # Uttering is handed when the turn began (its start time) and no wake word to strip.
    [ended] = r.ended
    assert 100.0 <= ended.started < timing.last_voiced and ended.wake is None
    assert r.transcriber.decodes >= 1 and len(utt.audio) >= SPEECH * CHUNK_SAMPLES


async def test_unfinished_words_wait_longer_than_a_finished_sentence() -> None:
    r = recorded("Turn on the lights in the", (0.9, SPEECH), (0.0, 60))
    await r.chunks(LEAD + SPEECH + 20)  # 640 ms of silence: a finished one would have ended
    assert not r.turns and r.listener.turns.active
    await r.chunks(40)
    [(_, timing)] = r.turns
    assert timing.end_reason == "unfinished" and timing.wait_ms == 900


async def test_speech_resuming_in_the_pause_cancels_the_end_and_the_turn_goes_on() -> None:
    r = recorded(
        "Turn on the lights in the",
        (0.9, SPEECH),
        (0.0, 12),  # 384 ms: unfinished words wait 900 ms, so this pause does not end it
        (0.9, 20),
        (0.0, 60),
    )
    await r.chunks(LEAD + SPEECH + 12 + 20)
    assert not r.turns and r.listener.turns.active
    await r.chunks(60)
    [(utt, _)] = r.turns  # one utterance: both parts, the pause inside it
    assert len(utt.audio) >= (SPEECH + 12 + 20) * CHUNK_SAMPLES


class Detector:
    """A wake detector that hears the phrase in the item that ends at ``at`` samples."""

    name = "hey_jarvis"
    max_lookback = 16_000

    def __init__(self, at: int, phrase_end: int) -> None:
        self.at = at
        self.phrase_end = phrase_end
        self.heard = 0

    async def listen(self, audio: np.ndarray) -> list[WakeDetection]:
        before, self.heard = self.heard, self.heard + len(audio)
        if before < self.at <= self.heard:
            return [WakeDetection("hey_jarvis", self.phrase_end, self.heard, 0.9)]
        return []

    def reset(self) -> None:
        self.heard = 0


async def test_the_wake_word_opens_listening_from_just_after_the_phrase() -> None:
    r = Recorded(RecordedVad([]), RecordedTranscriber([]))
    # The phrase ends at chunk 20; it is detected at the end of chunk 24.
    r.wake = Detector(at=25 * CHUNK_SAMPLES, phrase_end=20 * CHUNK_SAMPLES)
    r.listener.set_wake("hey_jarvis", r.now)
    assert r.listener.turns.state == "idle"
    await r.chunks(24)
    assert r.vad.heard == [], "asleep: audio goes nowhere but the detector"
    await r.chunks(1)
    assert WakeWordHeard("hey_jarvis") in r.events and r.vad.resets >= 1
    # The look-back: the 5 chunks after the phrase reach the VAD, nothing from before.
    [after] = r.vad.heard
    assert len(after) == 5 * CHUNK_SAMPLES
    assert r.listener.turns.state == "listening"
    said = "Hey Jarvis, what time is it?"
    assert strip_wake_phrase(said, "hey_jarvis") == "what time is it?"
    assert strip_wake_phrase(said, None) == said, "no wake word: nothing is taken off"
    # With nothing said, listening falls asleep again after ``wake_listen_ms``.
    await r.chunks(SessionSettings().wake_listen_ms // 32 + 2)
    assert r.listener.turns.state == "idle"


async def test_push_to_talk_hears_only_while_held_and_letting_go_ends_the_turn() -> None:
    r = recorded("Turn on the lights in the", (0.9, SPEECH), (0.0, 60))
    r.listener.turns.set_mode("ptt")
    await r.chunks(LEAD)
    assert r.vad.heard == [], "not held: the audio goes nowhere"
    r.listener.set_ptt(True, r.now)
    await r.chunks(SPEECH + 3)
    assert not r.turns, "unfinished words, held: the turn goes on"
    r.listener.set_ptt(False, r.now)
    await r.listener.settled()
    [(_, timing)] = r.turns
    assert timing.end_reason == "push-to-talk"


class Semantic:
    """A semantic signal that says how sure it is and records what it was asked, in order."""

    settings = SemanticSettings()

    def __init__(self, p: float, busy: int = 0, typical_ms: float = 45.0) -> None:
        self.p = p
        self.typical_ms = typical_ms  # what a call takes these days
        self.late = 0
        self.busy = ["busy"] * busy  # the first primes find the model busy
        self.calls: list[tuple[object, ...]] = []

    def attempted(self, made: bool) -> None:
        self.late += not made

    def prime(self, context: str | None = None, words: str = "", *, key: object) -> str:
        self.calls.append(("prime", context, words, key))
        return self.busy.pop(0) if self.busy else "primed"

    def score(self, text: str, context: str | None = None, *, key: object = None) -> float:
        self.calls.append(("score", context, "", key))
        return self.p


async def test_the_agents_line_is_read_when_the_person_starts_and_their_pause_pays_for_words() -> (
    None
):
    """The semantic signal's prompt prefix (what the agent said last) is put in the person's
    slot as they start to speak, once; the pause's call then names the same person."""
    r = recorded("Paris.", (0.9, SPEECH), (0.0, 40))
    r.semantic, r.agent_said = Semantic(0.5), "Which city would you like to visit?"
    other = recorded("Rome.", (0.9, SPEECH), (0.0, 40))
    other.semantic, other.agent_said = r.semantic, "Where to?"
    await r.chunks(LEAD + 12)  # speech counts as started after its first 250 ms
    assert r.semantic.calls == [("prime", "Which city would you like to visit?", "", ANY)]
    await r.chunks(SPEECH - 12 + 30)
    await other.chunks(LEAD + SPEECH + 30)
    [(_, timing)] = r.turns
    assert timing.semantic == 0.5
    mine = [c for c in r.semantic.calls if c[1] != "Where to?"]
    theirs = [c for c in r.semantic.calls if c[1] == "Where to?"]
    assert [c[0] for c in mine][:2] == ["prime", "score"] and mine.count(mine[0]) == 1
    assert {c[3] for c in mine} == {mine[0][3]}, "one person, one key"
    assert theirs and {c[3] for c in theirs}.isdisjoint({mine[0][3]}), "another person's key"


async def test_no_prime_when_the_turn_rule_does_not_read_words() -> None:
    r = recorded("Paris.", (0.9, SPEECH), (0.0, 40))
    r.semantic = Semantic(0.5)
    r.listener.settings = replace(
        r.listener.settings, turn_rule=replace(r.listener.settings.turn_rule, semantic_low=None)
    )
    await r.chunks(LEAD + SPEECH + 40)
    assert r.turns and r.semantic.calls == []


async def test_a_prime_that_finds_the_model_busy_is_tried_again_while_the_person_speaks() -> None:
    r = recorded("Paris.", (0.9, SPEECH), (0.0, 40))
    r.semantic, r.agent_said = Semantic(0.5, busy=2), "Which city?"
    await r.chunks(LEAD + 12)
    assert [c[0] for c in r.semantic.calls] == ["prime"] * 3, "busy twice, then made"
    never = recorded("Paris.", (0.9, SPEECH), (0.0, 40))
    never.semantic = Semantic(0.5, busy=10)
    await never.chunks(LEAD + 12)
    assert [c[0] for c in never.semantic.calls] == ["prime"] * PRIME_TRIES, "bounded"


async def test_a_partial_transcript_is_read_ahead_but_its_last_word() -> None:
    """What the person has said so far (a partial transcript) goes into their slot too, without
    the word still being said: the pause's call then reads only the last few words."""
    r = recorded("Set a timer for ten minutes.", (0.9, 60), (0.0, 40))
    r.transcriber.partial = "Set a timer for te"
    r.semantic, r.agent_said = Semantic(0.5), "Anything else?"
    await r.chunks(LEAD + 60)
    primes = [c for c in r.semantic.calls if c[0] == "prime"]
    assert primes[0] == ("prime", "Anything else?", "", ANY), "the agent's line, at the start"
    assert ("prime", "Anything else?", "Set a timer for", primes[0][3]) in primes, primes


async def test_the_words_amend_the_verdict_in_time_and_never_hold_the_turn_past_it() -> None:
    """In real time the transcript and the voice decide at once; the words' score amends it
    when it comes before the turn ends ("Turn on the lights." that the words call unfinished
    waits the longer wait), and is not even asked for when the turn would end sooner than a
    call takes (a saturated machine: the turn goes as without the signal, at its own wait)."""
    said = "Turn on the lights."  # what the words signal (a fake here) calls unfinished
    amended = recorded(said, (0.9, SPEECH), (0.0, 80))
    amended.semantic = Semantic(0.001)  # clearly unfinished, and in time
    await amended.chunks(LEAD + SPEECH + 80)
    [(_, timing)] = amended.turns
    assert timing.end_reason == "semantic unfinished" and timing.wait_ms == 1500, timing
    late = recorded(said, (0.9, SPEECH), (0.0, 80))
    late.semantic = Semantic(0.001, typical_ms=400)  # a call would come after the 200 ms
    await late.chunks(LEAD + SPEECH + 80)
    [(_, timing)] = late.turns
    assert timing.end_reason == "finished" and timing.wait_ms == 200, timing
    assert [c[0] for c in late.semantic.calls] == ["prime"] and late.semantic.late >= 1


async def test_how_sure_the_overlaps_decode_was_reaches_the_turn_taker() -> None:
    """Speech over an audible agent is decoded and its words go to the turn-taker with
    Whisper's log-probability (the hum rule believes words it was sure of)."""
    r = recorded("", (0.9, 12), (0.0, 30))
    r.transcriber.partial = "Cohen."
    r.transcriber.nearest = Reading("Oh, cool.", 0.4)
    heard: list[tuple[str | None, float | None, Reading | None]] = []
    turns = r.listener.turns
    overlap_heard = turns.overlap_heard

    def spy(decode_id, text, voiced_ms, now, logprob=None, near=None, feedback=None, read_back=False):  # type: ignore[no-untyped-def]
        heard.append((text, logprob, near))
        return overlap_heard(decode_id, text, voiced_ms, now, logprob, near, feedback, read_back)

    turns.overlap_heard = spy  # type: ignore[method-assign]
    r.agent_audible = True
    r.listener.playing(True, r.now)
    await r.chunks(LEAD + 42)
    assert heard == [("Cohen.", -0.2, Reading("Oh, cool.", 0.4))], "with its backchannel reading"
    assert r.transcriber.beams == [OverlapSettings().beam], "with the overlap's beam"
    assert r.transcriber.withins == [READING_WORDS], "read in backchannels' words too"


class Reader:
    """A feedback reader that reads everything as feedback (or, ``p`` lower, as a request),
    and what it was asked."""

    def __init__(self, p: float = 0.97) -> None:
        self.asked: list[list[str]] = []
        self.p = p

    def score(self, words: list[str]) -> float:
        self.asked.append(list(words))
        return self.p


def _feedback_given(r: Recorded, read_backs: list[bool] | None = None) -> list[float | None]:
    """The feedback P the listener gives the turn-taker with each decode's words, as given
    (and into ``read_backs``, whether it said they read back the agent's)."""
    got: list[float | None] = []
    overlap_heard = r.listener.turns.overlap_heard

    def spy(decode_id, text, voiced_ms, now, logprob=None, near=None, feedback=None, read_back=False):  # type: ignore[no-untyped-def]
        got.append(feedback)
        if read_backs is not None:
            read_backs.append(read_back)
        return overlap_heard(decode_id, text, voiced_ms, now, logprob, near, feedback, read_back)

    r.listener.turns.overlap_heard = spy  # type: ignore[method-assign]
    return got


@pytest.mark.parametrize(
    ("said", "asked", "p"),
    [
        ("Uh-huh, been there myself.", [["been", "there", "myself"]], 0.97),
        ("Okay, I need a taxi.", [], None),  # a veto word: the reader is not asked
    ],
)
async def test_the_feedback_reader_reads_the_overlaps_words_off_the_loop(said, asked, p) -> None:
    """The words after the backchannel's go to the reader, and its P to the turn-taker with the
    decode's words; words a veto word is in never reach it."""
    r = recorded("", (0.9, 12), (0.0, 30))
    r.transcriber.partial = said
    r.feedback = reader = Reader()
    r.__post_init__()
    got = _feedback_given(r)
    r.agent_audible = True
    r.listener.playing(True, r.now)
    await r.chunks(LEAD + 42)
    # (a second reading follows it here: none is loaded, and it answers without words)
    assert reader.asked == asked and got[0] == p, (reader.asked, got)


@pytest.mark.parametrize(
    ("heard", "read_back"),
    [
        ("Turn left just past the petrol station and", True),
        ("Turn left just past the fire station and", False),  # "petrol" is the person's own
        ("", False),  # nothing heard yet
    ],
)
async def test_words_that_read_back_what_the_agent_said_are_feedback_unread(heard, read_back):
    """The words after the backchannel's all said by the agent just before (its words heard so
    far, from the session) are a listener's read-back: feedback, read so by both recognisers'
    words, and the reader is not asked; one word of the person's own and the reader reads
    them."""
    said = "Okay, past the petrol station."
    r = recorded("", (0.9, 12), (0.0, 30))
    r.second = RecordedTranscriber([], partial=said)
    r.feedback = reader = Reader(p=0.3)  # the reader alone would not let it go
    r.agent_heard = heard
    r.__post_init__()
    r.transcriber.partial = said
    marked: list[bool] = []
    got = _feedback_given(r, marked)
    r.agent_audible = True
    r.listener.playing(True, r.now)
    await r.chunks(LEAD + 60)
    if read_back:
        assert reader.asked == [] and got and set(got) == {1.0}, (reader.asked, got)
        assert marked and all(marked), "the turn-taker is told it is a read-back"
    else:
        assert reader.asked[0] == ["past", "the", "petrol", "station"] and got[0] == 0.3
        assert not any(marked)
    [judged] = [e for e in r.events if isinstance(e, OverlapJudged)]
    kind = "backchannel" if read_back else "interruption"
    assert (judged.decision.kind, judged.decision.why == "read back") == (kind, read_back)


async def test_words_that_would_stop_the_agent_are_read_again_by_the_second_recogniser() -> None:
    """Speech over an audible agent that the first recogniser heard as a request ("In my gym,
    so it's blood.") is read again by the second, with the overlap's prompt and beam; heard as
    a backchannel, the agent goes on. With no second recogniser, or one busy, the words stop
    it."""

    async def overlap(second: RecordedTranscriber | None) -> Recorded:
        r = recorded("", (0.9, 15), (0.0, 40))  # decoded once, when the person paused
        r.second = second
        r.__post_init__()  # the listener again, with the second recogniser
        r.transcriber.partial = "In my gym, so it's blood."
        r.agent_audible = True
        r.listener.playing(True, r.now)
        await r.chunks(LEAD + 60)
        return r

    again = RecordedTranscriber([], partial="Mm-hmm, sounds good.")
    r = await overlap(again)
    [judged] = [e for e in r.events if isinstance(e, OverlapJudged)]
    assert (judged.decision.kind, judged.decision.why) == ("backchannel", "second reader")
    assert r.barge_ins == 0
    assert again.beams == [OverlapSettings().beam] and again.withins == [()]
    for second in (None, RecordedTranscriber([], partial=None)):  # none; busy
        r = await overlap(second)
        [judged] = [e for e in r.events if isinstance(e, OverlapJudged)]
        assert (judged.decision.kind, judged.decision.why) == ("interruption", "words")
        assert r.barge_ins == 1
