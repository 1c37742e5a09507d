"""The turn-taker's rules on synthetic input: probabilities per 32 ms chunk, a clock handed in.

No model runs here: each test builds the VAD's output and the results of decodes by hand, so
every rule is checked exactly and the whole file runs in milliseconds.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gateway.proxy.overlap import OverlapSettings
from gateway.proxy.settings import SessionSettings
from gateway.proxy.turn_rule import TurnRule, Verdict
from gateway.proxy.turn_taker import (
    CancelDecode,
    ContinueTurn,
    EndTurn,
    PausePlayback,
    ShowPartial,
    Sleep,
    StartDecode,
    StartPartial,
    StateChanged,
    StopPlayback,
    TurnTaker,
)
from gateway.voice.endpoint import EndpointSettings
from gateway.voice.vad import CHUNK_SAMPLES
from tests.proxy.test_turn_rule import PATIENT, SEMANTIC

CHUNK_S = CHUNK_SAMPLES / 16_000  # 32 ms


class Driver:
    """Feeds a turn-taker chunk by chunk on a simulated clock and keeps what it returned."""

    def __init__(self, **settings) -> None:
        settings.setdefault("partial_interval_ms", 0)
        settings.setdefault("turn_rule", TurnRule())  # the transcript rule, unless given
        self.turns = TurnTaker(SessionSettings(**settings))
        self.now = 100.0
        self.actions: list = []
        self.audible = False
        self.idle = False  # what the driver says of the speech model

    def run(self, ms: int, p: float) -> list:
        """``ms`` of chunks at speech probability ``p``; the actions they caused."""
        out: list = []
        for _ in range(round(ms / 32)):
            chunk = np.full(CHUNK_SAMPLES, p, np.float32)
            out += self.turns.hear(
                chunk, p, self.now, agent_audible=self.audible, model_idle=self.idle
            )
            self.now += CHUNK_S
        self.actions += out
        return out

    def of(self, kind: type, actions: list | None = None) -> list:
        return [a for a in (self.actions if actions is None else actions) if isinstance(a, kind)]

    def judge(self, text: str | None, **scores: float) -> list:
        [decode] = self.of(StartDecode)[-1:]
        out = self.turns.judged(
            decode.id, None if text is None else Verdict(text, scores), self.now
        )
        self.actions += out
        return out


def ended_at(d: Driver, ms: int) -> tuple[int, EndTurn] | None:
    """Feed silence 32 ms at a time; the silence (ms) at which the turn ended, and the end."""
    for i in range(1, ms // 32 + 1):
        [end] = d.of(EndTurn, d.run(32, 0.0)) or [None]
        if end is not None:
            return i * 32, end
    return None


# ------------------------------------------------------------------ today's rule


def test_speech_starts_a_turn_and_interrupts_the_agent():
    d = Driver()
    out = d.run(320, 0.9)
    assert StateChanged("hearing") in out and StopPlayback() in out
    assert d.turns.state == "hearing" and d.turns.active


def test_a_pause_starts_a_decode_of_the_audio_so_far_and_speech_cancels_it():
    d = Driver()
    d.run(320, 0.0)
    d.run(640, 0.9)
    out = d.run(128, 0.0)
    [decode] = d.of(StartDecode, out)
    # Pre-roll (300 ms) + 640 ms of speech + the silence so far (speculate_ms, 64 ms: two
    # chunks); speech ends at 640 ms in.
    assert decode.voiced_end == len(decode.audio) - 2 * CHUNK_SAMPLES
    assert abs(decode.speech_end_s - (decode.voiced_end / 16_000)) < 1e-9
    out = d.run(64, 0.9)
    assert d.of(CancelDecode, out) == [CancelDecode(decode.id)]
    out = d.run(128, 0.0)
    assert d.of(StartDecode, out)[0].id != decode.id


def _decode_starts_at(d: Driver) -> int:
    """Silence (ms) at which the pause's decode was asked for."""
    for i in range(1, 8):
        if d.of(StartDecode, d.run(32, 0.0)):
            return 32 * i
    raise AssertionError("no decode within 224 ms of silence")


