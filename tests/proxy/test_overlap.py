"""Speech over an agent, decided sans I/O: recorded words, VAD chunks and a fake clock; no model.

The overlap unit alone (gateway/proxy/overlap.py), then the turn-taker that pauses, resumes and
stops the agent with it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import read_wav
from gateway.audio.hum import HumFeatures
from gateway.proxy.overlap import (
    LAST_STRETCH_PRE_CHUNKS,
    READING_WORDS,
    Overlap,
    OverlapDecision,
    OverlapDecode,
    OverlapGoOn,
    OverlapPauseAgain,
    OverlapSettings,
    classify,
    heard_words,
    hum_words,
    spelled,
)
from gateway.proxy.session import SessionSettings
from gateway.proxy.turn_rule import TurnRule
from gateway.proxy.turn_taker import (
    EndTurn,
    OverlapDecided,
    PausePlayback,
    ResumePlayback,
    StartDecode,
    StartOverlapDecode,
    StateChanged,
    StopPlayback,
    TurnTaker,
)
from gateway.voice.vad import CHUNK_SAMPLES
from gateway.voice.words import Reading

S = OverlapSettings()
CHUNK_S = CHUNK_SAMPLES / 16_000


@pytest.mark.parametrize(
    "text",
    [
        "Mm-hmm.",
        "Yeah.",
        "Right.",
        "Okay.",
        "I see.",
        "I know.",
        "Sure.",
        "Uh-huh.",
        "Yeah, yeah.",
        "Ha ha.",
    ],
)
def test_backchannels_once_the_person_stopped(text):
    assert classify(text, ended=True, settings=S) == "backchannel"
    assert classify(text, ended=False, settings=S) is None, "they may go on"


@pytest.mark.parametrize(
    "text",
    [
        "That's right.",
        "Of course.",
        "Uh-huh, of course.",
        "Mm-hmm, makes sense.",
        "That makes sense.",
        "Okay, gotcha.",
        "Fair enough.",
        "Yeah, absolutely.",
        "Oh, I get it.",
        "Or I get it.",  # tiny.en's "Oh," in espeak-ng
        "Or true.",
        "I understand.",
        "Understood.",
        "Mm, you're right.",
        "Good to know.",
        "Sure thing.",
        "Okay, sounds great.",
        "Oh, that's perfect.",
        "Mhm, very true.",
        "Right on.",
        "Me too.",
        "Yeah, I think so.",
        "Whoa.",
        "Sweet.",
        "Okey-doke.",
        "Okidoke.",
        "Okie-dokie!",
        "Phew.",
        "Uh-huh, go on.",
        "Okay, go ahead.",
        "Mm, keep going.",
        "Yeah, I'm listening.",
        "Right, I suppose.",
        "Mm, I suppose so.",
        "Yeah, I reckon.",
        "Okay, I imagine so.",
        "Uh-huh, probably.",
        "Hmm, maybe.",
        "Could be.",
        "Uh-huh, I follow.",
        "Mm, I'm following you.",
        "Okay, with you.",
        "Yeah, I know what you mean.",
        "Right, I see what you're saying.",
        "Oh, I got it.",
        "Mhm, that's clear.",
    ],
)
def test_acknowledgements_are_backchannels(text):
    """Conversation's acknowledgements beyond a sound and a yes; a phrase is one word of the
    three a backchannel may have ("Uh-huh, of course." is "uh huh of course")."""
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize(
    "text",
    [
        "That's wrong.",
        "Of course not, stop.",
        "Makes no sense.",
        "For now, skip it.",
        "Uh-huh, of course, but why?",
        "I see, I know, I agree, I bet.",
        "Or tell me the weather.",
        "Or.",
        "I understand, but why?",
        "I get it, now stop.",
        "Get it.",
        "Sure thing, but when?",
        "Right on to the next one.",
        "I guess not.",
        "Sounds like a question.",
        "Very slowly, please.",
        "Go on to the next one.",
        "Go ahead and stop.",
        "Keep going with the weather.",
        "Go back.",
        "I suppose you could skip it.",
        "Maybe later.",
        "Probably the second one.",
        "Could be shorter.",
        "I imagine that's wrong.",
        "I follow the news, what's new?",
        "Follow me.",
        "I got a question.",
        "Clear the list.",
        "I know what you mean, but why?",
    ],
)
def test_an_acknowledgements_words_in_a_request_interrupt(text):
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text",
    [
        "Okay, that works.",
        "Uh-huh, I remember.",
        "Mm, I can see that.",
        "I see that.",
        "Yeah, that's really interesting.",
        "Oh, I love it.",
        "Sounds fun.",
        "Right, it makes sense now.",
        "That'd be great, yeah.",
        "Okay, I'd understand.",  # tiny.en's "I understand." in piper
        "Oh, I didn't know that.",
        "Wow, I had no idea.",
        "Right, no problem.",
        "Yeah, no worries.",
        "Uh-huh, it does.",
        "Oh, it is?",
        "Mm, I do.",
        "Right, that explains it.",
        "Oh, that helps.",
        "Yeah, I know the feeling.",
    ],
)
def test_a_listeners_comment_is_a_backchannel(text):
    """A short clause about the listener or what was said, asking, wanting, refusing and
    correcting nothing, is a comment however it is worded; news received holds a negation."""
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize(
    "text",
    [
        "Hmm, I don't think so.",
        "Mm, I disagree.",
        "Okay, I'm confused.",
        "I have a question.",
        "I need help.",
        "I want the weather.",
        "I'd like the news.",
        "Mm, that's too long.",
        "Okay, that's enough.",
        "Okay, that's it.",
        "I mean the other one.",
        "I think you're wrong.",
        "I said Paris.",
        "I see, and then?",
        "I see, I know, I agree, I bet.",
        "Uh, is that today?",
        "Turn that off.",
        "Read it again.",
        "That one.",
        "I'll check.",
        "It's for my mother.",
        "I remember it was a lot cheaper last year.",
        "No, problem is the price.",
        "No problem, but stop.",
        # Whisper's misreadings of requests into a clause: not a comment's words
        "It's awkward.",  # "Softer." (piper)
        "It's a timer.",  # "Set a timer." (espeak-ng)
        "I'm speaking.",  # "Who's speaking?"
        "I will drop.",  # "Hold up."
        "I made mail.",  # "I need help."
        "That means what?",
        "It says nothing.",
        "That needs fixing.",
        "It goes on.",
        "That explains nothing.",
        "Tell me about it.",
    ],
)
def test_a_clause_that_asks_wants_refuses_or_says_more_interrupts(text):
    assert classify(text, ended=True, settings=S) == "interruption"


def test_a_no_that_refuses_nothing_is_no_stop_word_while_the_person_speaks():
    assert classify("Right, no problem", ended=False, settings=S) is None
    assert classify("Right, no", ended=False, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text",
    ["Wait, stop.", "Stop.", "No.", "Hold on.", "Yeah, but no.", "Okay, wait.", "Mm-hmm, hang on."],
)
def test_stop_words_interrupt_at_once(text):
    assert classify(text, ended=False, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text", ["What about Tuesday then?", "Actually, tell me more", "Yeah, what time is it"]
)
def test_other_words_interrupt_at_once(text):
    assert classify(text, ended=False, settings=S) == "interruption"


@pytest.mark.parametrize("text", ["Actually", "I'm", "in a moment", "and momentum."])
def test_up_to_three_other_words_interrupt_once_the_person_stopped(text):
    """A sound cut in half decodes as wrong words: up to three wait for the end of the voice."""
    assert classify(text, ended=False, settings=S) is None
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text", ["MMM.", "NMM.", "Mhmm.", "Hahaha.", "Uhhh.", "Okay.", "Mm.", "HNN.", "H-N-N, okay."]
)
def test_backchannels_as_whisper_spells_them(text):
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize("text", ["Hang on.", "Honey.", "Hint."])
def test_words_beginning_with_h_and_n_are_no_hum(text):
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize("text", ["All right.", "Alright, all right.", "Okay, all right."])
def test_all_right_is_a_backchannel_as_whisper_writes_alright(text):
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize("text", ["All right, stop.", "All of it, right?", "That's all right."])
def test_all_right_with_other_words_still_interrupts(text):
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize("text", ["Amen.", "Amen, yeah.", "Amen. Yeah."])
def test_amen_agrees_and_is_whisper_s_word_for_a_short_mm(text):
    """Piper's "Mm." heard "Amen.", "Mm, yeah." "Amen, yeah.": a backchannel either way."""
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize("text", ["Amen, stop.", "Amen, what time is it?"])
def test_amen_before_other_words_still_interrupts(text):
    assert classify(text, ended=True, settings=S) == "interruption"


def test_more_than_max_words_of_backchannel_interrupt():
    assert classify("Yeah yeah okay right sure", ended=True, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text",
    [
        "Uh, right. Right. Right. Right. Right. R",  # piper "Uh-huh, right." with the prompt
        "Mm-hmm, okay. Okay. Okay. Okay. Okay. Ok",  # piper "Mhm, okay."
        "Uh-huh. Uh-huh. Uh-h",  # espeak-ng en-029 "Uh-huh."
        "Yeah, yeah, yeah, yeah.",
    ],
)
def test_a_backchannel_whisper_looped_on_counts_once(text):
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize(
    "text",
    ["Excuse me. Excuse me. Exc", "Sorry. One second. Sorry. One second.", "No, no, no, no."],
)
def test_a_loop_of_other_words_still_interrupts(text):
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize(
    "text",
    [
        "Right, I don't. Right, I don't. Right, I don't.",  # espeak-ng "Right, I suppose." cut
        "Mm, that's a shame. Mm, that's a shame. Mm, that's a sh",
    ],
)
def test_a_loop_of_a_phrase_counts_once_while_the_person_speaks(text):
    """Counted once, the loop is two other words at most, too few to decide on before the person
    stops (``EARLY_WORDS``); counted each time, it was six."""
    assert classify(text, ended=False, settings=S) is None


def test_a_loop_longer_than_a_phrase_is_words():
    text = "Tell me about the weather. Tell me about the weather."
    assert classify(text, ended=False, settings=S) == "interruption"


def test_a_cut_word_is_dropped_only_from_a_loop():
    """ "Sure, su" is no loop: "su" is a word the person said, and no backchannel."""
    assert classify("Sure, su", ended=True, settings=S) == "interruption"
    assert classify("Sure. Sure. Su", ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize(
    "text", ["", "  ", "(coughing)", "[clapping]", "*laughs*", "you", "Thank you."]
)
def test_no_words_is_a_noise(text):
    assert heard_words(text) == []
    assert classify(text, ended=True, settings=S) == "noise"


def feed(o: Overlap, ms: int, voiced: bool, now: float) -> tuple[list, float]:
    out = []
    for _ in range(ms // 32):
        step = o.chunk(voiced, 32, now)
        now += 0.032
        if step is not None:
            out.append(step)
    return out, now


def test_a_backchannel_is_decided_at_end_ms_of_silence_on_a_decode_of_all_the_voice():
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = feed(o, 192, True, 0.0)
    assert steps == [], "under decode_every_ms: no decode yet"
    steps, now = feed(o, 32, False, now)
    [ask] = steps
    assert isinstance(ask, OverlapDecode) and ask.voiced_ms == 288
    assert o.heard(ask.id, "Yeah.", ask.voiced_ms, now) is None, "not yet end_ms of silence"
    steps, now = feed(o, 160, False, now)
    go_on, d = steps  # the agent goes on at a stretch's pause; the decision at end_ms
    assert isinstance(go_on, OverlapGoOn) and go_on.text == "yeah"
    assert isinstance(d, OverlapDecision) and (d.kind, d.text) == ("backchannel", "yeah")
    assert not o.open


def test_a_decode_that_comes_late_decides_when_it_comes():
    o = Overlap(S, 0.0, voiced_ms=96)
    _, now = feed(o, 160, True, 0.0)
    [ask], now = feed(o, 320, False, now)
    d = o.heard(ask.id, "", ask.voiced_ms, now)
    assert isinstance(d, OverlapDecision) and d.kind == "noise"


def test_words_spoken_after_a_decode_are_decoded_too():
    o = Overlap(S, 0.0, voiced_ms=96)
    _, now = feed(o, 96, True, 0.0)
    [ask], now = feed(o, 32, False, now)
    feed(o, 96, True, now)  # more voice while the decode ran
    again = o.heard(ask.id, "Okay.", ask.voiced_ms, now)
    assert isinstance(again, OverlapDecode) and again.voiced_ms > ask.voiced_ms


def test_a_stop_word_decides_while_the_person_still_speaks():
    """With no second recogniser (``second_sure`` None: :func:`read_once`), a stop word heard
    while the person speaks stops the agent at once."""
    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    assert ask.voiced_ms >= S.first_decode_ms, "decoded while speaking"
    d = o.heard(ask.id, "Wait,", ask.voiced_ms, now)
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "stop word")


def test_a_last_no_heard_while_the_voice_goes_on_waits_for_the_next_decode():
    """ "Yeah, that sounds nice." read "Yeah, that sounds no" while the voice went on (piper,
    twenty-eighth held-out set): the "no" may be a word cut. The next decode decides."""
    asked: list[int] = []

    def words(ask: OverlapDecode) -> tuple[str, None]:
        asked.append(ask.voiced_ms)
        return ("Yeah, that sounds no" if ask.voiced_ms < 1000 else "Yeah, that sounds nice."), None

    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    d = decided(_drive(o, [(True, 1088), (False, S.words_end_ms + 96)], words))
    assert asked[0] < 1000 <= asked[-1], asked
    assert (d.kind, d.text) == ("backchannel", "yeah that sounds nice"), d


@pytest.mark.parametrize("text", ["No, that's", "Yeah, no, stop", "Okay, not now, no"])
def test_a_no_before_other_words_still_stops_at_once(text):
    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    d = o.heard(ask.id, text, ask.voiced_ms, now)
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "stop word")


