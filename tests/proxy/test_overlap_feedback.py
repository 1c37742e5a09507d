"""The feedback reader's part in deciding speech over an agent, sans I/O: recorded words, the
reader's answer given as a number, VAD chunks and a fake clock; no model (the reader itself:
tests/voice/test_feedback.py; a live session: tests/server/test_overlap_feedback_live.py)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import read_wav
from gateway.proxy.overlap import (
    FEEDBACK_WORDS,
    Overlap,
    OverlapDecode,
    OverlapSettings,
    feedback_words,
)
from gateway.proxy.settings import SessionSettings, without_feedback
from gateway.proxy.turn_taker import StartOverlapDecode, TurnTaker
from gateway.testing.overlap_replay import replay
from gateway.voice.stt import Partial
from tests.proxy.test_overlap import decided, feed

S = OverlapSettings()


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Uh-huh, been there myself.", ["been", "there", "myself"]),
        ("Right, fair play.", ["fair", "play"]),
        ("Mm-hmm, yeah, the old classic.", ["the", "old", "classic"]),
    ],
)
def test_the_words_after_a_backchannels_are_read(text, words):
    """What follows the backchannel is the question (read with it, a short request's
    embedding was the backchannel's: "Mm-hmm, skip this." read as feedback)."""
    assert feedback_words(text) == words


@pytest.mark.parametrize(
    "text",
    [
        "Okay, I need a taxi.",  # wanting
        "Yeah, I'd love a coffee.",  # wanting, said as liking
        "Mm, tell me the score.",  # addressing the agent
        "Yeah, what about Friday.",  # asking, however punctuated
        "Okay, so how long does it take.",  # "how" before what follows a question's word
        "Mm, and then what.",  # ...or last
        "Okay, which one.",  # which asks wherever it is
        "Okay, recap the last three.",  # telling the agent what to do
        "Alright, just book the cheapest one.",  # telling, after "just"
        "Yeah, we're a group of eight.",  # the person and theirs
        "Okay, no onions.",  # "no" before what is refused
        "Yeah, that's what you said.",  # "what" in context, but "said" corrects
        "Okay, is it far?",  # a question mark
        "Okay, that's the wrong city.",  # correcting
        "Right, stop there.",  # a stop word
        "Oh, that's not it.",  # refusing
        "Yeah, keep that.",  # telling the agent what to do ("skip that" misread)
        "Oh, it's still blinking.",  # trouble that goes on
        "Yeah, and then?",  # going on
        "Uh-huh, okay.",  # backchannels alone: the rules read those
        "Mm-hmm, load.",  # one word after: where Whisper guesses ("Mm, no.")
        "Oh, God.",
        "Right, I know the feeling.",  # so is a comment they know
        "Sunny weather today.",  # no backchannel's word first
        "Okay, " + "really " * FEEDBACK_WORDS + "nice.",  # too long for a listener
        "",
        None,
    ],
)
def test_words_no_guess_may_let_go_are_not_read(text):
    assert feedback_words(text) is None


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Yeah, that's what I figured.", ["that's", "what", "i", "figured"]),
        ("Right, that's about what I was expecting.", ["that's", "about", "what", "i", "was", "expecting"]),
        ("Right, about what I expected.", ["about", "what", "i", "expected"]),
        ("Oh, what a mess.", ["what", "a", "mess"]),
        ("Yeah, no surprise there.", ["no", "surprise", "there"]),
        ("Mm, can't argue with that.", ["can't", "argue", "with", "that"]),
        ("Uh-huh, me too, honestly.", ["me", "too", "honestly"]),
    ],
)
def test_words_a_listener_s_feedback_holds_as_often_are_read_in_context(text, words):
    """"what", "how", "you", "no"... veto nothing alone: a listener says "that's what I
    figured" and "no surprise there"; the reader reads them in their words."""
    assert feedback_words(text) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("Oh, that's not bad at all.", ["that's", "not", "bad", "at", "all"]),
        ("Right, not too bad.", ["not", "too", "bad"]),
        ("Uh-huh, better safe than sorry.", ["better", "safe", "than", "sorry"]),
        ("Okay, easy enough so far.", ["easy", "enough", "so", "far"]),
        ("Yeah, I'd have guessed that.", ["i'd", "have", "guessed", "that"]),
        ("Oh, that's music to my ears.", ["that's", "music", "to", "my", "ears"]),
    ],
)
def test_a_veto_word_in_a_listener_s_idiom_is_read(text, words):
    """A listener's fixed expressions hold words that refuse, complain or want elsewhere ("not
    bad", "better safe than sorry", "easy enough"): heard right on replay, they were vetoed."""
    assert feedback_words(text) == words