def test_the_decode_starts_sooner_while_the_model_is_idle():
    d = Driver()
    d.run(800, 0.9)
    assert _decode_starts_at(d) == 64  # speculate_ms: someone else may need the model
    d.run(64, 0.9)  # speech resumes
    d.idle = True
    assert _decode_starts_at(d) == 32  # idle_speculate_ms: a wasted decode delays nobody
    d.run(64, 0.9)
    d.turns.settings = replace(
        d.turns.settings, endpoint=replace(d.turns.settings.endpoint, idle_speculate_ms=64)
    )
    assert _decode_starts_at(d) == 64, "the setting is what the turn-taker reads"


def test_the_model_becoming_idle_mid_pause_starts_the_decode_at_once():
    d = Driver()
    d.run(800, 0.9)
    d.run(32, 0.0)  # 32 ms of silence while busy: nothing yet
    assert d.of(StartDecode) == []
    d.idle = True
    out = d.run(32, 0.0)
    [decode] = d.of(StartDecode, out)
    assert decode.voiced_end == len(decode.audio) - 2 * CHUNK_SAMPLES
    assert d.of(StartDecode, d.run(64, 0.0)) == [], "one decode per pause"


def test_a_finished_sentence_ends_at_the_short_pause():
    d = Driver()
    d.run(800, 0.9)
    d.run(128, 0.0)
    assert d.judge("Turn on the lights.") == []  # 128 ms: not yet
    silence, end = ended_at(d, 1000)
    assert silence == 96  # 128 + 96 = 224 ms, the first chunk past pause_ms (200)
    assert end.early and end.decode == d.of(StartDecode)[-1].id


def test_a_verdict_arriving_late_ends_the_turn_at_once():
    d = Driver()
    d.run(800, 0.9)
    d.run(320, 0.0)
    [end] = d.of(EndTurn, d.judge("Turn on the lights."))
    assert end.early


@pytest.mark.parametrize(
    "text", ["I would like to go to the", "Turn on the lights and", "Stop.", "Well..."]
)
def test_unfinished_or_one_word_transcripts_wait_the_full_silence(text):
    d = Driver()
    d.run(800, 0.9)
    d.run(128, 0.0)
    d.judge(text)
    silence, end = ended_at(d, 1500)
    assert 128 + silence >= 700 and not end.early
    assert end.decode is not None, "the decode of exactly this audio is reused"


def test_a_failed_decode_waits_the_full_silence():
    d = Driver()
    d.run(800, 0.9)
    d.run(128, 0.0)
    d.judge(None)
    silence, end = ended_at(d, 1500)
    assert 128 + silence >= 700 and not end.early


def test_an_outdated_verdict_is_ignored():
    d = Driver()
    d.run(800, 0.9)
    d.run(128, 0.0)
    old = d.of(StartDecode)[-1]
    d.run(320, 0.9)  # speech resumed
    assert d.turns.judged(old.id, Verdict("Turn on the lights."), d.now) == []
    silence, _ = ended_at(d, 1500)
    assert silence >= 700


def test_early_endpoint_off_never_decodes_at_a_pause():
    d = Driver(early_endpoint=False)
    d.run(800, 0.9)
    silence, end = ended_at(d, 1500)
    assert silence >= 700 and not d.of(StartDecode) and end.decode is None


# ------------------------------------------------------------------ patience


@pytest.mark.parametrize(("prosody", "wait"), [(0.9, 200), (0.1, 1500)])
def test_doubtful_prosody_waits_past_the_plain_silence(prosody, wait):
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(128, 0.0)
    d.judge("Turn on the lights.", prosody=prosody)
    silence, end = ended_at(d, 2500)
    assert wait <= 128 + silence < wait + 32
    assert end.early == (wait < 700)