def test_a_no_the_person_paused_after_stops():
    """Read "..., no" while the voice goes on and again once the person paused: a "no"."""
    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    plan = [(True, 1088), (False, S.words_end_ms + 96)]
    d = decided(_drive(o, plan, lambda ask: ("Right, I think so, no.", None)))
    assert (d.kind, d.why) == ("interruption", "stop word"), d
    assert d.voiced_ms == 1088 + 96, "decided on a decode of all the voice"


def test_a_long_overlap_with_no_decision_is_an_interruption():
    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, [(True, S.max_ms)], lambda ask: (None, None)))  # every decode fails
    assert (d.kind, d.why) == ("interruption", "length")
    assert d.voiced_ms <= S.max_ms + 96


def test_at_the_length_bound_the_first_decode_on_its_way_is_waited_for():
    """With no words yet at the bound (the first decode, asked at ``first_decode_ms``, answered
    later than ``max_ms`` as on a node busy with many people), its words decide: a slow
    backchannel's resume the agent, a request's stop it; unanswered, ``max_decide_ms`` bounds
    the wait."""
    lag = S.max_ms - S.first_decode_ms + 256
    plan = [(True, S.max_ms + 160), (False, lag + S.words_end_ms + 96)]
    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, plan, lambda ask: ("Mm-hmm, okay.", None), lag_ms=lag))
    assert (d.kind, d.why) == ("backchannel", "words"), d
    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, plan, lambda ask: ("Turn it up a bit.", None), lag_ms=lag))
    assert d.kind == "interruption" and d.voiced_ms > S.max_ms, d
    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, [(True, S.max_decide_ms + 96)], lambda ask: ("Okay.", None), lag_ms=9e3))
    assert (d.kind, d.why) == ("interruption", "bound"), d


def test_an_unanswered_decode_is_bounded():
    o = Overlap(S, 0.0, voiced_ms=96)
    _, now = feed(o, 64, True, 0.0)
    steps, _ = feed(o, S.max_decide_ms + 64, False, now)
    d = steps[-1]
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "bound")


def test_a_failed_decode_lets_a_short_sound_go():
    o = Overlap(S, 0.0, voiced_ms=96)
    [ask], now = feed(o, 224, False, 0.0)
    d = o.heard(ask.id, None, ask.voiced_ms, now)
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("noise", "no decode")


# ------------------------------------------------------------------ the turn-taker


class Driver:
    """Feeds a turn-taker while an agent is audible; answers overlap decodes with given words."""

    def __init__(self, **settings) -> None:
        settings.setdefault("partial_interval_ms", 0)
        settings.setdefault("turn_rule", TurnRule())
        self.turns = TurnTaker(SessionSettings(**settings))
        self.turns.playing(True, 0.0)
        self.now = 100.0
        self.actions: list = []
        self.audible = True

    def run(self, ms: int, p: float, *, echo: bool = False, words=None) -> list:
        """``ms`` of chunks of probability ``p`` (their samples are ``p`` too); each overlap
        decode is answered with ``words`` (or ``words(its audio)``)."""
        out: list = []
        for _ in range(round(ms / 32)):
            chunk = np.full(CHUNK_SAMPLES, p, np.float32)
            got = self.turns.hear(chunk, p, self.now, agent_audible=self.audible, echo=echo)
            for a in got:
                if isinstance(a, StartOverlapDecode) and words is not None:
                    text = words(a.audio) if callable(words) else words
                    got += self.turns.overlap_heard(a.id, text, a.voiced_ms, self.now)
            out += got
            self.now += CHUNK_S
        self.actions += out
        return out

    def of(self, kind: type, actions: list | None = None) -> list:
        return [a for a in (self.actions if actions is None else actions) if isinstance(a, kind)]


def test_a_backchannel_pauses_then_resumes_and_is_no_turn():
    d = Driver()
    out = d.run(96, 0.9, words="Yeah.")
    assert d.of(PausePlayback, out) and not d.of(StopPlayback, out), "paused at barge_in_ms"
    d.run(320, 0.9, words="Yeah.")
    d.run(320, 0.0, words="Yeah.")
    [decided] = d.of(OverlapDecided)
    assert decided.decision.kind == "backchannel"
    assert d.of(ResumePlayback) and not d.of(StopPlayback)
    assert d.turns.state == "speaking" and not d.turns.active
    d.run(2000, 0.0)
    assert not d.of(EndTurn), "nothing goes to the floor"
    assert d.turns.overlaps == {"backchannel": 1}


def test_a_stop_word_after_going_on_pauses_the_agent_again_then_stops_it():
    """Through the turn-taker: "Okay," resumes the agent (``go_on``); "Okay, hold on." heard
    next pauses it again at once, the second recogniser is asked once the person pauses, and
    the agent stops (it read no backchannel it was sure of)."""
    d = Driver()

    def words(audio: np.ndarray) -> str:
        return "Okay." if len(audio) < 400 * 16 else "Okay, hold on."

    d.run(320, 0.9, words=words)
    d.run(128, 0.0, words=words)
    assert d.of(ResumePlayback), "gone on after the first stretch"
    out = d.run(480, 0.9, words=words)
    assert d.of(PausePlayback, out) and not d.of(StopPlayback, out), "quiet again at once"
    out = d.run(800, 0.0, words=words)
    assert [a for a in d.of(StartOverlapDecode, out) if a.second], "read again at the pause"
    [decided] = d.of(OverlapDecided)
    assert (decided.decision.kind, decided.decision.why) == ("interruption", "stop word")
    assert d.of(StopPlayback, out)


def test_a_noise_resumes():
    d = Driver()
    d.run(192, 0.9, words="")
    d.run(320, 0.0, words="")
    [decided] = d.of(OverlapDecided)
    assert decided.decision.kind == "noise" and d.of(ResumePlayback)
    d.run(2000, 0.0)
    assert not d.of(EndTurn)


def test_an_interruption_stops_and_its_words_are_the_next_turn():
    d = Driver()
    d.run(640, 0.9, words="Wait, stop.")
    assert not d.of(OverlapDecided), "a short overlap's stop word is read again at its pause"
    d.run(320, 0.0, words="Wait, stop.")  # the second recogniser hears it too (unsure)
    [decided] = d.of(OverlapDecided)
    assert decided.decision.kind == "interruption"
    assert d.of(StopPlayback) and not d.of(ResumePlayback)
    d.turns.playing(False, d.now)  # the stop reached the playout
    d.audible = False
    d.run(160, 0.0)
    [decode] = d.of(StartDecode)
    d.run(800, 0.0)
    [end] = d.of(EndTurn)
    assert end.utterance.voiced_end - end.utterance.start >= 640 * 16 - 2 * CHUNK_SAMPLES
    assert decode.id is not None


def test_with_no_second_recogniser_a_stop_word_stops_while_the_person_speaks():
    d = Driver(overlap=replace(S, second_sure=None))
    d.run(640, 0.9, words="Wait, stop.")
    [decided] = d.of(OverlapDecided)
    assert (decided.decision.kind, decided.decision.why) == ("interruption", "stop word")
    assert d.of(StopPlayback) and not [a for a in d.of(StartOverlapDecode) if a.second]


def test_an_interruption_decided_in_a_pause_starts_the_turns_decode():
    d = Driver()
    d.run(320, 0.9)  # a decode asked, left unanswered
    d.run(96, 0.0)  # a pause: the endpointer's SpeechPaused comes while undecided
    assert not d.of(StartDecode), "no turn decode while the overlap is undecided"
    [ask] = d.of(StartOverlapDecode)[-1:]
    d.actions += d.turns.overlap_heard(ask.id, "Hold on.", ask.voiced_ms, d.now)
    # A stop word in a short overlap is read again first (``_reads_again``); the agent stays
    # paused meanwhile, and the second recogniser hears it too.
    [again] = d.of(StartOverlapDecode)[-1:]
    assert again.second and not d.of(StopPlayback)
    d.actions += d.turns.overlap_heard(again.id, "Hold on.", again.voiced_ms, d.now, -0.2)
    assert d.of(StopPlayback) and d.of(StartDecode)


def test_the_agents_echo_neither_pauses_nor_becomes_a_turn():
    d = Driver()
    out = d.run(3000, 0.9, echo=True)
    assert not d.of(PausePlayback, out) and not d.of(StopPlayback, out)
    [decided] = d.of(OverlapDecided, out)  # told once per playback
    assert decided.decision.kind == "echo"
    d.audible = False
    d.turns.playing(False, d.now)
    d.run(1000, 0.0)
    assert not d.of(EndTurn) and not d.turns.active


def test_decide_off_stops_at_once_as_before():
    from gateway.proxy.overlap import OverlapSettings

    d = Driver(overlap=OverlapSettings(decide=False))
    out = d.run(96, 0.9)
    assert d.of(StopPlayback, out) and not d.of(PausePlayback, out)


def test_the_agent_stopping_otherwise_leaves_the_speech_a_turn():
    d = Driver()
    d.run(192, 0.9)
    d.audible = False
    d.turns.playing(False, d.now)
    d.run(400, 0.9)
    d.run(800, 0.0)
    assert d.of(EndTurn), "an ordinary turn"
    assert not d.of(ResumePlayback)
    assert [a for a in d.actions if isinstance(a, StateChanged)]


# ------------------------------------------------------------------ what was heard of a reply


def _speaker():
    from gateway.proxy.services import Services
    from gateway.proxy.speaking import Speaker

    return Speaker(
        SessionSettings(out_rate=16_000),
        synthesizer=None,
        voices=None,
        user_uri="tag:user",
        manager_uri="tag:manager",
        sink=None,
        services=Services(clock=lambda: 0.0),
    )


TEN = "one two three four five six seven eight nine ten"


def _all_made(frames: int):
    """A speaker whose reply "de:1" (:data:`TEN`) is all made, ``frames`` of 20 ms long."""
    speaker = _speaker()
    speaker._first_put("de:1", TEN)
    speaker.playout.queued += frames
    speaker._ends["de:1"] = speaker.playout.queued
    return speaker


def test_what_was_heard_of_a_reply_is_its_words_in_proportion_to_what_played():
    speaker = _all_made(100)  # 2 s of it made, all of it
    text = TEN
    speaker.playout.released = 30  # 600 ms played
    reply, played = speaker.playing_now()
    assert (reply, played) == ("de:1", 600)
    assert speaker.heard_text(reply, played) == "one two three"
    assert speaker.heard_text(reply, 0) == ""
    assert speaker.heard_text(reply, 5000) == text


def test_what_a_read_back_is_matched_in_is_what_played_and_a_second_more():
    speaker = _all_made(250)  # 5 s of it made, all of it
    text = TEN
    assert speaker.heard_lately() == "one two"  # nothing played yet: the second ahead
    speaker.playout.released = 50  # 1 s played
    assert speaker.heard_lately() == "one two three four"
    speaker.playout.released = 250
    assert speaker.heard_lately() == text


def test_what_was_heard_of_a_reply_still_being_made_goes_at_pipers_pace():
    speaker = _speaker()
    speaker._first_put("de:2", " ".join(["word"] * 40))
    assert len(speaker.heard_text("de:2", 2000).split()) == 5  # 2 s at 2.7 words a second
    assert speaker.heard_text("de:unknown", 2000) == ""


