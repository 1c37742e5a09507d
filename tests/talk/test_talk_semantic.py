"""The semantic end-of-turn signal decides a spoken turn, through ``talk --wav --json``.

"What are you looking at?" ends on "at", a word the transcript rule does not let a sentence end
on: without the semantic signal it waits its longest wait for unfinished words. The language
model reads the whole question (P(finished) about 0.7 against a threshold under 0.1: a clear
case), so the turn ends at the short pause, and the timings say the semantic signal decided.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, write_wav
from gateway.proxy.settings import SessionSettings
from gateway.testing.speech import espeak_wav, silence

pytestmark = pytest.mark.slow


def test_a_question_ending_on_a_preposition_is_answered_at_the_short_pause(tmp_path: Path) -> None:
    wav = tmp_path / "looking.wav"
    write_wav(
        wav, np.concatenate([silence(400), espeak_wav("What are you looking at?")]), SAMPLE_RATE
    )
    env = {**os.environ, "OFP_GATEWAY_DATA": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "gateway", "talk", "--no-record", "--json", "--wav", str(wav)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    doc = json.loads(out.stdout)
    [turn] = doc["utterances"]
    assert "looking at" in doc["transcript"].lower(), doc["transcript"]
    rule = SessionSettings().turn_rule
    assert rule.semantic_low is not None
    # The decision, not the wall clock: the semantic signal was sure, and the rule chose its
    # short wait, where the transcript rule alone waits for unfinished words.
    assert turn["endReason"] == "semantic finished", turn
    assert turn["semantic"] >= rule.semantic_high and turn["waitMs"] == rule.semantic_pause_ms
    assert rule.semantic_pause_ms < rule.unfinished_ms
    assert doc["replyText"].startswith("You said: What are you looking at")