def test_a_patient_rule_waits_for_its_verdict_up_to_its_bound():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(960, 0.0)  # past the plain 700 ms: still waiting for the verdict
    assert not d.of(EndTurn)
    silence, end = ended_at(d, 2500)
    assert 960 + silence >= 2000 and not end.early


def test_speech_resuming_in_a_long_wait_keeps_one_turn():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(128, 0.0)
    d.judge("Turn on the lights.", prosody=0.1)
    d.run(900, 0.0)  # a 1 s pause mid-sentence
    d.run(640, 0.9)
    d.run(128, 0.0)
    d.judge("Turn on the lights in the kitchen please.", prosody=0.95)
    ended_at(d, 500)
    [end] = d.of(EndTurn)
    assert end.early and end.utterance.voiced_end >= (800 + 1000 + 640) * 16


def _cut_off(d: Driver, paused_ms: int) -> EndTurn:
    """Speak, pause ``paused_ms``, go on: the turn ends early in the pause (finished words, a
    finished-sounding voice) and the rest is a new turn."""
    d.actions.clear()
    d.run(800, 0.9)
    d.run(64, 0.0)
    d.judge("Set an alarm.", prosody=0.9)
    d.run(paused_ms - 64, 0.0)
    [end] = d.of(EndTurn)
    d.run(800, 0.9)
    return end


def _next_finished_turn_waits(d: Driver) -> int:
    """The wait the rule chose for the next finished-sounding sentence."""
    d.run(2000, 0.0)  # the second part ends
    d.actions.clear()
    d.run(800, 0.9)
    d.run(64, 0.0)
    d.judge("Turn on the lights.", prosody=0.9)
    silence, end = ended_at(d, 2500)
    assert end.reason == "finished" and 64 + silence >= end.wait_ms
    return end.wait_ms


def test_a_person_who_went_on_after_an_early_end_is_waited_for_next_time():
    d = Driver(turn_rule=PATIENT)
    first = _cut_off(d, 512)
    assert first.early and first.wait_ms == 200
    # They paused 512 ms mid-sentence: finished-looking turns now wait that and a chunk.
    assert d.turns.learned_wait_ms == 512 + 32
    assert _next_finished_turn_waits(d) == 544
    # Doubt and unfinished words wait as long as they did.
    d.run(800, 0.9)
    d.run(64, 0.0)
    d.judge("Turn on the", prosody=0.9)
    _, end = ended_at(d, 2500)
    assert end.reason == "unfinished" and end.wait_ms == 900


def test_only_a_pause_within_the_unfinished_wait_is_learned():
    d = Driver(turn_rule=PATIENT)
    _cut_off(d, 1216)  # a new request after a second's silence, not a resumed one
    assert d.turns.learned_wait_ms == 0
    assert _next_finished_turn_waits(d) == 200
    d = Driver(turn_rule=PATIENT)
    _cut_off(d, 896)  # the longest pause learned: capped at the unfinished wait
    assert d.turns.learned_wait_ms == 900


def test_speech_after_a_turn_that_waited_the_full_silence_teaches_nothing():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(64, 0.0)
    d.judge("Turn on the", prosody=0.9)  # unfinished: 900 ms, not an early end
    d.run(1000, 0.0)
    [end] = d.of(EndTurn)
    assert not end.early
    d.run(800, 0.9)
    assert d.turns.learned_wait_ms == 0


def test_learning_pauses_can_be_switched_off():
    d = Driver(turn_rule=replace(PATIENT, learn_pauses=False))
    _cut_off(d, 512)
    assert d.turns.learned_wait_ms == 0
    assert _next_finished_turn_waits(d) == 200