def test_audio_replayed_faster_than_real_time_is_bounded_too():
    o = Overlap(S, 0.0, voiced_ms=96)
    steps = [o.chunk(False, 32, 0.0) for _ in range(S.max_decide_ms // 32 + 1)]  # clock still
    d = [s for s in steps if isinstance(s, OverlapDecision)]
    assert d and (d[0].kind, d[0].why) == ("interruption", "bound")


def test_a_stopped_stream_is_cancelled_with_the_words_heard_and_a_queued_one_with_none():
    from gateway.agents.streaming import ReplyStream

    speaker = _speaker()
    playing = ReplyStream("de:1", "tag:assistant", "Assistant")
    queued = ReplyStream("de:2", "tag:assistant", "Assistant")
    speaker._stream = playing
    speaker._replies.put_nowait(queued)
    speaker._first_put("de:1", "one two three four five six seven eight nine ten")
    speaker.playout.queued += 100
    speaker._ends["de:1"] = speaker.playout.queued
    speaker.playout.released = 30  # 600 ms of its 2 s played
    assert speaker.stop()
    assert playing.cancelled and playing.heard == "one two three"
    assert queued.cancelled and queued.heard == ""


# ------------------------------------------------------------------ the voice's hum signal

CLIPS = Path(__file__).parents[1] / "audio" / "hum_clips"
HUM = HumFeatures(voiced_ms=480, nasal=0.4, high_share=0.02, onsets=3, pitch_jumps=0.0, pitched=1)
WORD = replace(HUM, nasal=0.2)


def said(
    name: str,
    o: Overlap,
    words: str | Callable[[int], str] | None,
    logprob: float | None = None,
    near: Reading | None = None,
    *,
    then: tuple[int, str] | None = None,
) -> list:
    """Play a recorded clip into an overlap in 32 ms chunks (voiced: over -40 dBFS), then
    silence, answering each decode with ``words`` (or ``words(voiced_ms)``; at ``logprob``,
    read in backchannels' words as ``near``); what it returned. ``then``: that many ms of
    silence and a second clip after the first."""
    pcm, _ = read_wav(CLIPS / f"{name}.wav")
    if then is not None:
        second, _ = read_wav(CLIPS / f"{then[1]}.wav")
        pcm = np.concatenate([pcm, np.zeros(then[0] * 16, np.int16), second])
    chunks = [pcm[i : i + CHUNK_SAMPLES] for i in range(0, len(pcm), CHUNK_SAMPLES)]
    chunks += [np.zeros(CHUNK_SAMPLES, np.int16)] * 20
    out, now = [], 0.0
    for c in chunks:
        loud = np.sqrt(np.mean(c.astype(np.float64) ** 2)) > 328
        step = o.chunk(bool(loud), 32, now, c)
        now += 0.032
        while isinstance(step, OverlapDecode) and words is not None:  # an answer may ask more
            out.append(step)
            text = words(step.voiced_ms) if callable(words) else words
            step = o.heard(step.id, text, step.voiced_ms, now, logprob, near)
        if step is not None:
            out.append(step)
    return out


def decided(steps: list) -> OverlapDecision:
    [d] = [s for s in steps if isinstance(s, OverlapDecision)]
    return d


@pytest.mark.parametrize("name", ["mm-hmm.piper", "mm-hmm.en-gb"])
def test_a_hum_heard_as_words_is_a_backchannel(name):
    """Whisper wrote piper's "Mm-hmm" as "Inema", espeak en-gb's as "and anthem"."""
    d = decided(said(name, Overlap(S, 0.0, audio=[]), "and anthem"))
    assert (d.kind, d.why) == ("backchannel", "hum and words")


@pytest.mark.parametrize("name", ["hold-on.en-gb", "no-no.piper", "what-time-is-it.piper"])
def test_words_that_sound_like_words_still_interrupt(name):
    d = decided(said(name, Overlap(S, 0.0, audio=[]), "and anthem"))
    assert (d.kind, d.why) == ("interruption", "words")


@pytest.mark.parametrize(("logprob", "kind"), [(-0.6, "backchannel"), (None, "backchannel")])
def test_a_hum_heard_as_unsure_words_is_a_backchannel(logprob, kind):
    """Whisper's words for a hum were decoded at -0.45 to -1.07 on the seven sets; not known
    (a text-only recogniser), the hum signal decides as before."""
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), "And then them.", logprob))
    assert (d.kind, d.why) == (kind, "hum and words")


@pytest.mark.parametrize("words", ["Quiet.", "Skip it.", "Again.", "Never mind.", "Next."])
@pytest.mark.parametrize("logprob", [-0.6, None])
def test_unsure_words_that_do_not_begin_as_a_hum_interrupt_in_a_hum_like_voice(words, logprob):
    """flite's voices sound like a hum to the hum signal whatever they say (slt: 91 % of the
    power under 400 Hz); Whisper heard these right, unsure, and the hum rule resumed the agent
    over 8 of flite slt's 70 interruptions. Its words for a hum begin as a hum does."""
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), words, logprob))
    assert (d.kind, d.why) == ("interruption", "words")


def test_words_whisper_was_sure_of_interrupt_in_a_hum_like_voice():
    """ "Never mind." in piper: nasals and vowels, voiced throughout, heard right at -0.15."""
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), "Never mind.", -0.15))
    assert (d.kind, d.why) == ("interruption", "words")
    off = Overlap(replace(S, hum_sure_logprob=None), 0.0, audio=[])
    assert decided(said("mm-hmm.piper", off, "And then them.", -0.15)).kind == "backchannel"
    sure = Overlap(S, 0.0, audio=[])
    assert decided(said("mm-hmm.piper", sure, "And then them.", -0.15)).kind == "interruption"


@pytest.mark.parametrize("words", ["And a.", "M-H-N"])
def test_a_hums_syllables_or_letters_are_a_backchannel_however_sure(words):
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), words, -0.05))
    assert d.kind == "backchannel"


def test_hum_sure_logprob_is_a_log_probability():
    with pytest.raises(ValueError, match="hum_sure_logprob"):
        OverlapSettings(hum_sure_logprob=0.5)


@pytest.mark.parametrize("words", ["No.", "Stop.", "Hold on.", "Mm, wait."])
def test_a_stop_word_in_a_hum_still_stops(words):
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), words))
    assert d.kind == "interruption"


def test_without_the_hum_signal_a_hum_heard_as_words_interrupts():
    d = decided(said("mm-hmm.piper", Overlap(replace(S, hum=False), 0.0, audio=[]), "Inema"))
    assert (d.kind, d.why) == ("interruption", "words")


def test_without_the_audio_the_words_alone_decide():
    d = decided(said("mm-hmm.piper", Overlap(S, 0.0), "Inema"))
    assert (d.kind, d.why) == ("interruption", "words")


def test_a_hum_is_decided_on_one_decode_of_all_its_voice():
    """The first decode while speaking waits for first_decode_ms: a short backchannel is
    decoded once, when the person stops (two decodes in a row made the agent wait)."""
    steps = said("mm-hmm.piper", Overlap(S, 0.0, audio=[]), "Inema")
    asks = [s for s in steps if isinstance(s, OverlapDecode) and not s.second]
    assert len(asks) == 1


@pytest.mark.parametrize("text", ["M-H-N", "A-I-T", "M.A.K.", "And M-M-M", "O.K."])
def test_spelled_letters(text):
    assert spelled(text)


@pytest.mark.parametrize("text", ["T.V. off", "e-mail me", "Mm-hmm", "I see", "No", "and anthem"])
def test_not_spelled_letters(text):
    assert not spelled(text)


def stop_after(o: Overlap, voiced_ms: int, features: HumFeatures | None, words: str):
    """``voiced_ms`` of voice, then silence; every decode says ``words``, and the voice's
    features at the stop are ``features`` (the overlap was given no audio)."""
    now, step = 0.0, None
    for i in range((voiced_ms - 96) // 32 + 1 + S.words_end_ms // 32):
        voiced = i < (voiced_ms - 96) // 32
        if not voiced and o.hum is None:
            o.hum = features
        step = o.chunk(voiced, 32, now)
        now += 0.032
        while isinstance(step, OverlapDecode):
            step = o.heard(step.id, words, step.voiced_ms, now)
        if step is not None:
            return step
    return step


def test_a_short_overlap_spelled_as_letters_is_a_backchannel():
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, WORD, "M-H-N")
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("backchannel", "spelled")


@pytest.mark.parametrize("text", ["M-N-Y", "M-H-Y"])
def test_letters_that_ask_are_no_hum(text):
    """Whisper writes a short "Why?" as its letter: "Mm, | why?" in piper read "M-N-Y"."""
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, WORD, text)
    assert isinstance(d, OverlapDecision) and d.kind == "interruption"


def test_a_long_overlap_is_no_hum_whatever_it_sounds_like():
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), S.hum_max_ms + 64, HUM, "in a moment")
    assert isinstance(d, OverlapDecision) and d.kind == "interruption"
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), S.hum_max_ms + 64, WORD, "M-H-N")
    assert isinstance(d, OverlapDecision) and d.kind == "interruption"


def _hum_read_twice(second: str | None) -> OverlapDecision:
    """A short hum-like voice tiny.en wrote "Enough." unsure (a hum rule would let it go), and
    the second recogniser's reading ``second`` of it (None: it failed, or there is none)."""
    o, now, step = Overlap(S, 0.0, voiced_ms=96), 0.0, None
    asked: list[OverlapDecode] = []
    for i in range((480 - 96) // 32 + 1 + S.words_end_ms // 32):
        voiced = i < (480 - 96) // 32
        if not voiced and o.hum is None:
            o.hum = HUM
        step = o.chunk(voiced, 32, now)
        now += 0.032
        while isinstance(step, OverlapDecode):
            asked.append(step)
            text, logprob = (second, -0.5) if step.second else ("Enough.", -0.5)
            step = o.heard(step.id, text, step.voiced_ms, now, logprob)
        if isinstance(step, OverlapDecision):
            assert [a.second for a in asked] == [False, True], "read again once, all of it"
            return step
    raise AssertionError("undecided")


def test_words_a_hum_rule_would_let_go_that_both_recognisers_wrote_interrupt():
    """flite's "Enough." is nasal and voiced throughout: decided a hum in three of its four
    voices, tiny.en and Whisper base both writing "Enough.". Written alike by both, the words
    were said: they interrupt; the second reading otherwise leaves the hum a backchannel."""
    d = _hum_read_twice("Enough.")
    assert (d.kind, d.why, d.text) == ("interruption", "both read", "enough")
    for second in ("Mm-hmm.", "In us.", "Enough, enough.", None):
        d = _hum_read_twice(second)
        if second == "Enough, enough.":  # a loop counts once: the same words
            assert (d.kind, d.why) == ("interruption", "both read")
        else:
            assert (d.kind, d.why) == ("backchannel", "hum and words"), second


def test_a_short_word_that_is_no_hum_interrupts():
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, WORD, "Guarded.")
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "words")


def test_a_hums_words_over_a_voice_with_no_nasal_frames_interrupt():
    """espeak-ng's "Who are you?" (no nasal frame) that Whisper wrote "Mm-hmm."."""
    steps = said("who-are-you.en-us", Overlap(S, 0.0, audio=[]), "Mm-hmm.")
    assert (decided(steps).kind, decided(steps).why) == ("interruption", "not a hum")
    assert not [s for s in steps if isinstance(s, OverlapGoOn)], "it does not go on meanwhile"


def test_a_hums_words_with_no_nasal_frames_wait_for_what_follows_them():
    """A hum said with little nasal sound before a comma ("Mhm, | yep." in en-gb-x-gbclan+m4:
    no nasal frame in 480 ms) is judged with its second half, which comes after ``end_ms`` of
    silence but within ``words_end_ms``."""
    first = len(read_wav(CLIPS / "who-are-you.en-us.wav")[0]) // 16
    steps = said(
        "who-are-you.en-us",
        Overlap(S, 0.0, audio=[]),
        lambda ms: "Mm-hmm." if ms <= first else "Mm-hmm, yeah.",
        then=(320, "yeah.piper"),
    )
    assert (decided(steps).kind, decided(steps).text) == ("backchannel", "mm hmm yeah")
    # Alone, it waits as other words do: decided words_end_ms into the silence, not end_ms.
    alone = decided(said("who-are-you.en-us", Overlap(S, 0.0, audio=[]), "Mm-hmm."))
    early = replace(S, words_end_ms=S.end_ms)
    at_once = decided(said("who-are-you.en-us", Overlap(early, 0.0, audio=[]), "Mm-hmm."))
    assert (alone.why, at_once.why) == ("not a hum", "not a hum")
    assert alone.decided_ms - at_once.decided_ms >= S.words_end_ms - S.end_ms - 32


def test_a_hums_words_over_a_hum_are_a_backchannel():
    d = decided(said("mm-hmm.en-us", Overlap(S, 0.0, audio=[]), "Mm-hmm."))
    assert (d.kind, d.why) == ("backchannel", "words")


@pytest.mark.parametrize("words", ["Mm-hmm.", "Hmm."])
def test_without_the_nasal_floor_a_hums_words_are_a_backchannel(words):
    off = Overlap(replace(S, nasal_floor=None), 0.0, audio=[])
    assert decided(said("who-are-you.en-us", off, words)).kind == "backchannel"


def test_other_backchannels_over_a_voice_with_no_nasal_frames_are_a_backchannel():
    """Only a hum is said with the lips shut: "Uh-huh." has no nasal frame either."""
    d = decided(said("who-are-you.en-us", Overlap(S, 0.0, audio=[]), "Uh-huh."))
    assert (d.kind, d.why) == ("backchannel", "words")


def test_a_long_overlap_of_a_hums_words_is_not_judged_by_its_voice():
    pcm, _ = read_wav(CLIPS / "who-are-you.en-us.wav")
    settings = replace(S, hum_max_ms=len(pcm) // 16 // 2)
    d = decided(said("who-are-you.en-us", Overlap(settings, 0.0, audio=[]), "Mm-hmm."))
    assert (d.kind, d.why) == ("backchannel", "words")


@pytest.mark.parametrize(
    ("gap", "kind", "why"),
    [
        (2.0, "interruption", "unread words"),
        (S.unread_gap, "backchannel", "near a backchannel"),
        (0.4, "backchannel", "near a backchannel"),
    ],
)
def test_whispers_words_for_a_noise_over_a_voice_are_decided_by_their_reading(gap, kind, why):
    """ "Who are you?" written "Thank you." (its reading "Mm." 2.0 nats less likely, on the
    eleventh held-out set); flite's "Uh-hm, yeah." written so was read "Yeah." at 0.4."""
    steps = said(
        "who-are-you.en-us", Overlap(S, 0.0, audio=[]), "Thank you.", near=Reading("Mm.", gap)
    )
    assert (decided(steps).kind, decided(steps).why) == (kind, why)


@pytest.mark.parametrize(
    ("name", "settings", "gap"),
    [
        ("cough", S, 3.0),  # no pitch: a noise, whatever the reading
        ("who-are-you.en-us", S, None),  # no reading (a stock Wyoming server)
        ("who-are-you.en-us", replace(S, unread_gap=None), 3.0),
    ],
)
def test_whispers_words_for_a_noise_are_a_noise_without_a_voice_or_a_reading(name, settings, gap):
    near = None if gap is None else Reading("Mm.", gap)
    d = decided(said(name, Overlap(settings, 0.0, audio=[]), "Thank you.", near=near))
    assert d.kind == "noise"


def test_nasal_floor_is_a_share():
    with pytest.raises(ValueError, match="nasal_floor"):
        OverlapSettings(nasal_floor=1.5)


def test_a_hum_with_no_words_is_a_noise():
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, HUM, "")
    assert isinstance(d, OverlapDecision) and d.kind == "noise"


