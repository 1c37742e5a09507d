"""``scripts/load.py``'s run (:func:`gateway.testing.load.run_load`) at one person over WebRTC,
briefly: every turn is answered, and each is split into where its time went (the figures
themselves are the script's, on an idle machine)."""

from __future__ import annotations

import asyncio
from typing import get_args

import pytest

from gateway.proxy.turn_rule import EndReason
from gateway.testing.figures import piper_rtf
from gateway.testing.load import run_load
from gateway.testing.load_client import load_clips
from gateway.testing.load_metrics import ServedGateway
from gateway.testing.processes import untraced

#: What a WebRTC turn splits into (``Turn.breakdown``).
STAGES = {"in", "endpoint", "stt", "floor", "tts", "out", "network", "decode", "total"}

pytestmark = pytest.mark.slow  # a real serve process, talked to in real time


@pytest.fixture(scope="module")
def one_person() -> dict:
    """As ``scripts/load.py --sessions 1 --webrtc-every 1 --seconds 20`` runs it."""

    async def run() -> dict:
        clips = load_clips()
        speed = piper_rtf()  # before the gateway starts: the machine's own speed
        gateway = ServedGateway.start("--max-sessions", "16")
        try:
            row = await run_load(gateway, clips, 1, 20, ramp_s=0.5, webrtc_every=1)
        finally:
            gateway.stop()
        return {**row, "piperRtf": speed}

    with untraced():
        return asyncio.run(asyncio.wait_for(run(), 300))


def test_one_person_over_webrtc_is_answered(one_person: dict) -> None:
    assert one_person["connected"] == one_person["webrtc"] == 1
    assert one_person["turns"] >= 1 and one_person["missed"] == 0
    assert one_person["errors"] == [] and one_person["p50Ms"] is not None
    # The machine's speed, measured before the run, travels with the figures.
    assert 0.005 < one_person["piperRtf"] < 1.0


def test_every_turn_is_split_into_its_stages(one_person: dict) -> None:
    detail = one_person["turnDetail"]
    assert len(detail) == one_person["turns"]
    for turn in detail:
        assert turn["transport"] == "webrtc" and set(turn) - {"transport"} == STAGES
        assert turn["decode"] >= 0  # the first reply frame's packet arrived before it decoded
    medians = one_person["turnStagesMs"]["webrtc"]
    assert medians["turns"] == len(detail) and set(medians) - {"turns"} == STAGES


def test_why_each_turn_ended_is_counted(one_person: dict) -> None:
    """The turn rule's reason for every turn, and the semantic signal's call as the session
    waited for it (the load clips are complete requests: the rule ends them on its reasons)."""
    ends = one_person["turnEnds"]
    assert sum(ends["reasons"].values()) == one_person["turns"]
    assert set(ends["reasons"]) <= set(get_args(EndReason)), ends
    assert ends["semanticScored"] <= ends["semanticCalled"] <= one_person["turns"]
    if ends["semanticCalled"]:
        assert 0 < ends["semanticMsP50"] <= ends["semanticMsP95"]
