"""``scripts/bench_interruptions.py --transport webrtc`` (issue 38, item 5): the option takes the
WebRTC path, and that path is a real WebRTC session whose speech over the parrot is decided as
over the WebSocket. Decisions on clear cases are asserted, never timings (the benchmark prints
those)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from gateway.testing import bench_interruptions as bench
from gateway.testing.overlap import Clip, ContinuationTrial, OverlapTrial, speech
from gateway.testing.overlap_webrtc import say_in_parts_webrtc, talk_over_webrtc
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.speech import normalise

SILENT = np.zeros(160, np.int16)
FAKE_SET = [
    Clip("Yeah.", "backchannel", "v", SILENT),
    Clip("Wait.", "interruption", "v", SILENT),
    Clip("Stop.", "interruption", "v", SILENT),
    Clip("cough", "noise", "seed 0", SILENT),
    Clip("echo", "echo", "-10 dB", SILENT),
]


@pytest.fixture
def trials(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str, dict[str, Any]]]:
    """The benchmark with a fake set and its trials noted (transport, url, keywords)."""
    seen: list[tuple[str, str, dict[str, Any]]] = []

    def fake(transport: str) -> Callable[..., Any]:
        async def trial(url: str, audio: np.ndarray, **kw: Any) -> OverlapTrial:
            seen.append((transport, url, kw))
            return OverlapTrial()

        return trial

    monkeypatch.setitem(bench.SETS, "tuning", lambda: list(FAKE_SET))
    monkeypatch.setattr(bench, "TRANSPORTS", {"ws": fake("ws"), "webrtc": fake("webrtc")})
    return seen


def test_transport_webrtc_plays_every_trial_over_webrtc(trials, capsys):
    assert bench.main(["--url", "ws://127.0.0.1:9/ws", "--transport", "webrtc"]) == 0
    assert [t[0] for t in trials] == ["webrtc"] * len(FAKE_SET)
    assert trials[-1][2] == {"echo_db": -10.0, "echo_lag_ms": bench.ECHO_LAGS_MS[4 % 3]}
    assert "transport: webrtc" in capsys.readouterr().out


def test_the_websocket_is_the_default(trials):
    assert bench.main(["--url", "ws://127.0.0.1:9/ws", "--limit", "1"]) == 0
    assert [t[0] for t in trials] == ["ws"] * 4  # one clip of each kind


def test_kind_runs_only_those_clips(trials):
    argv = ["--url", "ws://127.0.0.1:9/ws", "--kind", "interruption", "--kind", "echo"]
    assert bench.main(argv) == 0
    assert len(trials) == 3 and "echo_db" in trials[-1][2]
    assert [c.name for c in bench.select(FAKE_SET, 1, ["interruption"])] == ["Wait."]


def test_continuations_over_webrtc_are_said_over_webrtc(monkeypatch, capsys):
    said: list[tuple[str, int]] = []

    def fake(transport: str) -> Callable[..., Any]:
        async def say(url: str, first: Any, second: Any, *, gap_ms: int) -> ContinuationTrial:
            said.append((transport, gap_ms))
            return ContinuationTrial()

        return say

    monkeypatch.setattr(bench, "speech", lambda text, voice: SILENT)
    monkeypatch.setattr(bench, "SAY_IN_PARTS", {"ws": fake("ws"), "webrtc": fake("webrtc")})
    argv = ["--url", "ws://127.0.0.1:9/ws", "--set", "continuations", "--limit", "1"]
    assert bench.main([*argv, "--transport", "webrtc"]) == 0
    assert said == [("webrtc", 500), ("webrtc", 800)] * 2  # two voices, two pauses
    assert "transport: webrtc" in capsys.readouterr().out
    said.clear()
    assert bench.main(argv) == 0
    assert {t for t, _ in said} == {"ws"}


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("overlap-webrtc", *PARROT_ON_LOOPBACK)


@pytest.mark.slow
async def test_a_meant_interruption_over_webrtc_stops_the_agent_and_is_the_turn(gateway):
    trial = await talk_over_webrtc(gateway.ws, speech("Wait, stop.", "piper"))
    assert (trial.outcome(), trial.why()) == ("stopped", "interruption"), trial.playback
    assert trial.flushed_at is not None and trial.paused_at() is not None
    [said] = trial.transcripts
    assert {"wait", "stop"} & set(normalise(said)), said
    # The microphone and the reply went over RTP: the gateway's WebRTC connection came up.
    assert "webrtc connection connected" in gateway.log.read_text()


@pytest.mark.slow
async def test_a_backchannel_over_webrtc_pauses_the_agent_which_resumes(gateway):
    trial = await talk_over_webrtc(gateway.ws, speech("Yeah.", "piper"))
    assert trial.paused_at() is not None, trial
    assert (trial.outcome(), trial.why()) == ("resumed", "backchannel"), trial.playback
    assert trial.flushed_at is None and trial.transcripts == [], "no stop, no turn"


@pytest.mark.slow
async def test_a_request_in_two_parts_over_webrtc_is_one_turn(gateway):
    trial = await say_in_parts_webrtc(
        gateway.ws,
        speech("Turn on the lights.", "piper"),
        speech("in the kitchen please.", "piper"),
    )
    [shown] = trial.shown()
    assert {"lights", "kitchen"} <= set(normalise(shown)), trial
    [answer] = trial.answered
    assert {"lights", "kitchen"} <= set(normalise(answer)), trial