def test_the_turn_taker_hands_the_overlap_its_audio():
    """A recorded hum through the turn-taker: paused, decoded once, resumed."""
    pcm, _ = read_wav(CLIPS / "mm-hmm.piper.wav")
    turns = TurnTaker(SessionSettings(partial_interval_ms=0, turn_rule=TurnRule()))
    turns.playing(True, 0.0)
    now, out = 100.0, []
    chunks = [pcm[i : i + CHUNK_SAMPLES] for i in range(0, len(pcm), CHUNK_SAMPLES)]
    chunks += [np.zeros(CHUNK_SAMPLES, np.int16)] * 20
    for c in chunks:
        c = np.pad(c, (0, CHUNK_SAMPLES - len(c)))
        loud = np.sqrt(np.mean(c.astype(np.float64) ** 2)) > 328
        got = turns.hear(c, 0.9 if loud else 0.0, now, agent_audible=True)
        for a in got:
            if isinstance(a, StartOverlapDecode):
                assert a.prompt == S.prompt, "decoded with the backchannel prompt"
                # The second recogniser (asked: words, not a hum's syllables) reads the hum.
                heard = "Mm-hmm." if a.second else "Inema"
                got += turns.overlap_heard(a.id, heard, a.voiced_ms, now)
        out += got
        now += CHUNK_S
    [d] = [a.decision for a in out if isinstance(a, OverlapDecided)]
    assert (d.kind, d.why) == ("backchannel", "hum and words")
    assert any(isinstance(a, PausePlayback) for a in out)
    assert any(isinstance(a, ResumePlayback) for a in out)
    assert not any(isinstance(a, (StopPlayback, EndTurn)) for a in out)


# ------------------------------------------------------------------ a backchannel in two parts

FIRST, SECOND = 0.9, 0.8  # the two parts' chunks (the Driver's samples are the probability)


def by_parts(alone: str, whole: str):
    """A decode's words: ``whole`` when its audio holds both parts, else ``alone``."""
    return lambda audio: whole if np.any(audio == np.float32(FIRST)) else alone


def in_two_parts(gap_ms: int, alone: str, whole: str, **settings) -> Driver:
    """ "Yeah," (decoded "Yeah."), ``gap_ms`` of silence from its resume, then a second part
    whose decode says ``whole`` if it was given the first part's audio too, else ``alone``."""
    d = Driver(**settings)
    d.run(320, FIRST, words="Yeah.")
    d.tail = 0  # silent chunks of the first part's overlap, to its resume
    while not d.of(ResumePlayback):
        d.run(32, 0.0, words="Yeah.")
        d.tail += 1
    d.run(gap_ms, 0.0)
    d.run(288, SECOND, words=by_parts(alone, whole))
    d.run(480, 0.0, words=by_parts(alone, whole))
    return d


def test_a_backchannel_split_at_its_comma_is_judged_whole():
    """ "Yeah, | yeah." with the comma's pause past end_ms: the second half alone decoded as a
    cut-off word ("Yay.") and stopped the agent; joined with the first it is what was said."""
    d = in_two_parts(160, alone="The end.", whole="Yeah, yeah.")
    first, second = (a.decision for a in d.of(OverlapDecided))
    assert (first.kind, first.joined) == ("backchannel", False)
    assert (second.kind, second.joined, second.text) == ("backchannel", True, "yeah yeah")
    assert second.voiced_ms >= 320 + 288 - 64, "the voice counts from the first part"
    decided = [r for r in d.of(ResumePlayback) if r.heard is None]
    assert len(decided) == 2 and not d.of(StopPlayback), "each part went on before its decision"
    d.run(2000, 0.0)
    assert not d.of(EndTurn), "nothing goes to the floor"


@pytest.mark.parametrize("gap_ms", [0, 64, 160])
def test_the_joined_decode_is_given_both_parts_and_the_silence_between_once(gap_ms):
    d = in_two_parts(gap_ms, alone="The end.", whole="Yeah, yeah.")
    chunks = d.of(StartOverlapDecode)[-1].audio.reshape(-1, CHUNK_SAMPLES)[:, 0]
    first = np.flatnonzero(chunks == np.float32(FIRST))
    second = np.flatnonzero(chunks == np.float32(SECOND))
    assert len(first) == 320 // 32 and len(second) >= 3
    between = second[0] - first[-1] - 1
    assert between == d.tail + gap_ms // 32, "each silent chunk once, none left out"


@pytest.mark.parametrize("whole", ["Mm, no.", "Yeah, wait.", "Okay, stop.", "Yeah, hold on."])
def test_a_stop_word_within_the_join_window_still_stops(whole):
    d = in_two_parts(160, alone="", whole=whole)
    second = d.of(OverlapDecided)[-1].decision
    assert (second.kind, second.why, second.joined) == ("interruption", "stop word", True)
    assert d.of(StopPlayback)


@pytest.mark.parametrize("whole", ["Yeah, what time is it?", "Okay, tell me about Paris."])
def test_other_words_within_the_join_window_still_interrupt(whole):
    """A meant interruption right after a backchannel is still one: its words are no
    backchannel's, joined or not."""
    d = in_two_parts(160, alone="Yeah.", whole=whole)
    second = d.of(OverlapDecided)[-1].decision
    assert (second.kind, second.joined) == ("interruption", True)
    assert d.of(StopPlayback)


def test_an_overlap_after_the_join_window_is_judged_alone():
    d = in_two_parts(S.join_ms + 320, alone="The end.", whole="Yeah, yeah.")
    second = d.of(OverlapDecided)[-1].decision
    assert (second.kind, second.joined, second.text) == ("interruption", False, "the end")
    assert not np.any(d.of(StartOverlapDecode)[-1].audio == np.float32(FIRST))


def test_join_ms_0_never_joins():
    d = in_two_parts(160, alone="The end.", whole="Yeah, yeah.", overlap=replace(S, join_ms=0))
    second = d.of(OverlapDecided)[-1].decision
    assert (second.kind, second.joined) == ("interruption", False)


def test_a_joined_overlap_waits_for_first_decode_ms_of_its_own_voice():
    """The first part's voice does not count toward the first decode while the person speaks
    (a half-way decode held the model when they stopped)."""
    o = Overlap(S, 0.0, voiced_ms=S.first_decode_ms - 96 + 96, joined_ms=S.first_decode_ms - 96)
    steps, _ = feed(o, 320, True, 0.0)
    assert steps == [], "only 416 ms of its own voice"


def test_the_length_bound_counts_a_joined_overlaps_own_voice():
    """flite's slow "Mhm, | yes.": its first part (896 ms) a backchannel, the second joined
    was stopped by the length bound at its onset, before any decode of it."""
    o = Overlap(S, 0.0, voiced_ms=896 + 96, joined_ms=896)
    steps, _ = feed(o, S.max_ms - 896 + 96, True, 0.0)
    assert [s for s in steps if isinstance(s, OverlapDecision)] == []
    assert o.voiced_ms > S.max_ms
    steps = _drive(o, [(True, S.max_ms)], lambda ask: (None, None))  # its decodes failed
    assert (decided(steps).kind, decided(steps).why) == ("interruption", "length")
    assert decided(steps).voiced_ms - 896 <= S.max_ms + 96


# ------------------------------------------------------------------ Whisper's words for a hum


@pytest.mark.parametrize("text", ["A ha.", "A-ha!", "M hm, yeah.", "Uh, huh."])
def test_a_backchannel_whisper_wrote_in_pieces_is_one(text):
    """ "a ha" ("Uh-huh." in espeak-ng en-gb-x-rp+f4) stopped the agent: "a" is no backchannel."""
    assert classify(text, ended=True, settings=S) == "backchannel"


@pytest.mark.parametrize("text", ["A hat.", "A ha, what time is it?", "In it.", "Oh, a car."])
def test_pieces_that_make_no_backchannel_still_interrupt(text):
    assert classify(text, ended=True, settings=S) == "interruption"


@pytest.mark.parametrize("text", ["No, a ha.", "A ha, stop.", "A ha, wait."])
def test_a_stop_word_beside_pieces_still_stops_at_once(text):
    assert classify(text, ended=False, settings=S) == "interruption"


@pytest.mark.parametrize("text", ["In in.", "And a.", "In.", "Um, and..."])
def test_a_hums_syllables_are_hum_words(text):
    assert hum_words(text)


@pytest.mark.parametrize("text", ["", "In the kitchen.", "And then?", "No.", "Enough.", "An hour"])
def test_words_with_content_are_not_hum_words(text):
    assert not hum_words(text)


def test_a_short_overlap_decoded_as_a_hums_syllables_is_a_backchannel():
    """ "Mm." in espeak-ng en-029 came back "in in" and its voice measured no hum."""
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, WORD, "In in.")
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("backchannel", "hum words")


@pytest.mark.parametrize("words", ["In, in the kitchen.", "In in, stop.", "And no."])
def test_a_hums_syllables_with_other_or_stop_words_interrupt(words):
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), 480, WORD, words)
    assert isinstance(d, OverlapDecision) and d.kind == "interruption"


def test_a_long_overlap_of_hum_words_interrupts():
    d = stop_after(Overlap(S, 0.0, voiced_ms=96), S.hum_max_ms + 64, WORD, "In in.")
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "words")


# ------------------------------------------------------------------ a sound, then a backchannel