def test_speech_after_sleep_is_not_a_resumed_request():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(64, 0.0)
    d.judge("Set an alarm.", prosody=0.9)
    d.run(200, 0.0)
    assert d.of(EndTurn)
    d.turns.set_wake(True, d.now)  # asleep: what follows needs the wake word first
    d.turns.woke(d.now)
    d.run(800, 0.9)
    assert d.turns.learned_wait_ms == 0
    # Awake again (the endpointer counts afresh), a pause is measured as before.
    d.run(2000, 0.0)
    _cut_off(d, 512)
    assert d.turns.learned_wait_ms == 544


# ------------------------------------------------------------------ barge-in


@pytest.mark.parametrize("decide", [True, False])
def test_barge_in_after_barge_in_ms_of_voice_while_an_agent_is_audible(decide):
    """It pauses the agent (then decides: tests/proxy/test_overlap.py), or with
    ``overlap.decide`` off stops it."""
    barge = PausePlayback if decide else StopPlayback
    overlap = OverlapSettings(decide=decide)
    slow = EndpointSettings(end_silence_ms=700, min_speech_ms=1000)
    d = Driver(endpoint=slow, overlap=overlap)
    d.audible = True
    assert not d.of(barge, d.run(64, 0.9))
    assert d.of(barge, d.run(32, 0.9))  # 96 ms: before speech "starts" (1 s)
    d2 = Driver(endpoint=slow, overlap=overlap)
    assert not d2.of(barge, d2.run(320, 0.9)), "nothing audible: nothing to stop"
    d3 = Driver(barge_in_ms=0, overlap=overlap)
    d3.audible = True
    assert not d3.of(barge, d3.run(1000, 0.9)), "barge-in off"


@pytest.mark.parametrize("decide", [True, False])
def test_a_broken_voiced_run_does_not_barge_in(decide):
    barge = PausePlayback if decide else StopPlayback
    d = Driver(
        endpoint=EndpointSettings(end_silence_ms=700, min_speech_ms=1000),
        overlap=OverlapSettings(decide=decide),
    )
    d.audible = True
    for _ in range(5):
        assert not d.of(barge, d.run(64, 0.9) + d.run(32, 0.0))


# ------------------------------------------------------------------ push-to-talk


def test_push_to_talk():
    d = Driver()
    d.turns.set_mode("ptt")
    assert not d.turns.accepts_audio(d.now), "released: audio goes nowhere"
    assert d.turns.set_ptt(True, d.now) == [StopPlayback()]
    assert d.turns.accepts_audio(d.now)
    d.run(640, 0.9)
    d.run(64, 0.0)  # a short pause: the button is still held
    [end] = d.of(EndTurn, d.turns.set_ptt(False, d.now))
    assert not end.early and end.utterance.voiced_end > 0
    assert not d.turns.active and not d.turns.accepts_audio(d.now)
    assert d.turns.set_ptt(False, d.now) == [], "letting go with nothing said ends nothing"


# ------------------------------------------------------------------ partial transcripts


def test_partials_at_most_every_interval_and_one_at_a_time():
    d = Driver(partial_interval_ms=900)
    out = d.run(384, 0.9)
    assert not d.of(StartPartial, out), "under half a second of audio"
    out = d.run(320, 0.9)
    [p] = d.of(StartPartial, out)
    assert len(p.audio) >= 8000
    assert not d.of(StartPartial, d.run(1200, 0.9)), "the first is still running"
    assert d.turns.partial_done("turn on the") == [ShowPartial("turn on the")]
    assert d.of(StartPartial, d.run(32, 0.9)), "done, and the interval has passed"
    assert d.turns.partial_done("  ") == [], "nothing to show"
    d.turns.partial_done(None)  # the transcriber was busy: no partial, and none running
    assert not d.of(StartPartial, d.run(800, 0.9)), "within 900 ms of the last one"
    assert d.of(StartPartial, d.run(128, 0.9))


