"""``talk --wav --wake NAME`` in a real process, against a real HTTP agent on loopback.

The clips are espeak-ng speech (espeak's "Alexa" is heard by the alexa model). Without the wake
word nothing may reach the agent; with it, exactly the request that followed it does.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, write_wav
from gateway.testing.loopback import Site, capture_agent, utterances_received
from gateway.testing.speech import espeak_wav, silence

pytestmark = pytest.mark.slow

REQUEST = "What time is it in Lisbon?"


async def talk(*args: str, data: Path) -> tuple[int, dict, str]:
    env = {**os.environ, "OFP_GATEWAY_DATA": str(data)}
    env.pop("OFP_GATEWAY_ALLOW", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "talk", "--json", "--fast", "--timeout", "20",
        "--allow-address", "127.0.0.0/8", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 180)
    text = out.decode()
    payload = json.loads(text) if text.strip().startswith("{") else {}
    return proc.returncode or 0, payload, text + err.decode()


def clip(tmp_path: Path, name: str, *parts: np.ndarray) -> str:
    path = tmp_path / f"{name}.wav"
    write_wav(path, np.concatenate([silence(500), *parts, silence(300)]), SAMPLE_RATE)
    return str(path)


def said(site: Site) -> list[str]:
    return [
        " ".join(t["value"] for t in de["features"]["text"]["tokens"]).lower()
        for de in utterances_received(site)
    ]


async def test_without_the_wake_word_nothing_reaches_the_agent(site: Site, tmp_path: Path):
    url = capture_agent(site)
    wav = clip(tmp_path, "plain", espeak_wav(REQUEST))
    code, _, log = await talk("--wav", wav, "--wake", "alexa", "--agent", url, data=tmp_path)
    assert code == 0, log
    assert site.received.get("capture"), "the agent was invited"
    assert said(site) == [], log


async def test_the_request_after_the_wake_word_reaches_the_agent(site: Site, tmp_path: Path):
    url = capture_agent(site)
    wav = clip(tmp_path, "woken", espeak_wav("Alexa"), silence(400), espeak_wav(REQUEST))
    code, result, log = await talk("--wav", wav, "--wake", "alexa", "--agent", url, data=tmp_path)
    assert code == 0, log
    heard = said(site)
    assert len(heard) == 1, (heard, log)
    assert "time" in heard[0] and "lisbon" in heard[0]
    assert "alexa" not in heard[0]  # the wake word is not part of the request
    assert "alexa" not in result["transcript"].lower()


async def test_the_same_clip_without_wake_is_sent_whole(site: Site, tmp_path: Path):
    """The control: --wake (not the clip or the agent) is what held the speech back above."""
    url = capture_agent(site)
    wav = clip(tmp_path, "plain", espeak_wav(REQUEST))
    code, _, log = await talk("--wav", wav, "--agent", url, data=tmp_path)
    assert code == 0, log
    heard = said(site)
    assert len(heard) == 1 and "time" in heard[0], (heard, log)
