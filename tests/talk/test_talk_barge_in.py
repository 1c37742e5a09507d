"""Speech over the reply in a ``talk --wav`` recording is barge-in there too (issue 38): the WAV is
played in real time while the reply plays, so what the recording holds at the reply's time is
speech over the agent, decided as it is for a page. A backchannel ("Yeah.") leaves the reply to
play to its end and is no turn; "Wait, stop." stops it and is the next turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, read_wav, write_wav
from gateway.testing.overlap import speech
from gateway.testing.speech import normalise, silence

pytestmark = pytest.mark.slow

REQUEST = (
    "Once upon a time there was a little lighthouse keeper who counted every wave that reached "
    "the rocks below his tower."
)


def spoken_s(text: str) -> float:
    """How long piper takes to say ``text`` (the parrot's reply is said by the same voice)."""
    return len(speech(text, "piper")) / SAMPLE_RATE


def talk_over_reply(tmp_path: Path, over: str) -> tuple[dict, float]:
    """``talk --wav`` with ``REQUEST``, then ``over`` 4 s after it (the parrot's 7 s reply is
    playing by then: it starts within about 2 s); the JSON result and the seconds of reply
    audio written."""
    wav, out = tmp_path / f"{over}.wav", tmp_path / f"{over}-reply.wav"
    pcm = np.concatenate(
        [silence(400), speech(REQUEST, "piper"), silence(4000), speech(over, "piper"), silence(500)]
    )
    write_wav(wav, pcm, SAMPLE_RATE)
    env = {**os.environ, "OFP_GATEWAY_DATA": str(tmp_path)}
    command = [sys.executable, "-m", "gateway", "talk", "--no-record", "--json"]
    done = subprocess.run(
        [*command, "--wav", str(wav), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    audio, rate = read_wav(out)
    return json.loads(done.stdout), len(audio) / rate


def test_a_backchannel_over_the_reply_lets_it_play_and_is_no_turn(tmp_path: Path) -> None:
    doc, reply_s = talk_over_reply(tmp_path, "Yeah.")
    assert len(doc["utterances"]) == 1, doc
    assert "yeah" not in normalise(doc["transcript"]), doc["transcript"]
    # The whole "You said: Once upon a time … tower." played (piper's own pace varies a little).
    assert reply_s > 0.85 * spoken_s(f"You said: {REQUEST}"), reply_s


def test_wait_stop_over_the_reply_stops_it_and_is_the_next_turn(tmp_path: Path) -> None:
    doc, reply_s = talk_over_reply(tmp_path, "Wait, stop.")
    assert len(doc["utterances"]) == 2, doc
    assert {"wait", "stop"} & set(normalise(doc["transcript"])), doc["transcript"]
    # The first reply stopped part-way (its speech onset 4 s after the request, the stop at most
    # a second or two later), then "You said: Wait, stop." in full: what the first reply played
    # is well short of its whole (no assertion on when it stopped).
    first_played = reply_s - spoken_s("You said: Wait, stop.")
    assert first_played < 0.85 * spoken_s(f"You said: {REQUEST}"), reply_s


def test_a_comment_read_as_feedback_over_the_reply_lets_it_play(tmp_path: Path) -> None:
    """"Okay, that is great to hear.": words no rule reads as a backchannel, read as a listener's
    feedback by the reader ``talk --wav`` loads (gateway/voice/feedback.py): no turn."""
    doc, reply_s = talk_over_reply(tmp_path, "Okay, that is great to hear.")
    assert len(doc["utterances"]) == 1, doc
    assert "hear" not in normalise(doc["transcript"]), doc["transcript"]
    assert reply_s > 0.85 * spoken_s(f"You said: {REQUEST}"), reply_s