def test_a_partial_after_the_turn_ended_is_not_shown():
    d = Driver(partial_interval_ms=900)
    d.run(800, 0.9)
    assert d.of(StartPartial)
    ended_at(d, 1000)
    assert d.turns.partial_done("turn on the lights") == []
    assert not d.of(StartPartial, d.run(1000, 0.0)), "no partials between turns"


def test_partials_off():
    d = Driver(partial_interval_ms=0)
    assert not d.of(StartPartial, d.run(3000, 0.9))


# ------------------------------------------------------------------ wake windows


def test_wake_word_windows():
    d = Driver(wake_listen_ms=5000, follow_up_ms=8000)
    t = d.turns
    assert t.set_wake(True, d.now) == [Sleep(), StateChanged("idle")]
    assert not t.accepts_audio(d.now)
    assert t.woke(d.now) == [StopPlayback(), StateChanged("listening")]
    assert t.accepts_audio(d.now + 4.9) and not t.awake(d.now + 5.1)
    # Nothing said within the window: back to sleep.
    assert t.check_awake(d.now + 5.1) == [Sleep(), StateChanged("idle")]
    assert t.check_awake(d.now + 5.2) == [], "already asleep"
    t.woke(d.now)
    d.run(640, 0.9)
    assert t.awake(d.now + 60), "speech under way keeps it awake"
    ended_at(d, 1000)
    assert t.sent(d.now) == [StateChanged("thinking")]
    assert t.awake(d.now + 60), "thinking: awake"
    t.replied(d.now)
    assert t.playing(True, d.now) == [StateChanged("speaking")]
    assert t.awake(d.now + 60)
    t.playing(False, d.now)
    assert t.state == "listening"
    assert t.awake(d.now + 7.9) and not t.awake(d.now + 8.1), "the follow-up window"
    assert t.awake(d.now + 60, busy=True), "an utterance still being handled"


def test_a_dismissed_turn_opens_the_follow_up_window():
    d = Driver(follow_up_ms=3000)
    t = d.turns
    t.set_wake(True, d.now)
    t.woke(d.now)
    t.sent(d.now)
    assert t.dismissed(d.now) == [StateChanged("listening")]
    assert t.awake(d.now + 2.9) and not t.awake(d.now + 3.1)


def test_without_a_wake_word_always_awake():
    d = Driver()
    t = d.turns
    assert t.accepts_audio(1e9) and t.check_awake(1e9) == []
    t.set_wake(True, d.now)
    assert t.set_wake(False, d.now) == [StateChanged("listening")]
    assert t.accepts_audio(d.now + 1e6)


def test_sleep_forgets_half_heard_speech_and_keeps_counting_samples():
    d = Driver()
    d.run(640, 0.9)
    before = d.turns.position
    d.turns.set_wake(True, d.now)
    assert not d.turns.active
    d.turns.woke(d.now)
    d.run(640, 0.9)
    [end] = d.of(EndTurn, d.turns.set_ptt(False, d.now))
    assert end.offset == before, "utterance indices + offset = samples since the session began"
    assert end.offset + end.utterance.voiced_end == d.turns.position


def test_the_default_rule_is_patient_and_bounded():
    rule = SessionSettings().turn_rule
    assert "prosody" in rule.signals and rule.max_wait_ms == 2000
    final = "Turn on the lights."
    assert rule.wait_ms(Verdict(final, {"prosody": 0.9})) == 200
    assert rule.wait_ms(Verdict(final, {"prosody": 0.05})) == 1500
    assert 200 < rule.wait_ms(Verdict(final, {"prosody": 0.55})) < 1500
    assert rule.wait_ms(Verdict("Yes.", {"prosody": 0.9})) == 500
    assert rule.wait_ms(Verdict("Yes.", {"prosody": 0.2})) == 900
    assert rule.wait_ms(Verdict("Yes.", {})) == 900, "one word, nothing else to go on"
    assert rule.wait_ms(Verdict("Turn on the", {"prosody": 0.99})) == 900
    d = Driver(turn_rule=rule)
    d.run(800, 0.9)
    d.run(3000, 0.0)
    [end] = d.of(EndTurn)
    assert not end.early and d.turns.silence_ms == 0, "no verdict at all: ended at the bound"
    # The clip keeps the plain end silence (700 ms) of the 2 s waited, not all of it.
    u = end.utterance
    assert len(u.audio) == u.end - u.start == u.voiced_end - u.start + 700 * 16