def two_stretches(
    first_ms: int,
    gap_ms: int,
    second_ms: int,
    first: str,
    whole: str,
    last: str | None = None,
    *,
    last_fails: bool = False,
):
    """A first stretch of voice decoded ``first`` when the person paused, ``gap_ms`` of
    silence, a second stretch, then silence; decodes of more than the first stretch say
    ``whole``, and one of the second stretch alone ``last`` (None: ``whole``; ``last_fails``:
    that decode fails). Returns the decision and the silence heard before it, ms."""
    o = Overlap(S, 0.0, voiced_ms=96)
    now, decided, silence = 0.0, None, 0
    plan = [(first_ms - 96, True), (gap_ms, False), (second_ms, True), (1000, False)]
    for ms, voiced in plan:
        for _ in range(ms // 32):
            step = o.chunk(voiced, 32, now)
            now += 0.032
            silence = 0 if voiced else silence + 32
            while isinstance(step, OverlapDecode):
                said = first if step.voiced_ms <= first_ms else whole
                if step.last_stretch and last is not None:
                    said = last
                failed = step.last_stretch and last_fails
                step = o.heard(step.id, None if failed else said, step.voiced_ms, now)
            if isinstance(step, OverlapDecision):
                return step, silence
    return decided, silence


@pytest.mark.parametrize(
    ("first", "whole", "last"),
    [
        ("Mm-hmm.", "Give in them, sure.", "Sure."),  # espeak-ng en-029 "Mm-hmm, sure."
        ("Sure.", "So, so, so.", "Sure."),  # en-gb-x-rp "Sure, sure."
        ("And it.", "And it can, yes.", "Yes."),  # a hum's words, then a backchannel
        ("Right.", "Right here.", "Thank you."),  # en-gb-scotland+f4: no words alone
    ],
)
def test_each_stretch_a_backchannel_is_one_however_the_whole_was_read(first, whole, last):
    d, _ = two_stretches(480, 160, 480, first, whole, last)
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")


@pytest.mark.parametrize(
    ("first", "whole", "last"),
    [
        ("Okay.", "Okay, next one.", "Next one."),  # the second stretch is a request
        ("Okay.", "Okay, so what.", "So, wait."),  # a stop word in the second alone
        ("Tell me.", "Tell me, okay.", "Okay."),  # the first is a request
        ("Okay.", "Okay, so what.", None),  # the second alone read as the whole
    ],
)
def test_a_request_in_either_stretch_still_interrupts(first, whole, last):
    d, _ = two_stretches(480, 160, 480, first, whole, last)
    assert d.kind == "interruption", d


def test_a_failed_decode_of_the_second_stretch_is_no_backchannel():
    d, _ = two_stretches(480, 160, 480, "Okay.", "Okay, here.", last_fails=True)
    assert d is not None and d.kind == "interruption", d


def halves(whole: str, second: str, first: str):
    """A recogniser for the Driver's two halves (samples 0.9, then 0.8): ``whole`` for audio
    of both, ``second`` for the second alone (kept in the list returned too), else ``first``."""
    alone: list[np.ndarray] = []

    def words(audio: np.ndarray) -> str:
        if np.any(audio == np.float32(0.9)) and np.any(audio == np.float32(0.8)):
            return whole
        if np.any(audio == np.float32(0.8)):
            alone.append(audio)
            return second
        return first

    return words, alone


def test_the_second_stretch_alone_is_decoded_from_just_before_it():
    """The turn-taker gives the decode of the last stretch its audio from
    ``LAST_STRETCH_PRE_CHUNKS`` before its first voiced chunk: none of the first stretch's."""
    d = Driver()
    words, alone = halves("Give in them, sure.", "Sure.", "Mm-hmm.")

    d.run(480, 0.9, words=words)
    d.run(160, 0.0, words=words)
    d.run(480, 0.8, words=words)
    d.run(1000, 0.0, words=words)
    [decided] = d.of(OverlapDecided)
    assert (decided.decision.kind, decided.decision.why) == ("backchannel", "each a backchannel")
    [audio] = alone
    assert np.count_nonzero(audio == np.float32(0.8)) == 480 // 32 * CHUNK_SAMPLES, "all of it"
    assert np.all(audio[: LAST_STRETCH_PRE_CHUNKS * CHUNK_SAMPLES] == 0), "from the pause"


@pytest.mark.parametrize(
    ("first", "whole"),
    [
        ("And make them.", "And make them, okay."),  # piper "Mhm, okay."
        ("O item.", "Oh, it's M, yeah."),
        ("In.", "In, sure. Sure. Sure."),
        ("I can.", "I can, yeah."),  # espeak-ng en-us-nyc "Uh-hm, yeah."
        ("I say...", "I say, yeah."),  # en-gb-x-gbcwmd "I see, yeah."
    ],
)
def test_a_short_sound_then_a_backchannel_is_one(first, whole):
    """Whisper's words for a hum are judged as a hum's when a backchannel follows them: the
    second stretch added nothing but backchannels."""
    d, _ = two_stretches(480, 160, 320, first, whole)
    assert (d.kind, d.why) == ("backchannel", "then a backchannel")


@pytest.mark.parametrize(
    ("first", "whole"),
    [
        ("Hmm.", "Hmm, is that right?"),  # the second stretch adds other words
        ("Not now.", "Not now, okay."),  # a stop phrase
        ("No.", "No, okay."),
        ("Tell me more.", "Tell me more, okay."),  # no word Whisper writes for a hum
        ("And then?", "And then, okay?"),  # a question
        ("And.", "And make them, okay."),  # more words than the first stretch's
        ("I want.", "I want the other one, okay."),
        ("I can.", "I can, yeah?"),
    ],
)
def test_a_short_sound_then_other_or_stop_words_interrupts(first, whole):
    d, _ = two_stretches(480, 160, 320, first, whole)
    assert d.kind == "interruption", d


@pytest.mark.parametrize(
    ("first", "whole"),
    [
        ("Okay.", "Okay, and oh."),  # espeak-ng en-029+m6 "Okay, | and now?"
        ("Mm.", "Mm, but yeah."),
    ],
)
def test_a_backchannel_then_and_or_but_goes_on(first, whole):
    """ "and", "but" or "so" after a backchannel's word begins what the person goes on to say:
    the second stretch is no second backchannel, whatever Whisper made of the rest."""
    d, _ = two_stretches(480, 160, 320, first, whole)
    assert (d.kind, d.why) == ("interruption", "goes on")


def glide(semitones: float, faint_ms: int = 0) -> np.ndarray:
    """A voice at 140 Hz (five harmonics) for 450 ms, then gliding ``semitones`` over 250
    ms: a question's rise (positive) or a statement's fall (negative); its last ``faint_ms``
    18 dB quieter."""
    f0 = np.concatenate([np.full(7200, 140.0), 140 * 2 ** (np.linspace(0, semitones, 4000) / 12)])
    phase = 2 * np.pi * np.cumsum(f0) / 16_000
    wave = 6000 * sum(np.sin(k * phase) / k for k in range(1, 6))
    if faint_ms:
        wave[-faint_ms * 16 :] /= 8
    return wave.astype(np.int16)


def over_a_voice(audio: np.ndarray, settings: OverlapSettings, words: str, near: Reading):
    """``audio`` played into an overlap in 32 ms chunks (voiced: over -30 dBFS, so a faint
    end is silence), then silence; each decode says ``words``, read in backchannels' words
    as ``near``. The decision."""
    o = Overlap(settings, 0.0, audio=[])
    chunks = [audio[i : i + CHUNK_SAMPLES] for i in range(0, len(audio), CHUNK_SAMPLES)]
    chunks += [np.zeros(CHUNK_SAMPLES, np.int16)] * 20
    now = 0.0
    for c in chunks:
        loud = np.sqrt(np.mean(c.astype(np.float64) ** 2)) > 1000
        step = o.chunk(bool(loud), 32, now, c)
        now += 0.032
        while isinstance(step, OverlapDecode):
            step = o.heard(step.id, words, step.voiced_ms, now, -0.1, near)
        if isinstance(step, OverlapDecision):
            return step
    raise AssertionError("undecided")


@pytest.mark.parametrize(
    ("semitones", "settings", "kind", "why"),
    [
        (6, replace(S, hum=False), "interruption", "a question"),
        (-6, replace(S, hum=False), "backchannel", "near a backchannel"),
        (0, replace(S, hum=False), "backchannel", "near a backchannel"),
        (6, replace(S, hum=False, rise_st=None), "backchannel", "near a backchannel"),
    ],
)
@pytest.mark.parametrize("faint_ms", [0, 128])
def test_a_questions_rise_is_not_read_as_a_backchannel(semitones, settings, kind, why, faint_ms):
    """Words Whisper read nearly as likely as a backchannel: said with a rise (6 semitones over
    their last 250 ms) they were a question; level or falling, the reading decides. The rise
    counts when its faint end is silence to the VAD ("Okay, | and now?" in en-gb+m1)."""
    audio = glide(semitones, faint_ms)
    d = over_a_voice(audio, settings, "In that, please.", Reading("Exactly.", 0.4))
    assert (d.kind, d.why) == (kind, why)


@pytest.mark.parametrize("words", ["Mm-hmm, why?", "Mm, Y.", "Who's in that?", "How?"])
def test_words_that_ask_are_not_read_as_a_backchannel(words):
    """Words Whisper read nearly as likely as a backchannel, level: a word that asks makes them
    a question ("Mm, | why?" in espeak-ng en-029+m5 read "Mm-hmm, why?", "Mm-hmm." near)."""
    d = over_a_voice(glide(0), replace(S, hum=False), words, Reading("Mm-hmm, yeah.", 0.4))
    assert (d.kind, d.why) == ("interruption", "a question")


def test_a_long_first_stretch_is_no_hum_before_a_backchannel():
    d, _ = two_stretches(S.hum_max_ms + 64, 160, 320, "And make them.", "And make them, okay.")
    assert d.kind == "interruption"


def test_other_words_wait_words_end_ms_for_a_second_stretch():
    """The first stretch's words alone would interrupt: the overlap waits ``words_end_ms``,
    not ``end_ms``, and a second stretch within it is judged with the first."""
    d, silence = two_stretches(480, 3000, 320, "And make them.", "And make them, okay.")
    assert (d.kind, d.why) == ("interruption", "words"), "no second stretch came in time"
    assert S.words_end_ms <= silence < S.words_end_ms + 64
    d, _ = two_stretches(480, S.words_end_ms - 64, 320, "And make them.", "And make them, okay.")
    assert (d.kind, d.why) == ("backchannel", "then a backchannel")


def test_backchannels_and_stop_words_do_not_wait_words_end_ms():
    d, silence = two_stretches(480, 3000, 320, "Yeah.", "Yeah.")
    assert d.kind == "backchannel" and silence < S.words_end_ms
    d, silence = two_stretches(480, 3000, 320, "Oh no.", "Oh no.")
    assert d.kind == "interruption" and silence < S.words_end_ms


def test_while_the_person_speaks_only_stop_or_four_other_words_decide():
    assert classify("And make them, okay. Okay.", ended=False, settings=S) is None
    assert classify("What time is it", ended=False, settings=S) == "interruption", (
        '"it" alone is no backchannel: four other words'
    )
    assert classify("Got it.", ended=True, settings=S) == "backchannel"
    assert classify("Uh-huh. I see.", ended=True, settings=S) == "backchannel"


# ------------------------------------------------------------------ going on before the decision


def stretches(plan: list[tuple[int, bool]], decode, settings: OverlapSettings = S) -> list:
    """Feed ``plan`` (ms, voiced) after the 96 ms that opened the overlap, each decode answered
    at once with ``decode(voiced_ms)``; every step that is no decode, with the voice heard by
    then."""
    o = Overlap(settings, 0.0, voiced_ms=96)
    now, out = 0.0, []
    for ms, voiced in plan:
        for _ in range(ms // 32):
            step = o.chunk(voiced, 32, now)
            now += 0.032
            while isinstance(step, OverlapDecode):
                step = o.heard(step.id, decode(step.voiced_ms), step.voiced_ms, now)
            if step is not None:
                out.append((step, o.voiced_ms))
    return out


def okay_then(rest: str):
    """ "Okay," for decodes of the first stretch (320 ms of voice), ``rest`` for more."""
    return lambda voiced_ms: "Okay." if voiced_ms <= 320 else rest


def test_the_agent_goes_on_after_a_stretch_of_backchannels_before_the_decision():
    """ "Okay, | okay." in one breath (the comma's pause under end_ms): the agent goes on once
    the first "Okay," is decoded, and the decision follows on the whole."""
    steps = stretches(
        [(224, True), (128, False), (320, True), (480, False)], okay_then("Okay, okay.")
    )
    (go_on, at), (decided, _) = steps
    assert isinstance(go_on, OverlapGoOn) and go_on.text == "okay"
    assert at == 320, "after the first stretch, before the second was heard"
    assert isinstance(decided, OverlapDecision)
    assert (decided.kind, decided.text) == ("backchannel", "okay okay")


def test_what_follows_going_on_still_interrupts():
    steps = stretches(
        [(224, True), (128, False), (480, True), (480, False)], okay_then("Okay, stop there.")
    )
    # Quiet again as soon as the stop word is heard, stopped once it is read again.
    assert [type(s) for s, _ in steps] == [OverlapGoOn, OverlapPauseAgain, OverlapDecision]
    assert (steps[2][0].kind, steps[2][0].why) == ("interruption", "stop word")
    steps = stretches(
        [(224, True), (128, False), (480, True), (640, False)], okay_then("Okay, but why?")
    )
    assert steps[-1][0].kind == "interruption"


@pytest.mark.parametrize(
    "first", ["And make them.", "No.", "Okay, but", "Yeah, sure, okay, right."]
)
def test_no_going_on_on_words_that_are_not_all_backchannels(first):
    """Other words, a stop word, or more than max_words: the agent stays paused."""
    steps = stretches([(224, True), (128, False), (320, True), (640, False)], lambda _: first)
    assert not [s for s, _ in steps if isinstance(s, OverlapGoOn)], steps


def test_no_going_on_on_a_decode_of_a_stretch_not_ended():
    """A decode made while the person speaks on with no pause may end in a cut word: "Okay."
    of "Okay but" said in one go does not resume the agent; the pause after it does."""
    steps = stretches([(S.first_decode_ms + 160, True), (64, False)], lambda _: "Okay.")
    assert not [s for s, _ in steps if isinstance(s, OverlapGoOn)], "64 ms: no stretch ended"
    steps = stretches([(S.first_decode_ms + 160, True), (480, False)], lambda _: "Okay.")
    assert [type(s) for s, _ in steps] == [OverlapGoOn, OverlapDecision]


def test_going_on_is_once_per_overlap_and_can_be_turned_off():
    plan = [(224, True), (128, False), (224, True), (128, False), (224, True), (480, False)]
    steps = stretches(plan, lambda _: "Yeah.")
    assert [type(s) for s, _ in steps] == [OverlapGoOn, OverlapDecision]
    off = replace(S, go_on=False)
    steps = stretches(plan, lambda _: "Yeah.", off)
    assert [type(s) for s, _ in steps] == [OverlapDecision]
    assert steps[0][0].kind == "backchannel"


def test_the_turn_taker_resumes_the_agent_before_the_decision_then_decides():
    """The driver is told to resume (with the words so far), then the decision comes; an
    interruption after it stops the agent and is the next turn."""
    d = Driver()
    d.run(320, 0.9, words="Okay.")
    d.run(128, 0.0, words="Okay.")
    early = d.of(ResumePlayback)
    assert [r.heard for r in early] == ["okay"] and not d.of(OverlapDecided)
    d.run(480, 0.8, words="Okay, stop there.")
    d.run(320, 0.0, words="Okay, stop there.")
    [decided] = d.of(OverlapDecided)
    assert decided.decision.kind == "interruption" and d.of(StopPlayback)
    assert len(d.of(ResumePlayback)) == 1, "no resume after the stop"
    d.turns.playing(False, d.now)
    d.audible = False
    d.run(1500, 0.0)
    assert d.of(EndTurn), "the words are the next turn"


def test_a_person_who_keeps_talking_after_the_agent_went_on_pauses_it_again():
    """ "Actually, | tell me about the weather." with "Actually," heard "Ah.": the agent goes
    on, and once the person has gone on for go_on_ms it is paused again until the decision."""
    rest = S.go_on_ms + 320
    steps = stretches(
        [(224, True), (128, False), (rest, True), (640, False)], okay_then("Okay, so")
    )
    kinds = [type(s) for s, _ in steps]
    assert kinds[:2] == [OverlapGoOn, OverlapPauseAgain], steps
    assert steps[1][1] - steps[0][1] == S.go_on_ms, "paused after go_on_ms more voice"
    assert isinstance(steps[-1][0], OverlapDecision) and steps[-1][0].kind == "interruption"
    short = stretches([(224, True), (128, False), (320, True), (640, False)], okay_then("Okay, so"))
    assert OverlapPauseAgain not in [type(s) for s, _ in short], "a second half is shorter"


def _speak_answering(
    o: Overlap, ms: int, text: str, now: float, *, voiced: bool = True
) -> tuple[list, float]:
    """``ms`` of voice (or silence), each decode answered at once with ``text``; the steps that
    were not decodes."""
    out = []
    for _ in range(ms // 32):
        step = o.chunk(voiced, 32, now)
        now += 0.032
        while isinstance(step, OverlapDecode):
            step = o.heard(step.id, text, step.voiced_ms, now)
        if step is not None:
            out.append(step)
    return out, now


def test_a_slow_backchannel_is_not_cut_by_the_length_bound():
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = _speak_answering(o, S.max_ms + 160, "Okay, okay.", 0.0)
    assert o.open and o.voiced_ms > S.max_ms, steps
    steps, _ = _speak_answering(o, S.end_ms + 32, "Okay, okay.", now, voiced=False)
    d = decided(steps)
    assert (d.kind, d.why, d.text) == ("backchannel", "words", "okay okay")


@pytest.mark.parametrize("text", ["Okay, okay, tell me", "Okay, wait", "Yeah, right, okay, sure."])
def test_other_words_or_too_many_keep_the_length_bound(text):
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, _ = _speak_answering(o, S.max_ms, text, 0.0)
    d = decided(steps)
    assert d.kind == "interruption" and d.why in ("length", "stop word"), d


def test_a_backchannel_decode_left_behind_the_voice_keeps_the_length_bound():
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    assert o.heard(ask.id, "Okay,", ask.voiced_ms, now) is None
    steps, now = feed(o, S.decode_every_ms, True, now)
    [ask] = steps
    assert o.heard(ask.id, None, ask.voiced_ms, now) is None  # failed: nothing on its way
    steps, _ = feed(o, S.max_ms, True, now)
    d = decided(steps)
    assert (d.kind, d.why) == ("interruption", "length")


def test_a_stalled_recogniser_is_waited_for_no_longer_than_max_decide_ms():
    """Its words are waited for at the length bound (the person's turn waits for it too), up
    to ``max_decide_ms``: then the person is talking."""
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    assert o.heard(ask.id, "Okay,", ask.voiced_ms, now) is None
    steps, _ = feed(o, S.max_decide_ms, True, now)  # the next decode never answers
    d = decided(steps)
    assert (d.kind, d.why) == ("interruption", "bound")
    assert d.voiced_ms >= S.max_decide_ms - 96, "the bound is of time or of audio heard"


def test_a_slow_backchannel_waits_for_the_decode_on_its_way_at_the_length_bound():
    """flite's "Mhm, okay." (over 1.3 s), heard "Mm-hmm." at each decode, was stopped by the
    length bound while the next decode was in flight; its words decide now."""
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    assert o.heard(ask.id, "Mm-hmm.", ask.voiced_ms, now) is None
    steps, now = feed(o, S.decode_every_ms, True, now)
    [ask] = steps  # asked at 960 ms of voice
    steps, now = feed(o, S.max_ms - ask.voiced_ms + 64, True, now)
    assert steps == [], "at the length bound, the decode on its way is waited for"
    assert o.heard(ask.id, "Mm-hmm, okay.", ask.voiced_ms, now) is not None  # asks again
    steps, now = feed(o, S.end_ms + 32, False, now)
    assert o.open, "the newest decode is on its way"


def test_a_backchannel_whose_decode_lags_is_not_cut_by_the_length_bound():
    """Over WebRTC a decode took longer than ``decode_every_ms`` of voice: three "Mm,
    interesting."s of the twenty-third held-out set (1.2–1.3 s), heard "Mm-hmm" so far, were
    stopped by the length bound while the next decode was in flight. Its words decide: a
    backchannel's resume the agent, other words stop it."""
    lag = S.decode_every_ms + 96
    voice = S.max_ms + 160
    plan = [(True, voice - 96), (False, lag + S.words_end_ms + 96)]

    def heard(final: str) -> Callable[[OverlapDecode], tuple[str, None]]:
        return lambda ask: ("Mm-hmm." if ask.voiced_ms < S.max_ms - lag else final, None)

    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, plan, heard("Mm-hmm, interesting."), lag_ms=lag))
    assert (d.kind, d.why, d.text) == ("backchannel", "words", "mm hmm interesting"), d
    o = Overlap(S, 0.0, voiced_ms=96)
    d = decided(_drive(o, plan, heard("Mm-hmm, what about Sunday?"), lag_ms=lag))
    assert d.kind == "interruption" and d.voiced_ms > S.max_ms, d


def _tail_case(more_voice_ms: int, *, pause_ms: int = 0) -> OverlapDecision:
    """Voice decoded as "Oh, I see." at ``first_decode_ms``; then (after ``pause_ms`` of
    silence) ``more_voice_ms`` more voice; the decode of all of it heard "I'll check."."""
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = feed(o, S.first_decode_ms - 96, True, 0.0)
    [ask] = steps
    assert o.heard(ask.id, "Oh, I see.", ask.voiced_ms, now) is None
    if pause_ms:
        steps, now = feed(o, pause_ms, False, now)
        steps = [s for s in steps if isinstance(s, OverlapDecode | OverlapDecision)]
        assert steps == [], "all of the voice was decoded already"
    steps, now = _speak_answering(o, more_voice_ms, "I'll check.", now)
    steps, now = _speak_answering(o, S.words_end_ms + 64, "I'll check.", now, voiced=False)
    return decided(steps)


def test_a_backchannel_heard_before_its_fading_tail_is_one():
    """ "Oh, I see." then, with 96 ms more of its end, "O-I-T."; "Uh, sure." then "I'll
    check." (replayed: 3 false stops of the seven sets, no interruption changed up to 256 ms)."""
    d = _tail_case(96)
    assert (d.kind, d.why) == ("backchannel", "before its tail")


def test_more_than_a_tail_or_after_a_pause_the_last_words_decide():
    d = _tail_case(320)
    assert (d.kind, d.why) == ("interruption", "words")
    d = _tail_case(96, pause_ms=128)
    assert (d.kind, d.why) == ("interruption", "words")


def test_a_second_half_joined_to_a_backchannel_is_decoded_alone_too():
    """ "Sure, | sure.": the first half resumed the agent, the second is joined to it
    (``join_ms``) and read whole as "So, so, so."; alone, from after the first's end, "Sure."."""
    d = Driver()
    words, alone = halves("So, so, so.", "Sure.", "Sure.")

    d.run(320, 0.9, words=words)
    d.run(320, 0.0, words=words)
    d.run(320, 0.8, words=words)
    d.run(1000, 0.0, words=words)
    first, second = (a.decision for a in d.of(OverlapDecided))
    assert (first.kind, first.joined) == ("backchannel", False)
    assert (second.kind, second.why, second.joined) == ("backchannel", "each a backchannel", True)
    [audio] = alone
    assert np.count_nonzero(audio == np.float32(0.8)) == 320 // 32 * CHUNK_SAMPLES


def _misread(
    gap: float | None,
    settings: OverlapSettings = S,
    voice_ms: int = 480,
    text: str = "Cohen.",
    reading: str = "Oh, cool.",
    second: tuple[str | None, float | None] = (None, None),
) -> list:
    """A short overlap Whisper wrote as other words (``text``: "Cohen." for "Oh, cool."), its
    ``reading`` in backchannels' words ``gap`` nats less likely (None: not known), and the
    second recogniser's words and log-probability (``second``; None: it has none); everything
    the overlap said."""
    near = None if gap is None else Reading(reading, gap)
    o = Overlap(settings, 0.0, voiced_ms=96)
    steps, now = feed(o, voice_ms - 96, True, 0.0)
    more, now = feed(o, 32, False, now)
    asks = [s for s in steps + more if isinstance(s, OverlapDecode)]
    out: list = list(asks)
    last = asks[-1]
    out.append(o.heard(last.id, text, last.voiced_ms, now, -0.9, near))
    if isinstance(out[-1], OverlapDecode) and out[-1].second:  # asked at once: answer it
        out.append(o.heard(out[-1].id, second[0], out[-1].voiced_ms, now, second[1]))
    rest, now = feed(o, settings.words_end_ms, False, now)
    for ask in [s for s in rest if isinstance(s, OverlapDecode) and s.second]:
        rest.append(o.heard(ask.id, second[0], ask.voiced_ms, now, second[1]))
    return out + rest


@pytest.mark.parametrize("near", [0.3, -1.2, S.near_gap])
def test_words_whose_backchannel_reading_is_near_are_a_backchannel(near):
    steps = _misread(near)
    [ask] = [s for s in steps if isinstance(s, OverlapDecode)]
    assert ask.within == READING_WORDS, "asked to read the audio in backchannels' words"
    d = decided(steps)
    assert (d.kind, d.why) == ("backchannel", "near a backchannel")


@pytest.mark.parametrize("near", [None, 3.0])
def test_words_whose_backchannel_reading_is_far_or_unknown_interrupt(near):
    d = decided(_misread(near))
    assert (d.kind, d.why) == ("interruption", "words")


def test_a_backchannel_reading_is_looked_for_only_in_a_short_overlap():
    settings = replace(S, near_max_ms=320, max_ms=2000)
    steps = _misread(0.1, settings, voice_ms=480)
    assert all(s.within == () for s in steps if isinstance(s, OverlapDecode))
    assert decided(steps).kind == "interruption", "longer than near_max_ms: the words decide"
    off = _misread(0.1, replace(S, near_gap=None))
    assert all(s.within == () for s in off if isinstance(s, OverlapDecode)), "never asked"
    assert decided(off).kind == "interruption"


def test_a_stop_word_stops_however_near_its_backchannel_reading():
    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    _, now = feed(o, 384, True, 0.0)
    [ask], now = feed(o, 32, False, now)
    d = o.heard(ask.id, "Oh, no.", ask.voiced_ms, now, -0.9, Reading("Oh, okay.", -2.0))
    assert isinstance(d, OverlapDecision) and (d.kind, d.why) == ("interruption", "stop word")


@pytest.mark.parametrize(
    ("second", "kind"),
    [
        (("Oh, great.", -0.3), "backchannel"),  # sure of a backchannel: "Oh, wait." misheard
        (("Oh, great.", -0.8), "interruption"),  # unsure
        (("Oh, wait.", -0.1), "interruption"),  # it hears the stop word too
        (("Oh, great?", -0.1), "backchannel"),  # a mark is no word that asks
        (("Oh, what?", -0.1), "interruption"),  # it asks
        ((None, None), "interruption"),  # no second recogniser, or it failed
    ],
)
def test_a_stop_word_in_a_short_overlap_is_read_again(second, kind):
    """tiny.en hears stop words in espeak-ng's backchannels ("Oh, great." as "Oh, wait.", "Ah,
    gotcha." as "Uh, stop."): once the person has paused, a short overlap's stop word is read
    again by the second recogniser, as other words are; what it is sure is a backchannel is
    one, anything else stops the agent on the stop word."""
    steps = _misread(None, text="Oh, wait.", second=second)
    [ask] = [s for s in steps if isinstance(s, OverlapDecode) and s.second]
    assert ask.voiced_ms == 480
    d = decided(steps)
    assert (d.kind, d.why) == (kind, "second reader" if kind == "backchannel" else "stop word")


def test_a_stop_word_heard_while_the_person_speaks_is_read_again_at_their_pause():
    """tiny.en heard "Oh, wait" while espeak-ng's "Oh, great." went on: in a short overlap,
    with the agent paused, the stop word waits for the person's pause and is read again then
    (the second recogniser hears "Oh, great." and the agent resumes)."""

    def answer(ask: OverlapDecode) -> tuple[str, float]:
        return ("Oh, great.", -0.2) if ask.second else ("Oh, wait", -0.9)

    o = Overlap(S, 0.0, voiced_ms=96)
    out = _drive(o, [(True, 704), (False, 600)], answer)
    asks = [s for s in out if isinstance(s, OverlapDecode)]
    assert asks[0].voiced_ms == 640 and not asks[0].second, "heard while the person spoke"
    assert asks[-1].second and asks[-1].voiced_ms == 800
    d = decided(out)
    assert (d.kind, d.why, d.text) == ("backchannel", "second reader", "oh great")


def _okay_then_stop(ask: OverlapDecode) -> tuple[str, float]:
    """ "Okay." for the first stretch (320 ms of voice), "Okay, stop" for more."""
    return ("Okay.", -0.2) if ask.voiced_ms <= 320 else ("Okay, stop", -0.2)


@pytest.mark.parametrize(
    ("second", "kind", "why"),
    [
        (("Okay, great.", -0.2), "backchannel", "second reader"),  # "Okay, stop" misheard
        (("Okay, stop.", -0.2), "interruption", "stop word"),  # meant: it stops
        (("Okay, great.", -0.9), "interruption", "stop word"),  # read unsure
    ],
)
def test_a_stop_word_after_the_agent_went_on_pauses_it_again_to_be_read_again(second, kind, why):
    """Resumed before the decision (``go_on``), the agent is audible: a stop word heard then
    ("Okay, | stop there.", or tiny.en's "Oh, hold on." for "Oh, all right.") pauses it again
    as soon as it is heard, and the second recogniser reads the voice once the person pauses,
    as if the agent had stayed paused."""

    def answer(ask: OverlapDecode) -> tuple[str, float]:
        return second if ask.second else _okay_then_stop(ask)

    o = Overlap(S, 0.0, voiced_ms=96)
    out = _drive(o, [(True, 224), (False, 128), (True, 480), (False, 600)], answer)
    went_on = next(i for i, s in enumerate(out) if isinstance(s, OverlapGoOn))
    again = next(i for i, s in enumerate(out) if isinstance(s, OverlapPauseAgain))
    [read] = [s for s in out if isinstance(s, OverlapDecode) and s.second]
    assert went_on < again < out.index(read), "quiet again before it is read again"
    assert read.voiced_ms == 800, "read once the person paused, all of the voice"
    d = decided(out)
    assert (d.kind, d.why, d.voiced_ms) == (kind, why, 800)


def test_a_stop_word_after_the_agent_went_on_stops_at_once_without_a_second_reader():
    o = Overlap(replace(S, second_sure=None), 0.0, voiced_ms=96)
    out = _drive(o, [(True, 224), (False, 128), (True, 480)], _okay_then_stop)
    assert any(isinstance(s, OverlapGoOn) for s in out)
    assert not any(isinstance(s, OverlapPauseAgain) for s in out)
    d = decided(out)
    assert (d.kind, d.why, d.voiced_ms) == ("interruption", "stop word", 640)


def test_a_stop_word_after_the_agent_went_on_in_a_long_overlap_stops_at_once():
    o = Overlap(replace(S, near_max_ms=480, max_ms=2000), 0.0, voiced_ms=96)
    out = _drive(o, [(True, 224), (False, 128), (True, 480)], _okay_then_stop)
    assert not any(isinstance(s, OverlapDecode) and s.second for s in out)
    d = decided(out)
    assert (d.kind, d.why, d.voiced_ms) == ("interruption", "stop word", 640)


def test_a_stop_word_in_a_long_overlap_stops_at_once():
    """Paused, in an overlap longer than ``near_max_ms``, a stop word is not read again."""
    settings = replace(S, near_max_ms=320, max_ms=2000)
    steps = _misread(None, settings, text="Oh, wait.", second=("Oh, great.", -0.1))
    assert not any(isinstance(s, OverlapDecode) and s.second for s in steps)
    assert (decided(steps).kind, decided(steps).why) == ("interruption", "stop word")


def test_a_reading_that_is_the_decodes_first_words_alone_is_no_backchannel():
    """ "Okay." for "Okay, but what about me?" leaves what was said after it out (flite slt:
    0.19 nats less likely); a reading of all of it ("Okay, yep." for "Okay, you left.") is
    one."""
    d = decided(_misread(-0.2, text="Okay, but what about me?", reading="Okay."))
    assert (d.kind, d.why) == ("interruption", "words")
    d = decided(_misread(0.5, text="Okay, you left.", reading="Okay, yep."))
    assert (d.kind, d.why) == ("backchannel", "near a backchannel")


@pytest.mark.parametrize("text", ["In my gym, so it's blood.", "Let's true."])
def test_words_a_second_recogniser_is_sure_are_a_backchannel_are_one(text):
    """Whisper base, reading again what tiny.en wrote as "In my gym, so it's blood.", heard
    "Mm-hmm, sounds good." at -0.25: a backchannel, decided on its words. It reads all the
    voice, asked as soon as the words would interrupt: at once for words enough to decide
    (``EARLY_WORDS``), at ``end_ms`` for fewer (their answer back while the silence is waited
    out)."""
    steps = _misread(None, text=text, second=("Mm-hmm, sounds good.", -0.25))
    [ask] = [s for s in steps if isinstance(s, OverlapDecode) and s.second]
    assert (ask.start, ask.last_stretch, ask.within, ask.voiced_ms) == (0, False, (), 480)
    d = decided(steps)
    assert (d.kind, d.why, d.text) == ("backchannel", "second reader", "mm hmm sounds good")


@pytest.mark.parametrize(
    "second",
    [
        ("Mm-hmm, sounds good.", -0.8),  # unsure
        ("Mm-hmm, sounds good.", None),  # how sure not known
        ("Let's go, then.", -0.1),  # other words
        ("Mm, stop.", -0.1),  # a stop word
        ("Mm-hmm, why?", -0.1),  # it asks
        (None, None),  # no second recogniser, or it failed
    ],
)
def test_words_a_second_recogniser_does_not_hear_surely_as_a_backchannel_interrupt(second):
    d = decided(_misread(None, text="In my gym, so it's blood.", second=second))
    assert (d.kind, d.why) == ("interruption", "words")


def test_a_second_recogniser_is_not_asked_when_off_or_when_the_person_asks_or_goes_on():
    for settings, text in [
        (replace(S, second_sure=None), "In my gym, so it's blood."),
        (S, "Mm, why did you say that?"),
        (S, "Okay, and then what?"),
    ]:
        steps = _misread(None, settings, text=text, second=("Mm-hmm.", -0.1))
        assert not any(isinstance(s, OverlapDecode) and s.second for s in steps), text
        assert decided(steps).kind == "interruption"
    with pytest.raises(ValueError, match="second_sure"):
        OverlapSettings(second_sure=0.5)


def _drive(
    o: Overlap, segments: list[tuple[bool, int]], answer: Callable, lag_ms: int = 0
) -> list:
    """Feed ``segments`` (voiced or not, ms) in 32 ms chunks, answering each decode ``lag_ms``
    after it was asked (0: at once, and any decode an answer asks for) with ``answer(ask)``
    (its text and log-probability); all the overlap said."""
    out: list = []
    now = 0.0
    waiting: list[tuple[float, OverlapDecode]] = []
    for voiced, ms in segments:
        for _ in range(ms // 32):
            steps = [o.chunk(voiced, 32, now)]
            now += 0.032
            while steps:
                step = steps.pop(0)
                if isinstance(step, OverlapDecode):
                    waiting.append((now + lag_ms / 1000, step))
                if step is not None:
                    out.append(step)
                for due, ask in [w for w in waiting if w[0] <= now]:
                    waiting.remove((due, ask))
                    text, logprob = answer(ask)
                    steps.append(o.heard(ask.id, text, ask.voiced_ms, now, logprob))
    return out


@pytest.mark.parametrize("asked", [True, False])
def test_a_second_recogniser_is_not_asked_when_a_decode_heard_a_question(asked):
    """ "Yeah, | but why?" in en-us+m5 was read whole "Yeah, not right.", its second part
    alone "That's why.", and by the second recogniser "Yeah, that's right." sure enough: any
    decode of the overlap that heard a word that asks keeps it from being asked. Here the
    decode while the person spoke heard "Mm, why", the whole "Mm, white." (without it, "Mm,
    wide", the second recogniser is asked).
    """

    def answer(ask: OverlapDecode) -> tuple[str, float]:
        if ask.second:
            return "Mm-hmm, right.", -0.2
        if ask.voiced_ms < 800:
            return ("Mm, why" if asked else "Mm, wide"), -0.9
        return "Mm, white.", -0.9

    o = Overlap(S, 0.0, voiced_ms=96)
    out = _drive(o, [(True, 704), (False, 800)], answer)
    assert [s.voiced_ms for s in out if isinstance(s, OverlapDecode) and not s.second] == [
        640,
        800,
    ]
    seconds = [s for s in out if isinstance(s, OverlapDecode) and s.second]
    d = decided(out)
    if asked:
        assert not seconds and (d.kind, d.why) == ("interruption", "words")
    else:
        assert seconds and (d.kind, d.why) == ("backchannel", "second reader")


def test_a_second_reading_of_less_voice_than_heard_since_is_asked_again():
    """Words enough to decide at once (``EARLY_WORDS``), heard when the person paused, are
    read again first. The person said more while the second recogniser read them: its answer
    is of less voice than was heard, and the whole is read again."""
    o = Overlap(S, 0.0, voiced_ms=96)
    _, now = feed(o, 384, True, 0.0)
    [ask], now = feed(o, 32, False, now)
    again = o.heard(ask.id, "In my gym, so it's blood.", ask.voiced_ms, now, -0.9)
    assert isinstance(again, OverlapDecode) and again.second and again.voiced_ms == 480
    steps, now = feed(o, 160, True, now)  # more voice meanwhile
    assert o.heard(again.id, "Mm-hmm.", 480, now, -0.1) is None, "of less voice: not decided"
    steps, now = feed(o, 64, False, now)
    [ask] = [s for s in steps if isinstance(s, OverlapDecode)]
    more = o.heard(ask.id, "In my gym, so it's blood.", ask.voiced_ms, now, -0.9)
    assert isinstance(more, OverlapDecode) and more.second and more.voiced_ms == 640


def test_near_max_ms_is_a_length():
    with pytest.raises(ValueError, match="near_max_ms"):
        OverlapSettings(near_max_ms=0)


def test_a_second_stretch_heard_alone_as_other_words_is_no_backchannel_however_near():
    """ "Yeah, | but why?" (en-029+m2): the first stretch heard "Yeah, yeah.", the whole
    "You've got right." with "Yeah, alright." 0.79 nats less likely, the second stretch alone
    "But right.": it interrupts. Heard alone as a backchannel, the near reading decides; and
    so does a reading Whisper found likelier than its own words ("Oh, | true." in
    en-gb-x-gbclan+m4: "Or, true.", "All true." 1.2 nats likelier, its second half alone "Let's
    move."), unless that second half alone is a stop word."""

    def run(second_alone: str, gap: float = 0.79) -> OverlapDecision:
        o = Overlap(S, 0.0, voiced_ms=96)
        now, asked = 0.0, []
        schedule = [True] * 7 + [False] * 4 + [True] * 11 + [False] * 30  # 32 ms chunks
        for voiced in schedule:
            step = o.chunk(voiced, 32, now)
            now += 0.032
            while isinstance(step, OverlapDecode):
                asked.append(step)
                if step.last_stretch:
                    step = o.heard(step.id, second_alone, step.voiced_ms, now, -0.6)
                elif step.voiced_ms <= 320:
                    step = o.heard(step.id, "Yeah, yeah.", step.voiced_ms, now, -1.0)
                else:
                    near = Reading("Yeah, alright.", gap)
                    step = o.heard(step.id, "You've got right.", step.voiced_ms, now, -0.8, near)
            if isinstance(step, OverlapDecision):
                assert any(a.last_stretch for a in asked), "the second stretch decoded alone"
                return step
        raise AssertionError("undecided")

    assert run("But right.").kind == "interruption"
    assert run("But right.", gap=0.0).kind == "interruption", "as likely is not likelier"
    assert (run("Right.").kind, run("Right.").why) == ("backchannel", "each a backchannel")
    likelier = run("But right.", gap=-1.2)
    assert (likelier.kind, likelier.why) == ("backchannel", "near a backchannel")
    # A stop word alone is no misreading a likelier reading outweighs ("Mm, no." in
    # en-gb-x-rp+f4: "Mm-hmm, load.", alone "No.").
    assert run("No.", gap=-1.2).kind == "interruption"


# ------------------------------------------------------------------ two parts in one stretch


def one_stretch(
    first: str,
    gap_ms: int,
    second: str | np.ndarray,
    whole: str,
    alone: str,
    near: Reading | None = None,
    settings: OverlapSettings = S,
    so_far: str | None = None,
) -> tuple[OverlapDecision, list[OverlapDecode], int]:
    """Recorded clips ``first``, ``gap_ms`` of silence the VAD heard as voice (a comma shorter
    than ``STRETCH_GAP_MS``), ``second``, then silence. Decodes of all of it say ``whole``
    (``so_far`` while the person still speaks; None: ``whole``); one of the part after the
    pause says ``alone``, read in backchannels' words as ``near``. The decision, the decodes
    asked for, and where the second part began in the audio."""
    a = read_wav(CLIPS / f"{first}.wav")[0]
    b = second if isinstance(second, np.ndarray) else read_wav(CLIPS / f"{second}.wav")[0]
    pcm = np.concatenate([a, np.zeros(gap_ms * 16, np.int16), b])
    chunks = [pcm[i : i + CHUNK_SAMPLES] for i in range(0, len(pcm), CHUNK_SAMPLES)]
    plan = [(c, True) for c in chunks] + [(np.zeros(CHUNK_SAMPLES, np.int16), False)] * 30
    o = Overlap(settings, 0.0, audio=[])
    now, asked = 0.0, []
    for c, voiced in plan:
        step = o.chunk(voiced, 32, now, c)
        now += 0.032
        while isinstance(step, OverlapDecode):
            asked.append(step)
            if step.start:
                step = o.heard(step.id, alone, step.voiced_ms, now, -0.8, near)
            else:
                text = whole if so_far is None or not voiced else so_far
                step = o.heard(step.id, text, step.voiced_ms, now, -0.8)
        if isinstance(step, OverlapDecision):
            return step, asked, len(a) + gap_ms * 16
    raise AssertionError("undecided")


def test_a_second_part_after_a_short_pause_heard_alone_as_a_backchannel_is_one():
    """espeak-ng's "Okay, | true." with a comma the VAD heard as voice: one stretch, read
    whole "Okay, two"; the part after the pause alone, "True."."""
    d, asked, onset = one_stretch("yeah.piper", 120, "yeah.piper", "Yeah, the end.", "Yeah.")
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")
    [part] = [a for a in asked if a.start]
    assert not part.last_stretch and part.within == READING_WORDS
    assert onset - 2000 <= part.start <= onset, "from just before the second part's onset"


@pytest.mark.parametrize(
    ("alone", "near", "kind"),
    [
        ("The other one.", None, "interruption"),  # a request after a backchannel
        ("The ice.", Reading("Nice.", 0.5), "backchannel"),  # "Uh-huh, nice." in en-029+m1
        ("The ice.", Reading("Nice.", 1.5), "interruption"),  # past near_gap
        ("Stop.", Reading("Okay.", -1.0), "interruption"),  # a stop word, however near
        ("But right.", Reading("Right.", 0.3), "interruption"),  # en-029+m2 "Yeah, | but why?"
        ("Nice, and then?", Reading("Nice.", 0.3), "interruption"),  # its first words alone
        (None, None, "interruption"),  # the decode failed
    ],
)
def test_the_second_part_alone_decides_by_its_words_or_its_reading(alone, near, kind):
    d, asked, _ = one_stretch("yeah.piper", 120, "yeah.piper", "Yeah, the eyes.", alone, near)
    assert any(a.start for a in asked), "the second part decoded alone"
    assert d.kind == kind, d


@pytest.mark.parametrize(
    ("second", "settings", "kind"),
    [
        ("who-are-you.en-us", S, "interruption"),  # no nasal frame: no hum was said
        ("mm-hmm.en-us", S, "backchannel"),  # a hum's voice
        ("who-are-you.en-us", replace(S, nasal_floor=None), "backchannel"),
    ],
)
def test_a_second_part_read_as_a_hum_needs_a_hums_voice(second, settings, kind):
    """ "Okay, | go back." in en-gb-scotland+f2: its second part alone "Go, Ma'a.", read
    "Mm-hmm." 1.3 nats likelier, over a voice of 8 % nasal frames."""
    near = Reading("Mm-hmm.", -1.3)
    d, asked, _ = one_stretch(
        "yeah.piper", 120, second, "Yeah, go back.", "Go, Ma'a.", near, settings
    )
    assert any(a.start for a in asked), "the second part decoded alone"
    assert d.kind == kind, d


@pytest.mark.parametrize(
    ("gap_ms", "whole", "settings"),
    [
        (32, "Yeah, the end.", S),  # no pause to part it at
        (120, "Tell me, yeah.", S),  # it does not begin as a backchannel does
        (120, "Yeah, the end.", replace(S, hum_max_ms=160)),  # a first part too long
    ],
)
def test_no_second_part_is_decoded_without_a_pause_after_a_backchannels_beginning(
    gap_ms, whole, settings
):
    d, asked, _ = one_stretch("yeah.piper", gap_ms, "yeah.piper", whole, "Yeah.", None, settings)
    assert not any(a.start for a in asked)
    assert (d.kind, d.why) == ("interruption", "words")


def test_four_words_heard_after_the_person_stopped_wait_for_the_second_part():
    """espeak-ng's "Mhm, | cool." read whole "And they can go": four words that are no
    backchannel decide at once while the person speaks, but once they stopped, the second
    part alone ("Cool.") is asked first."""
    whole, so_far = "And they can go.", "And they can."
    d, _, _ = one_stretch("mm-hmm.piper", 120, "yeah.piper", whole, "Cool.", so_far=so_far)
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")
    d, _, _ = one_stretch("mm-hmm.piper", 120, "yeah.piper", whole, "Go back.", so_far=so_far)
    assert (d.kind, d.why) == ("interruption", "words")
    d, _, _ = one_stretch("mm-hmm.piper", 120, "yeah.piper", whole, "Cool.", so_far=whole)
    assert (d.kind, d.why) == ("interruption", "words"), "heard while speaking: at once"


def test_the_turn_taker_decodes_the_part_after_the_pause_from_the_overlaps_audio():
    """Through the turn-taker (the VAD bridging the comma): the decode of the second part is
    the overlap's audio from the sample the overlap named, so none of the first part's voice."""
    a, _ = read_wav(CLIPS / "yeah.piper.wav")
    b, _ = read_wav(CLIPS / "stop.piper.wav")
    pcm = np.concatenate([np.zeros(3200, np.int16), a, np.zeros(1920, np.int16), b])
    pcm = np.pad(pcm, (0, -len(pcm) % CHUNK_SAMPLES))
    turns = TurnTaker(SessionSettings(partial_interval_ms=0, turn_rule=TurnRule()))
    turns.playing(True, 0.0)
    now, out, parts = 100.0, [], []

    def holds(audio: np.ndarray, clip: np.ndarray) -> np.ndarray:
        """Where ``clip``'s first loud samples are in ``audio``."""
        mark = clip[np.argmax(np.abs(clip) > 3000) :][:64]
        windows = np.lib.stride_tricks.sliding_window_view(audio, len(mark))
        return np.flatnonzero((windows == mark).all(axis=1))

    chunks = [pcm[i : i + CHUNK_SAMPLES] for i in range(0, len(pcm), CHUNK_SAMPLES)]
    voiced_from = 3200 // CHUNK_SAMPLES
    for i, c in enumerate(chunks + [np.zeros(CHUNK_SAMPLES, np.int16)] * 30):
        p = 0.9 if voiced_from <= i < len(chunks) else 0.0
        got = turns.hear(c, p, now, agent_audible=True)
        for act in got:
            if isinstance(act, StartOverlapDecode):
                alone = holds(act.audio, a).size == 0
                parts += [act.audio] if alone else []
                text = "Great." if alone else "Yeah, the case."
                got += turns.overlap_heard(act.id, text, act.voiced_ms, now)
        out += got
        now += CHUNK_S
    [d] = [x.decision for x in out if isinstance(x, OverlapDecided)]
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")
    [part] = parts
    [at] = holds(part, b) - np.argmax(np.abs(b) > 3000)
    assert 0 < at <= 100 * 16 + 160, "from ~100 ms before the second part's onset"
    assert np.array_equal(part[at : at + b.size], b), "all of the second part"


def test_a_second_part_that_rises_is_still_decoded_alone():
    """The rise guards the rules that guess; the second part's own decode is no guess: flite
    awb's "Mhm, | yes." rises 2 semitones and was resumed on "each a backchannel"."""
    rise = glide(6)[-8000:]
    d, asked, _ = one_stretch("yeah.piper", 120, rise, "Yeah, the ice.", "Yes.")
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")
    assert any(a.start for a in asked), "the part after the pause, alone"


# ------------------------------------------------------------------ a slow second part


def slow_two_parts(
    first_ms: int, second_ms: int, first: str, so_far: str, alone: str | None
) -> tuple[OverlapDecision, list[OverlapDecode]]:
    """A first stretch of voice decoded ``first``, 160 ms of silence, a second stretch of
    ``second_ms`` during which decodes of all of it say ``so_far``, then silence; a decode of
    the second stretch alone says ``alone``. The decision and the decodes asked for."""
    o = Overlap(S, 0.0, voiced_ms=96)
    now, asked = 0.0, []
    for ms, voiced in [(first_ms - 96, True), (160, False), (second_ms, True), (1600, False)]:
        for _ in range(ms // 32):
            step = o.chunk(voiced, 32, now)
            now += 0.032
            while isinstance(step, OverlapDecode):
                asked.append(step)
                text = first if step.voiced_ms <= first_ms else so_far
                step = o.heard(step.id, alone if step.last_stretch else text, step.voiced_ms, now)
            if isinstance(step, OverlapDecision):
                return step, asked
    raise AssertionError("undecided")


def test_the_length_bound_waits_for_a_slow_second_part_after_a_backchannel():
    """espeak-ng en-us+f1's "Mhm, | nice." (1.4 s) read "Mm-hmm, hi." was stopped by the length
    bound before its end; its second part alone reads "Nice."."""
    d, asked = slow_two_parts(480, 960, "Mm-hmm.", "Mm-hmm, hi.", "Nice.")
    assert (d.kind, d.why) == ("backchannel", "each a backchannel")
    assert d.voiced_ms > S.max_ms and any(a.last_stretch for a in asked)
    d, _ = slow_two_parts(480, 960, "Mm-hmm.", "Mm-hmm, hi.", "Hi there.")
    assert (d.kind, d.why) == ("interruption", "words"), "the second part's words decide"


@pytest.mark.parametrize(
    ("first_ms", "first", "so_far"),
    [
        (480, "Tell me.", "Tell me, hi."),  # it does not begin with a backchannel's word
        (960, "Okay.", "Okay, hi."),  # the first part is too long for a backchannel's
        (480, "Okay.", "Okay, but hi."),  # a backchannel's word that goes on: no reading
    ],
)
def test_the_length_bound_holds_for_other_speech(first_ms, first, so_far):
    d, _ = slow_two_parts(first_ms, 960, first, so_far, "Nice.")
    if " but " in so_far:
        assert d.kind == "backchannel", "the second part's own words still decide"
        return
    assert (d.kind, d.why) == ("interruption", "length")


def test_four_other_words_or_a_stop_word_decide_a_slow_second_part_at_once():
    d, _ = slow_two_parts(480, 960, "Okay.", "Okay, tell me the time.", "Nice.")
    assert (d.kind, d.why) == ("interruption", "words") and d.voiced_ms < S.max_ms + 320
    d, _ = slow_two_parts(480, 960, "Okay.", "Okay, hold on.", "Nice.")
    assert (d.kind, d.why) == ("interruption", "stop word")


def test_a_person_who_keeps_talking_after_a_backchannels_word_is_stopped_by_the_bound():
    d, _ = slow_two_parts(480, 4000, "Okay.", "Okay, hi.", "Nice.")
    assert (d.kind, d.why) == ("interruption", "bound")
    assert d.voiced_ms > S.max_ms + 960, "past the length bound, up to max_decide_ms"


@pytest.mark.parametrize(
    ("alone", "near", "kind"),
    [
        ("Exactly.", None, "backchannel"),  # "Uh-huh, | exactly." read "uh-huh and now"
        ("And then.", None, "interruption"),  # "Okay, | and then?"
        ("Next, please.", Reading("Exactly.", 0.2), "interruption"),  # words, not a reading
        ("", None, "interruption"),  # no words alone: the whole's "and" decides
    ],
)
def test_a_backchannels_word_then_and_asks_the_second_part_and_its_words_decide(alone, near, kind):
    d, asked, _ = one_stretch("yeah.piper", 120, "yeah.piper", "Yeah, and now.", alone, near)
    assert any(a.start for a in asked), "the part after the pause, alone"
    why = "each a backchannel" if kind == "backchannel" else "goes on"
    assert (d.kind, d.why) == (kind, why)


# ------------------------------------------------------------------ "Oh," heard "No."


def test_a_lone_no_waits_for_what_follows_it():
    """flite slt's "Oh, | okay." and espeak-ng's "Oh, | fine." (en-gb+m3): the first part
    alone was written "No." and stopped the agent before the second was heard."""
    d, _ = two_stretches(320, 160, 320, "No.", "Oh, okay.")
    assert (d.kind, d.why) == ("backchannel", "words")
    d, _ = two_stretches(320, 160, 320, "No.", "No, that's wrong.")
    assert (d.kind, d.why) == ("interruption", "stop word")
    d, _ = two_stretches(320, 160, 320, "No.", "Oh, no.")
    assert (d.kind, d.why) == ("interruption", "stop word"), "a stop word in the whole"


def test_a_lone_no_stops_after_words_end_ms_of_silence():
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = _speak_answering(o, 224, "No.", 0.0)
    steps, _ = _speak_answering(o, S.words_end_ms + 64, "No.", now, voiced=False)
    d = decided(steps)
    assert (d.kind, d.why, d.text) == ("interruption", "stop word", "no")
    assert o.silence_ms >= S.words_end_ms


@pytest.mark.parametrize(("ms", "text"), [(224, "Stop."), (224, "No, stop."), (960, "No.")])
def test_other_stop_words_or_a_long_no_stop_at_once(ms, text):
    o = Overlap(S, 0.0, voiced_ms=96)
    steps, now = _speak_answering(o, ms, text, 0.0)
    steps += _speak_answering(o, S.end_ms, text, now, voiced=False)[0]
    d = decided(steps)
    assert (d.kind, d.why) == ("interruption", "stop word")
    assert o.silence_ms <= S.end_ms, "at once"


def test_past_the_length_bound_the_second_parts_reading_does_not_decide():
    """The bound stopped such voice before it waited for a slow second part: a reading in
    backchannels' words (a guess) does not overturn the part's own words there."""
    o = Overlap(S, 0.0, voiced_ms=96)
    now, steps = 0.0, []
    near = Reading("Nice.", 0.2)
    for ms, voiced in [(384, True), (160, False), (960, True), (1600, False)]:
        for _ in range(ms // 32):
            step = o.chunk(voiced, 32, now)
            now += 0.032
            while isinstance(step, OverlapDecode):
                if step.last_stretch:
                    step = o.heard(step.id, "The ice.", step.voiced_ms, now, -0.8, near)
                else:
                    text = "Mm-hmm." if step.voiced_ms <= 480 else "Mm-hmm, the eyes."
                    step = o.heard(step.id, text, step.voiced_ms, now)
            steps.append(step)
    d = decided([s for s in steps if s is not None])
    assert d.voiced_ms > S.max_ms and (d.kind, d.why) == ("interruption", "words")