@pytest.mark.parametrize(
    "text",
    [
        "Okay, not that one.",  # "not" refuses
        "Right, not so fast.",  # ...unless "not (so) bad"
        "Okay, that's enough.",  # "enough" after no word of an idiom
        "Yeah, I have to go.",  # "have" wants, not after a modal
        "Mm, my usual playlist.",  # "my" before no word of an idiom
        "Oh, I'm so sorry.",  # "sorry" after no "than"
    ],
)
def test_the_same_words_out_of_the_idioms_still_veto(text):
    assert feedback_words(text) is None


def test_the_second_recogniser_s_reading_may_leave_the_backchannel_out():
    """tiny.en wrote "That's what I figured." where base wrote "Yeah, that's what I
    figured." (all six voices of the thirty-fourth held-out set): the first heard the
    backchannel begin it, so the second's words are read without it."""
    assert feedback_words("That's what I figured.") is None
    assert feedback_words("That's what I figured.", opened=False) == ["that's", "what", "i", "figured"]
    steps = said_over("Yeah, that's what I figured.", 0.99, 1000, second="That's what I figured.")
    assert (decided(steps).kind, decided(steps).why) == ("backchannel", "feedback")
    asks = said_over("Yeah, that's what I figured.", 0.99, 1000, second="What did I figure?")
    assert decided(asks).kind == "interruption"


