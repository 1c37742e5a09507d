"""A spoken turn end to end through each kind of Wyoming server: ``talk --wav`` in a real
process with ``--stt``/``--tts`` (and ``--wake-service``), a real HTTP agent on loopback.

What a stock server loses is asserted as stated in docs/speech-services.md: with
``wyoming-faster-whisper`` the utterance has its text and nothing made up (no words feature,
no confidence on the text); with the project's own server the words and confidences are there.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, read_wav, write_wav
from gateway.testing.loopback import Site, capture_agent, utterances_received
from gateway.testing.speech import espeak_wav, silence, word_error_rate
from tests.ofp_schemas import assert_valid_envelope
from tests.speech.conftest import WyomingServer

pytestmark = pytest.mark.slow

REQUEST = "What time is it in Lisbon?"


async def talk(*args: str, data: Path, fast: bool = True) -> tuple[int, dict, str]:
    env = {**os.environ, "OFP_GATEWAY_DATA": str(data)}
    env.pop("OFP_GATEWAY_ALLOW", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "talk", "--json", "--timeout", "30",
        "--allow-address", "127.0.0.0/8", *(["--fast"] if fast else []), *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    text = out.decode()
    payload = json.loads(text) if text.strip().startswith("{") else {}
    return proc.returncode or 0, payload, text + err.decode()


def clip(tmp_path: Path, *parts: np.ndarray) -> str:
    path = tmp_path / "said.wav"
    write_wav(path, np.concatenate([silence(500), *parts, silence(300)]), SAMPLE_RATE)
    return str(path)


async def spoken_turn(
    site: Site, tmp_path: Path, stt: WyomingServer, tts: WyomingServer, *extra: str
) -> tuple[dict, dict, np.ndarray]:
    """One turn: the dialog event the agent got, talk's JSON, and the reply audio."""
    url = capture_agent(site)
    out = tmp_path / "reply.wav"
    wav = clip(tmp_path, espeak_wav(REQUEST))
    code, result, log = await talk(
        "--wav", wav, "--agent", url, "--out", str(out),
        "--stt", stt.address, "--tts", tts.address, *extra, data=tmp_path,
    )  # fmt: skip
    assert code == 0, log
    heard = utterances_received(site)
    assert len(heard) == 1, log
    for sent in result["sent"]:
        assert_valid_envelope(sent)
    reply, rate = read_wav(out)
    assert rate == 22_050
    return heard[0], result, reply


async def test_a_turn_through_the_projects_own_speech_server(
    site: Site, tmp_path: Path, own_speech: WyomingServer
) -> None:
    de, _, reply = await spoken_turn(site, tmp_path, own_speech, own_speech)
    text = de["features"]["text"]["tokens"][0]
    assert word_error_rate(REQUEST, text["value"]) <= 0.2, text
    assert 0 < text["confidence"] <= 1  # measured by the server's Whisper
    words = de["features"]["words"]["tokens"]
    assert len(words) >= 5 and all(0 <= w["confidence"] <= 1 for w in words)
    assert all(w["span"]["startOffset"].startswith("PT") for w in words)
    assert len(reply) > 0.5 * 22_050 and np.abs(reply).max() > 1000  # "Okay." was spoken


async def test_a_turn_through_stock_home_assistant_servers(
    site: Site, tmp_path: Path, stock_whisper: WyomingServer, stock_piper: WyomingServer
) -> None:
    de, _, reply = await spoken_turn(site, tmp_path, stock_whisper, stock_piper)
    text = de["features"]["text"]["tokens"][0]
    assert word_error_rate(REQUEST, text["value"]) <= 0.34, text
    # Text only: no made-up confidence, no words feature.
    assert "confidence" not in text
    assert "words" not in de["features"]
    assert "audio" in de["features"]  # the person's own voice is still there
    assert len(reply) > 0.5 * 22_050 and np.abs(reply).max() > 1000


async def test_wake_word_on_the_speech_server(
    site: Site, tmp_path: Path, own_speech: WyomingServer
) -> None:
    """``--wake-service``: the request after "Alexa" reaches the agent, without the wake word;
    the same clip's words before it do not. Paced in real time: a detection comes a hop after
    its audio, and ``--fast`` feeds the whole clip sooner than that."""
    url = capture_agent(site)
    wav = clip(
        tmp_path,
        espeak_wav("Turn off the oven."),
        silence(800),
        espeak_wav("Alexa"),
        silence(400),
        espeak_wav(REQUEST),
    )
    code, _, log = await talk(
        "--wav", wav, "--agent", url, "--wake", "alexa",
        "--wake-service", own_speech.address, data=tmp_path, fast=False,
    )  # fmt: skip
    assert code == 0, log
    heard = [
        de["features"]["text"]["tokens"][0]["value"].lower() for de in utterances_received(site)
    ]
    assert len(heard) == 1, (heard, log)
    assert "lisbon" in heard[0] and "alexa" not in heard[0] and "oven" not in heard[0]


async def test_talk_says_which_service_it_cannot_reach(tmp_path: Path) -> None:
    from gateway.testing.processes import free_port

    wav = clip(tmp_path, espeak_wav("Hello."))
    port = free_port()
    code, _, log = await talk("--wav", wav, "--stt", f"wyoming://127.0.0.1:{port}", data=tmp_path)
    assert code == 2, log
    assert f"stt service at wyoming://127.0.0.1:{port}" in log and "Traceback" not in log