def test_a_stop_command_said_once_or_repeated():
    from gateway.proxy.uttering import is_stop as _is_stop

    stops = SessionSettings().stop_words
    assert _is_stop("Stop.", stops) and _is_stop("Stop! Stop! Stop!", stops)
    assert _is_stop("Never mind.", stops)
    assert not _is_stop("Stop the music and play jazz.", stops)
    assert not _is_stop("Stop, cancel.", stops) and not _is_stop("Don't stop.", stops)


# ------------------------------------------------------------------ the decision, for timings


def test_the_end_says_why_and_what_the_rule_chose():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.run(160, 0.0)
    d.judge("Turn on the lights.", prosody=0.9)
    _, end = ended_at(d, 1000)
    assert (end.reason, end.wait_ms, end.verdict_ms) == ("finished", 200, 160)
    d.run(800, 0.9)
    d.run(288, 0.0)
    d.judge("Turn on the lights.", prosody=0.1)  # arrives after the short pause
    _, end = ended_at(d, 2000)
    assert (end.reason, end.wait_ms, end.verdict_ms) == ("doubt", 1500, 288)
    d.run(800, 0.9)
    d.run(128, 0.0)
    d.judge("Turn on the", prosody=0.9)
    _, end = ended_at(d, 2000)
    assert (end.reason, end.wait_ms) == ("unfinished", 900) and not end.early


def test_an_end_without_a_verdict_says_so():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    _, end = ended_at(d, 2500)
    assert (end.reason, end.wait_ms, end.verdict_ms) == ("end silence", None, None)
    d.turns.set_mode("ptt")
    d.turns.set_ptt(True, d.now)
    d.run(640, 0.9)
    [end] = d.of(EndTurn, d.turns.set_ptt(False, d.now))
    assert end.reason == "push-to-talk"


# ------------------------------------------------------------------ a client that stops sending


def test_a_client_that_stops_sending_ends_its_turn():
    d = Driver()
    d.run(800, 0.9)
    t = d.turns
    assert t.no_audio(d.now + 0.3) == [], "a short stall is waited for like late audio"
    assert t.active
    out = t.no_audio(d.now + 0.6)
    [decode] = d.of(StartDecode, out)
    assert not d.of(EndTurn, out), "the transcript is wanted first"
    d.actions += out
    [end] = d.of(EndTurn, d.judge("Turn on the lights."))
    assert end.early and end.reason == "finished" and end.decode == decode.id
    # The gap became silence after the speech, as a silent microphone's would.
    u = end.utterance
    assert u.voiced_end - u.start == decode.voiced_end
    assert not np.any(u.audio[u.voiced_end - u.start :])
    assert t.no_audio(d.now + 5) == [], "no turn under way: nothing to end"


def test_a_stalled_client_without_a_verdict_ends_at_the_bound():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    assert d.of(StartDecode, d.turns.no_audio(d.now + 0.6))
    assert not d.of(EndTurn, d.turns.no_audio(d.now + 1.9))
    [end] = d.of(EndTurn, d.turns.no_audio(d.now + 2.1))
    assert end.reason == "end silence" and not end.early


