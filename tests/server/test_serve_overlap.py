"""Speech over an agent against a real ``serve``: a WebSocket client plays clips over the
parrot's long reply in real time (gateway/testing/overlap.py).

Clear cases only (a one-word backchannel, a stop phrase, the agent's own voice 15 dB down): the
decisions are asserted, never their timings (those are scripts/bench_interruptions.py's)."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import read_wav
from gateway.records import SQLiteRecorder, to_mplp_dialog
from gateway.testing.bench_interruptions import reply_at_s
from gateway.testing.overlap import LONG_TEXT, speech, talk_over
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.records import run
from gateway.testing.speech import normalise


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("overlap", *PARROT_ON_LOOPBACK)


async def test_a_backchannel_pauses_the_agent_which_resumes_and_nothing_is_a_turn(gateway):
    trial = await talk_over(gateway.ws, speech("Yeah.", "piper"))
    assert trial.paused_at() is not None, trial
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"
    # That the reply then plays to its end is tests/web/test_overlap_page.py's (here its next
    # sentence may still be being made when the trial ends, on a busy machine).


async def test_a_meant_interruption_stops_the_agent_and_is_the_next_turn(gateway):
    trial = await talk_over(gateway.ws, speech("Wait, stop.", "piper"))
    assert (trial.outcome(), trial.why()) == ("stopped", "interruption"), trial.playback
    assert trial.flushed_at is not None
    assert trial.paused_at() is not None and trial.paused_at() <= trial.flushed_at
    [said] = trial.transcripts
    assert {"wait", "stop"} & set(normalise(said)), said
    # What of the reply the person heard by the stop: its first words, as many as played.
    [stopped] = [m for _, m in trial.playback if m["outcome"] == "stopped"]
    assert stopped["playedMs"] > 0
    heard = normalise(stopped["said"])
    assert heard and heard == normalise(f"You said: {LONG_TEXT}")[: len(heard)], stopped
    # The record keeps the stopped reply as far as it was heard: `history show` and the export.
    assert gateway.data is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert run("history", "show", trial.conversation, "--data", str(gateway.data)) == 0
    [line] = [x for x in out.getvalue().splitlines() if "heard  stopped" in x]
    assert f"after {stopped['playedMs']} ms" in line and stopped["said"][:40] in line, line
    conversation = SQLiteRecorder(gateway.data).get_conversation(trial.conversation)
    events = to_mplp_dialog(conversation)["events"]
    [kept] = [e["data"] for e in events if e["event_type"] == "ofp.gateway.heard"]
    assert kept["outcome"] == "stopped" and kept["said"] == stopped["said"], kept
    assert kept["playedMs"] == stopped["playedMs"] and kept["reply"] == stopped.get("reply")


async def test_a_backchannel_is_kept_in_the_record_as_what_it_was(gateway):
    trial = await talk_over(gateway.ws, speech("Yeah.", "piper"))
    assert trial.outcome() == "resumed", trial.playback
    assert gateway.data is not None
    conversation = SQLiteRecorder(gateway.data).get_conversation(trial.conversation)
    heard = [r.data for r in conversation.records if r.kind == "heard"]
    assert [h["outcome"] for h in heard] == ["backchannel"], heard
    assert "yeah" in normalise(heard[0]["text"]), heard
    # Not a turn: no utterance of the person's in the record (only the typed request).
    said = [
        r
        for r in conversation.records
        if r.kind == "envelope" and r.direction == "in" and "You said" not in json.dumps(r.data)
    ]
    texts = json.dumps([r.data for r in said])
    assert "Yeah" not in texts and "yeah" not in texts, texts


async def test_the_agents_own_echo_neither_interrupts_it_nor_becomes_a_turn(gateway):
    trial = await talk_over(gateway.ws, np.zeros(0, np.int16), echo_db=-15, echo_lag_ms=150)
    assert trial.outcome() in ("ignored", "none"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == []


async def test_a_hum_whisper_hears_as_words_resumes_the_agent(gateway):
    """piper's "Mm-hmm." (tests/audio/hum_clips; Whisper wrote it "Inema", "in a moment"): the
    voice's hum signal makes it a backchannel, not an interruption (issue 38)."""
    clip = Path(__file__).parents[1] / "audio" / "hum_clips" / "mm-hmm.piper.wav"
    trial = await talk_over(gateway.ws, read_wav(clip)[0])
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"


async def test_a_backchannel_in_two_parts_resumes_the_agent(gateway):
    """ "Yeah, | yeah." with a pause at the comma longer than the silence that ends an overlap:
    the second part is judged with the first (``join_ms``), and the agent goes on (its second
    half alone, cut off, decoded as other words and stopped it on the held-out sets)."""
    yeah = speech("Yeah.", "piper")
    clip = np.concatenate([yeah, np.zeros(16_000 * 400 // 1000, np.int16), yeah])
    trial = await talk_over(gateway.ws, clip)
    assert trial.paused_at() is not None, trial
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"
    # Each part may go on before its decision (how soon depends on the decode's speed): such a
    # "resumed" has no why, and a decided one follows it.
    outcomes = [(m["outcome"], m.get("why")) for _, m in trial.playback]
    for i, (outcome, why) in enumerate(outcomes):
        if outcome == "resumed" and why is None:
            assert ("resumed", "backchannel") in outcomes[i + 1 :], outcomes


async def test_a_comment_no_rule_reads_resumes_the_agent_by_the_feedback_reader(gateway):
    """piper's "Okay, that is great to hear.": words no rule of the overlap reads as a
    backchannel (tests/proxy/test_overlap_feedback.py), read as a listener's feedback by the
    feedback reader that ``serve`` loads (gateway/voice/feedback.py): the agent goes on, and
    the server's log says which signal decided."""
    trial = await talk_over(gateway.ws, speech("Okay, that is great to hear.", "piper"))
    assert trial.paused_at() is not None, trial
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"
    assert "overlap: backchannel by feedback on " in gateway.log.read_text()


async def test_a_listener_reading_back_what_the_agent_said_resumes_it(gateway):
    """piper's "Okay, behind the library." said as the parrot's first sentence, which says it,
    ends: the words after "Okay," are the agent's own (gateway/proxy/overlap.py, ``read_back``),
    so the agent goes on and nothing is a turn; the server's log says they were read back."""
    first = "The car park is behind the library, next to the old post office."
    rest = "It is free after six in the evening, and there is a cash machine by the entrance."
    trial = await talk_over(
        gateway.ws,
        speech("Okay, behind the library.", "piper"),
        at_s=reply_at_s(first),
        reply=f"{first} {rest}",
    )
    assert trial.paused_at() is not None, trial
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"
    assert "reads back what the agent said" in gateway.log.read_text()