def said_over(
    text: str,
    feedback: float | None,
    voice_ms: int,
    settings: OverlapSettings = S,
    second: str | None = None,
    second_feedback: float | None = -1.0,
    read_back: bool = False,
) -> list:
    """``voice_ms`` of voice then silence, every decode answered at once with ``text`` (the
    second recogniser's with ``second``, by default the same) and the reader's ``feedback``
    (the second's words' ``second_feedback``, by default the same); the first recogniser's
    words marked ``read_back`` (the driver found them in what the agent said); every step the
    overlap took."""
    o = Overlap(settings, 0.0, voiced_ms=96)
    out: list = []
    now = 0.0

    def answer(steps: list) -> None:
        for step in steps:
            out.append(step)
            if isinstance(step, OverlapDecode):
                read = second_feedback if step.second and second_feedback != -1.0 else feedback
                p = read if step.feedback else None
                words = (second or text) if step.second else text
                back = read_back and not step.second and p is not None
                answer([o.heard(step.id, words, step.voiced_ms, now, -0.4, None, p, back)])

    for _ in range((voice_ms - 96) // 32):
        steps, now = feed(o, 32, True, now)
        answer(steps)
    for _ in range(settings.words_end_ms // 32 + 4):
        steps, now = feed(o, 32, False, now)
        answer(steps)
    return [s for s in out if s is not None]


def test_a_comment_the_reader_reads_as_feedback_lets_the_agent_go_on():
    d = decided(said_over("Uh-huh, been there myself.", 0.97, 1000))
    assert (d.kind, d.why) == ("backchannel", "feedback")


def test_the_second_recogniser_is_asked_and_must_write_the_same_words():
    """The reader reads words, not the voice: Whisper's misreading of a request can be a
    comment's words; two recognisers seldom misread a voice alike."""
    steps = said_over("Uh-huh, been there myself.", 0.97, 1000)
    assert any(isinstance(s, OverlapDecode) and s.second for s in steps)
    assert decided(steps).why == "feedback"
    same = said_over("Uh-huh, been there myself.", 0.97, 1000, second="Uh huh. Been there, myself!")
    assert decided(same).why == "feedback", "the same words, however written"
    other = said_over("Right, I'm much as it.", 0.97, 1000, second="Right, how much is it?")
    assert decided(other).kind == "interruption"
    other = said_over(
        "Uh-huh, been there myself.",
        0.97,
        1000,
        second="Uh-huh, bring the mouse.",
        second_feedback=0.1,
    )
    assert decided(other).kind == "interruption"
    alone = said_over("Uh-huh, been there myself.", 0.97, 1000, replace(S, second_sure=None))
    assert decided(alone).why == "feedback", "no second recogniser: the reader alone"


def test_a_read_back_decides_without_waiting_for_a_second_reading():
    """Words that repeat what the agent said ("Okay, between two and four." over "...due on
    Thursday between 2pm and 4pm.") are feedback at once: waiting for the second recogniser
    ran five such read-backs of the fortieth to forty-second sets into the decision's bound
    (``max_decide_ms``), and stopped the agent. The same words at the same P, not a read-back,
    still wait for the second reading and must agree with it."""
    back = said_over("Okay, between two and four.", 1.0, 1200, read_back=True)
    assert (decided(back).kind, decided(back).why) == ("backchannel", "read back")
    assert not any(isinstance(s, OverlapDecode) and s.second for s in back), "not read again"
    unread = said_over(
        "Okay, between two and four.", 1.0, 1200, second="Okay, can we do four?", read_back=False
    )
    assert any(isinstance(s, OverlapDecode) and s.second for s in unread)
    assert decided(unread).kind == "interruption"


def test_the_second_recogniser_s_words_read_as_feedback_decide_when_no_reading_has_a_veto_word():
    """tiny.en misreads voices Whisper base reads right ("Oh, I love that play." for "Oh, I
    love that place."): the second recogniser's words, read as feedback, let the agent go on;
    a veto word in either reading stops it, and so do words the reader does not read so."""
    misread = said_over(
        "Oh, I love that play.", 0.3, 1000, second="Oh, I love that place.", second_feedback=0.98
    )
    assert (decided(misread).kind, decided(misread).why) == ("backchannel", "feedback")
    asks = [s for s in misread if isinstance(s, OverlapDecode) and s.second]
    assert asks and all(s.feedback for s in asks), "the second's words are read too"
    veto_first = said_over(
        "Oh, I love that, please.", 0.3, 1000, second="Oh, I love that place.", second_feedback=0.98
    )
    assert decided(veto_first).kind == "interruption"
    veto_second = said_over(
        "Oh, I love that play.", 0.3, 1000, second="Oh, I want that place.", second_feedback=0.98
    )
    assert decided(veto_second).kind == "interruption"
    unread = said_over(
        "Oh, I love that play.", 0.3, 1000, second="Oh, I love that place.", second_feedback=0.5
    )
    assert decided(unread).kind == "interruption"
    alone = said_over("Oh, I love that play.", 0.3, 1000, replace(S, second_sure=None))
    assert decided(alone).kind == "interruption", "no second recogniser: the first's reading"


def _said_after(
    first: str,
    then: str,
    feedback: float,
    second: str | None = None,
    second_feedback: float | None = None,
) -> list:
    """The first decode hears ``first``; every later one hears ``then``, read at ``feedback``
    when the reader is asked (as a driver: only for the words :func:`feedback_words` gives,
    read without the backchannel when ``begun``); the second recogniser's, ``second`` at
    ``second_feedback`` (by default the same)."""
    o = Overlap(S, 0.0, voiced_ms=96)
    now = 0.0
    out: list = []
    heard_first = False
    for i in range(90):
        more, now = feed(o, 32, i < 25, now)
        out += more
        for step in [s for s in more if isinstance(s, OverlapDecode)]:
            text = then if heard_first else first
            read = feedback
            if step.second and second is not None:
                text, read = second, feedback if second_feedback is None else second_feedback
            heard_first = True
            words = feedback_words(text, opened=not step.begun) if step.feedback else None
            p = read if words is not None else None
            out.append(o.heard(step.id, text, step.voiced_ms, now, -0.4, None, p))
    return [s for s in out if s is not None]


def test_a_backchannel_heard_first_and_left_out_of_the_whole_still_opens_it():
    """Whisper's decode of all the voice left "Right," out ("So it's a prequel.", most voices
    of the thirty-sixth held-out set, live); the first decode had heard it."""
    steps = _said_after("Right.", "So it's a prequel.", 0.99)
    assert (decided(steps).kind, decided(steps).why) == ("backchannel", "feedback")
    later = [s for s in steps if isinstance(s, OverlapDecode)][1:]
    assert later and all(s.begun for s in later)
    never = _said_after("So it's", "So it's a prequel.", 0.99)
    assert decided(never).kind == "interruption", "no backchannel's word heard: not read"
    vetoed_words = _said_after("Right.", "So what's a prequel?", 0.99)
    assert decided(vetoed_words).kind == "interruption"
    # Whisper's first decode of an onset is often "Okay." whatever follows: without the
    # backchannel's word of their own, the first's words must be read as feedback too.
    misread = _said_after("Okay.", "Hey, listen.", 0.3, "High, listen.", 0.98)
    assert decided(misread).kind == "interruption"
    both = _said_after("Right.", "So it's a prequel.", 0.99, "It's a prequel.", 0.98)
    assert decided(both).why == "feedback"


def _joined(text: str, feedback: float, joined_ms: int) -> list:
    """An overlap judged with the backchannel just before (``joined_ms`` of its voice; 0: none)
    then 900 ms more voice and silence, every decode hearing ``text`` (read at ``feedback``
    when the reader is asked, as a driver reads it)."""
    o = Overlap(S, 0.0, voiced_ms=joined_ms + 96, joined_ms=joined_ms)
    now, out = 0.0, []
    for i in range(60):
        more, now = feed(o, 32, i < 28, now)
        out += more
        for step in [s for s in more if isinstance(s, OverlapDecode)]:
            words = feedback_words(text, opened=not step.begun) if step.feedback else None
            p = feedback if words is not None else None
            out.append(o.heard(step.id, text, step.voiced_ms, now, -0.4, None, p))
    return [s for s in out if s is not None]


def test_a_backchannel_decided_just_before_opens_the_words_judged_with_it():
    """"Oh, | older than I thought.": the backchannel decided, the voice after it judged
    with it (``join_ms``), and Whisper's decode of all of it left "Oh," out in most voices
    of the thirty-eighth held-out set (live): the person began with it all the same."""
    steps = _joined("Older than I thought.", 0.95, 320)
    assert (decided(steps).kind, decided(steps).why) == ("backchannel", "feedback")
    assert all(s.begun for s in steps if isinstance(s, OverlapDecode))
    alone = _joined("Older than I thought.", 0.95, 0)
    assert decided(alone).kind == "interruption", "no backchannel before: not read"
    told = _joined("Tell me the weather on Sunday.", 0.95, 320)
    assert decided(told).kind == "interruption", "a veto word still stops it"


def test_a_listener_summing_up_after_so_is_read():
    """"So" after a backchannel's word goes on for the rules ("Okay, so what?"); a listener
    sums up with it too ("Right, so it's a prequel."): the reader reads it in context, and a
    verb that tells the agent what to do after it still stops."""
    d = decided(said_over("Right, so it's a prequel.", 0.99, 1000))
    assert (d.kind, d.why) == ("backchannel", "feedback")
    assert decided(said_over("Right, so it's a prequel.", 0.5, 1000)).kind == "interruption"
    assert feedback_words("Okay, so skip that.") is None
    assert decided(said_over("Okay, so skip that.", 0.99, 1000)).kind == "interruption"


def test_a_question_heard_in_any_decode_is_no_feedback():
    o = Overlap(S, 0.0, voiced_ms=96)
    now = 0.0
    steps, now = feed(o, 640 - 96, True, now)
    [ask] = [s for s in steps if isinstance(s, OverlapDecode)]
    o.heard(ask.id, "Right, how much", ask.voiced_ms, now, -0.4, None, None)
    out: list = []
    for _ in range(20):
        more, now = feed(o, 32, len(out) < 10, now)
        out += more
        for step in [s for s in more if isinstance(s, OverlapDecode)]:
            text = "Uh-huh, been there myself."
            out.append(o.heard(step.id, text, step.voiced_ms, now, -0.4, None, 0.99))
    assert decided([s for s in out if s is not None]).kind == "interruption"


@pytest.mark.parametrize("feedback", [0.5, S.feedback_p - 0.01, None])
def test_the_same_words_read_otherwise_or_not_read_stop_it(feedback):
    d = decided(said_over("Uh-huh, been there myself.", feedback, 1000))
    assert d.kind == "interruption"


def test_a_long_comment_is_waited_out_past_the_length_bound():
    """Four other words while the person speaks decide at once, and 1.2 s of voice is the
    length bound: a comment read as feedback is waited out, as a slow backchannel is."""
    text = "Uh-huh, that was bound to happen."  # 5 other words
    assert S.max_ms < 1600
    d = decided(said_over(text, 0.99, 1600))
    assert (d.kind, d.why) == ("backchannel", "feedback")
    assert decided(said_over(text, 0.2, 1600)).kind == "interruption"


def _cut_then(partial: str, whole: str, p_partial: float, p_whole: float) -> tuple[list, int]:
    """1.7 s of voice (past the length bound) then silence: decodes of the first 1.5 s hear
    ``partial`` (read at ``p_partial``), later ones ``whole`` (at ``p_whole``); every step, and
    the voice heard when the person paused."""
    o = Overlap(S, 0.0, voiced_ms=96)
    now, out = 0.0, []
    voice = (1700 - 96) // 32
    for i in range(voice + S.words_end_ms // 32 + 8):
        more, now = feed(o, 32, i < voice, now)
        out += more
        for step in [s for s in more if isinstance(s, OverlapDecode)]:
            text, p = (partial, p_partial) if step.voiced_ms < 1500 else (whole, p_whole)
            p = p if step.feedback and feedback_words(text, opened=not step.begun) else None
            out.append(o.heard(step.id, text, step.voiced_ms, now, -0.4, None, p))
    return [s for s in out if s is not None], 96 + voice * 32


def test_a_clause_cut_by_the_length_bound_is_judged_whole_at_the_pause():
    """The thirty-seventh held-out set's "Mm, makes the choice easier." was stopped by the
    length bound in all six voices, its decode at 1.2 s a clause not yet said ("Mm, makes
    the"): words that may be feedback are judged whole once the person pauses."""
    assert S.max_ms < 1500
    steps, voice = _cut_then("Mm, makes the", "Mm, makes the choice easier.", 0.2, 0.99)
    d = decided(steps)
    assert (d.kind, d.why, d.voiced_ms) == ("backchannel", "feedback", voice)
    request, voice = _cut_then("Mm, the bridge is", "Mm, the bridge is closed today.", 0.2, 0.3)
    d = decided(request)
    assert d.kind == "interruption" and d.voiced_ms == voice, "stopped at the pause"
    # A veto word, or backchannels alone past the bound (a loop), keep the bound.
    told, _ = _cut_then("Mm, tell me the", "Mm, tell me the score.", 0.2, 0.99)
    assert (decided(told).kind, decided(told).why) == ("interruption", "length")
    assert decided(told).voiced_ms < 1500
    loop, _ = _cut_then("Yeah, right, okay, sure,", "Yeah, right, okay, sure.", 0.2, 0.99)
    assert decided(loop).kind == "interruption" and decided(loop).voiced_ms < 1500


def test_the_decision_bound_still_holds():
    d = decided(said_over("Uh-huh, that was bound to happen.", 0.99, S.max_decide_ms + 200))
    assert (d.kind, d.why) == ("interruption", "bound")


@pytest.mark.parametrize(
    "text", ["Okay, I need a taxi.", "Yeah, tell me the score.", "Right, what about Friday?"]
)
def test_a_request_stops_the_agent_however_sure_the_reader(text):
    assert decided(said_over(text, 1.0, 1000)).kind == "interruption"


def test_without_a_reader_nothing_is_asked_of_it():
    assert S.feedback_p is not None
    plain = without_feedback(SessionSettings())
    assert plain.overlap.feedback_p is None
    with pytest.raises(ValueError, match="feedback_p"):
        OverlapSettings(feedback_p=1.5)
    steps = said_over("Uh-huh, been there myself.", 0.99, 1000, plain.overlap)
    assert not any(s.feedback for s in steps if isinstance(s, OverlapDecode))
    assert decided(steps).kind == "interruption"


def test_the_turn_taker_asks_for_the_reader_on_a_whole_decode():
    turns = TurnTaker(SessionSettings())
    turns.playing(True, 0.0)
    chunk = (np.sin(np.arange(512) / 5) * 8000).astype(np.int16)
    asks: list[StartOverlapDecode] = []
    now = 0.0
    for _ in range(40):
        asks += [a for a in turns.hear(chunk, 0.99, now, agent_audible=True)
                 if isinstance(a, StartOverlapDecode)]
        now += 0.032
    assert asks and all(a.feedback for a in asks if not a.second)


@pytest.mark.slow  # the Silero VAD (ONNX) in the replay
def test_a_replay_asks_the_reader_only_for_the_words_it_reads():
    """The replay harness (``bench_interruptions --replay``) as the listener: the reader is
    given the words :func:`feedback_words` keeps, never a request's."""
    asked: list[list[str]] = []

    async def decode(audio, prompt, beam, within) -> Partial:
        return Partial(TEXT, -0.3)

    async def feedback(said: list[str]) -> float | None:
        asked.append(said)
        return 0.99

    voice, _ = read_wav(Path(__file__).parents[1] / "audio" / "hum_clips" / "hold-on.en-gb.wav")
    TEXT = "Uh-huh, been there myself."
    r = asyncio.run(replay(voice, decode, SessionSettings(), feedback=feedback))
    assert (r.kind, r.why) == ("backchannel", "feedback")
    assert asked and all(a == ["been", "there", "myself"] for a in asked)
    asked.clear()
    TEXT = "Okay, I need a taxi."
    r = asyncio.run(replay(voice, decode, SessionSettings(), feedback=feedback))
    assert r.kind == "interruption" and asked == []
    r = asyncio.run(replay(voice, decode, SessionSettings(), feedback=None))
    assert r.kind == "interruption"