def test_audio_after_a_counted_gap_resumes_the_turn():
    d = Driver(turn_rule=PATIENT)
    d.run(800, 0.9)
    d.turns.no_audio(d.now + 0.6)
    d.now += 0.6
    out = d.run(320, 0.9)  # the connection came back mid-sentence
    assert d.of(CancelDecode, out) and d.turns.active
    d.run(128, 0.0)
    d.judge("Turn on the lights in the kitchen.", prosody=0.9)
    _, end = ended_at(d, 1000)
    assert end.utterance.voiced_end - end.utterance.start > (800 + 600 + 320) * 16


# ------------------------------------------------------------------ the semantic signal


def test_the_turn_taker_waits_for_the_words_and_forgets_a_resumed_pause():
    d = Driver(turn_rule=replace(SEMANTIC, signals=()))
    d.run(800, 0.9)
    d.run(160, 0.0)
    [decode] = d.of(StartDecode)
    assert d.turns.awaiting(decode.id)
    assert d.turns.due_ms() == 2000, "a rule with only the semantic signal waits for it too"
    d.judge("Can you tell me.", semantic=0.002)
    assert ended_at(d, 1500) is None, "clearly unfinished: not ended at the transcript's wait"
    d.run(320, 0.9)  # they go on
    assert not d.turns.awaiting(decode.id), "speech resumed: its verdict is outdated"
    d.run(160, 0.0)
    d.judge("Can you tell me the time?", semantic=0.7)
    at, end = ended_at(d, 2000)
    assert (end.reason, end.wait_ms) == ("finished", 200) and at <= 224
    assert not d.turns.awaiting(end.decode)


def test_only_the_answer_to_a_woken_request_opens_the_follow_up_window():
    """A greeting, a notice or an agent speaking later plays to a sleeping session: the
    microphone stays shut until the wake word (docs/turn-taking.md)."""
    d = Driver(wake_listen_ms=5000, follow_up_ms=8000)
    t = d.turns
    t.set_wake(True, d.now)
    # A greeting plays and ends: nothing opens, the state stays asleep.
    assert t.playing(True, d.now) == [] and t.state == "idle"
    assert not t.awake(d.now + 1) and not t.accepts_audio(d.now + 1, busy=False)
    assert t.playing(False, d.now + 2) == [] and t.state == "idle"
    assert not t.awake(d.now + 2.5)
    assert t.replied(d.now + 2.5) == [] and not t.awake(d.now + 3)
    # Woken, asked, answered: the follow-up window follows the answer.
    t.woke(d.now + 10)
    d.now += 10
    d.run(640, 0.9)
    ended_at(d, 1000)
    t.sent(d.now)
    t.replied(d.now)
    assert t.playing(True, d.now) == [StateChanged("speaking")]
    t.playing(False, d.now + 3)
    assert t.awake(d.now + 3 + 7.9) and not t.awake(d.now + 3 + 8.1)
    # Asleep again: an agent speaking later through the inbound endpoint opens nothing.
    assert t.check_awake(d.now + 12) == [Sleep(), StateChanged("idle")]
    assert t.playing(True, d.now + 20) == [] and not t.awake(d.now + 20)
    assert t.playing(False, d.now + 22) == [] and not t.awake(d.now + 22.5)


def test_a_dismissed_woken_turn_closes_the_window_it_opened():
    d = Driver(wake_listen_ms=5000, follow_up_ms=3000)
    t = d.turns
    t.set_wake(True, d.now)
    t.woke(d.now)
    d.run(640, 0.9)  # speech keeps it open while it lasts
    ended_at(d, 1000)
    assert t.dismissed(d.now) == [StateChanged("listening")]
    assert t.awake(d.now + 2.9) and not t.awake(d.now + 3.1)


# ------------------------------------------------------------------ continuations


def _first_part(d: Driver, *, p: float = 0.9) -> EndTurn:
    """A finished-looking sentence ended early (its first part), its answer not yet played."""
    d.run(320, 0.0)
    d.run(800, p)
    d.run(64, 0.0)
    d.judge("Turn on the lights.", prosody=0.9)
    _, end = ended_at(d, 1000)
    return end


def test_speech_resumed_within_the_continuation_window_is_one_turn_with_both_parts():
    d = Driver()
    first = _first_part(d)
    assert not first.continues and first.early
    d.run(320, 0.0)  # ~500 ms after the last word (the end's own silence came first)
    d.actions.clear()
    out = d.run(640, 0.5)  # "in the kitchen please", marked apart by its level
    assert d.of(ContinueTurn, out) == [ContinueTurn()] and StopPlayback() in out
    d.run(64, 0.0)
    [decode] = d.of(StartDecode)
    # The pause's decode is of the whole request: the first part's voice is in it.
    assert np.any(np.isclose(decode.audio, 0.9)) and np.any(np.isclose(decode.audio, 0.5))
    d.judge("Turn on the lights in the kitchen please.", prosody=0.9)
    _, second = ended_at(d, 1000)
    assert second.continues and second.decode == decode.id
    audio = second.utterance.audio
    first_voice = np.flatnonzero(np.isclose(audio, 0.9))
    second_voice = np.flatnonzero(np.isclose(audio, 0.5))
    # Both parts, in order, with the pause between them kept as a pause.
    assert len(first_voice) == np.count_nonzero(np.isclose(first.utterance.audio, 0.9))
    assert first_voice[-1] < second_voice[0]
    gap_ms = (second_voice[0] - first_voice[-1]) * 1000 // 16_000
    assert 300 <= gap_ms <= 700, gap_ms
    assert second.utterance.voiced_end - second.utterance.start == second_voice[-1] + 1
    assert d.turns.continued == 1


def test_speech_after_the_continuation_window_is_a_new_turn():
    d = Driver()
    _first_part(d)
    d.run(1500, 0.0)
    d.actions.clear()
    d.run(640, 0.5)
    assert d.of(ContinueTurn) == []
    d.run(64, 0.0)
    d.judge("What time is it?", prosody=0.9)
    _, second = ended_at(d, 1000)
    assert not second.continues
    assert not np.any(np.isclose(second.utterance.audio, 0.9))


def test_a_continuation_is_joined_once_and_the_turn_after_it_may_continue_it_again():
    d = Driver()
    _first_part(d)
    d.run(320, 0.0)
    d.run(640, 0.5)
    d.run(64, 0.0)
    d.judge("in the kitchen please.", prosody=0.9)
    _, second = ended_at(d, 1000)
    assert second.continues
    d.run(2000, 0.0)  # a new request, long after
    d.actions.clear()
    d.run(640, 0.7)
    d.run(64, 0.0)
    d.judge("Thanks.", prosody=0.9)
    ended_at(d, 1000)
    [third] = d.of(EndTurn)
    assert not third.continues and not d.of(ContinueTurn)
    assert d.turns.continued == 1


def test_over_an_audible_answer_a_continuation_stops_it_rather_than_pausing_to_decide():
    d = Driver(overlap=OverlapSettings())
    _first_part(d)
    d.audible = True  # its answer has begun to play
    d.run(256, 0.0)
    d.actions.clear()
    out = d.run(320, 0.5)
    assert ContinueTurn() in out and StopPlayback() in out
    assert d.of(PausePlayback, out) == [], "no overlap to decide: the request is not done"


def test_continuations_can_be_switched_off_and_a_push_to_talk_turn_is_never_continued():
    d = Driver(continuation_ms=0)
    _first_part(d)
    d.run(320, 0.0)
    d.actions.clear()
    d.run(640, 0.5)
    assert d.of(ContinueTurn) == []
    d = Driver()
    d.turns.set_mode("ptt")
    d.turns.set_ptt(True, d.now)
    d.run(800, 0.9)
    d.actions += d.turns.set_ptt(False, d.now)
    assert d.of(EndTurn)
    d.turns.set_ptt(True, d.now)
    d.actions.clear()
    d.run(640, 0.5)
    assert d.of(ContinueTurn) == []
