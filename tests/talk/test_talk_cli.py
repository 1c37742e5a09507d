"""`talk` end to end in real processes: the agents server in one, `talk --json` in another."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gateway.testing.processes import start_agents
from tests.ofp_schemas import assert_valid_envelope

PY = sys.executable


@pytest.fixture(scope="module")
def agents_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    served = start_agents(tmp_path_factory.mktemp("agents") / "agents.log")
    yield served.url
    served.stop()


def talk(*args: str, data: Path) -> tuple[int, dict, str]:
    env = {**os.environ, "OFP_GATEWAY_DATA": str(data)}
    env.pop("OFP_GATEWAY_ALLOW", None)
    out = subprocess.run(
        [PY, "-m", "gateway", "talk", *args], capture_output=True, text=True, timeout=60, env=env
    )
    payload = json.loads(out.stdout) if out.stdout.strip().startswith("{") else {}
    return out.returncode, payload, out.stdout + out.stderr


def test_talk_json_over_http_and_in_process(agents_server: str, tmp_path: Path) -> None:
    code, out, text = talk(
        "--json",
        "--text",
        "good morning",
        "--agent",
        f"{agents_server}/parrot",
        "--agent",
        "builtin:clock",
        "--allow-address",
        "127.0.0.0/8",
        data=tmp_path,
    )
    assert code == 0, text
    assert out["conversationId"].startswith("conv:")
    assert "You said: good morning" in out["replyText"]
    assert out["sent"] and out["received"]
    for env in out["sent"] + out["received"]:
        assert_valid_envelope(env)
    speakers = {line["speaker"] for line in out["lines"]}
    assert {"Parrot", "Clock", "User"} <= speakers
    # It was recorded: history lists it.
    hist = subprocess.run(
        [PY, "-m", "gateway", "history", "list", "--json", "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out["conversationId"] in hist.stdout


def test_talk_refuses_loopback_without_allow_list(agents_server: str, tmp_path: Path) -> None:
    code, _, text = talk(
        "--text", "hi", "--agent", f"{agents_server}/parrot", "--no-record", data=tmp_path
    )
    assert code == 2
    assert "--allow-address" in text and "Traceback" not in text


def test_talk_human_output(tmp_path: Path) -> None:
    code, _, text = talk(
        "--text", "what time is it", "--agent", "builtin:clock", "--no-record", data=tmp_path
    )
    assert code == 0
    lines = text.splitlines()
    # The greeting, then what the person said, whom it went to, and the answer.
    said = lines.index("you: what time is it")
    assert lines[said + 1] == "  to: Clock (Clock is the only agent here)"
    assert any(line.startswith("Clock: It's ") for line in lines[said:])


def test_talk_unknown_builtin(tmp_path: Path) -> None:
    code, _, text = talk("--text", "x", "--agent", "builtin:nobody", "--no-record", data=tmp_path)
    assert code == 2 and "built-ins are" in text


def test_talk_holds_a_conversation_with_three_agents(tmp_path: Path) -> None:
    """Several --text in order; each addressed (a name, the agent talked with, the best placed)
    and answered by one agent."""
    code, out, text = talk(
        "--json",
        "--text",
        "What time is it?",
        "--text",
        "Parrot, say cheese",
        "--text",
        "and again",
        "--text",
        "Concierge, which agents are there?",
        "--agent",
        "builtin:parrot",
        "--agent",
        "builtin:clock",
        "--agent",
        "builtin:concierge",
        "--no-record",
        data=tmp_path,
    )
    assert code == 0, text
    assert [(a["toName"], a["why"]) for a in out["addressed"]] == [
        ("Clock", "best placed to answer: its keyphrase \u201ctime\u201d"),
        ("Parrot", "you named Parrot"),
        ("Parrot", "you are talking with Parrot"),
        ("Concierge", "you named Concierge"),
    ]
    spoken = [line["speaker"] for line in out["lines"]]
    # Three greetings, then each utterance and exactly one answer.
    assert spoken[3:] == ["User", "Clock", "User", "Parrot", "User", "Parrot", "User", "Concierge"]
    for env in out["sent"] + out["received"]:
        assert_valid_envelope(env)


def test_talk_with_a_convener_over_http(agents_server: str, tmp_path: Path) -> None:
    """The built-in convener served over HTTP (``agents serve``) chairs a talk conversation."""
    code, out, text = talk(
        "--json",
        "--text",
        "Clock, what time is it?",
        "--agent",
        "builtin:parrot",
        "--agent",
        "builtin:clock",
        "--convener",
        f"{agents_server}/convener",
        "--allow-address",
        "127.0.0.0/8",
        "--no-record",
        data=tmp_path,
    )
    assert code == 0, text
    conversation = out["heard"][-1]["openFloor"]["conversation"]
    chair = [
        c["identification"]["speakerUri"]
        for c in conversation["conversants"]
        if c["identification"]["serviceUrl"] == f"{agents_server}/convener"
    ]
    assert conversation["assignedFloorRoles"]["convener"] == chair and len(chair) == 1
    # Not an addressee: the question went to the clock, and the clock answered.
    assert out["addressed"][0]["toName"] == "Clock"
    assert any(line["speaker"] == "Clock" and "It's" in line["text"] for line in out["lines"])
    for env in out["sent"] + out["received"]:
        assert_valid_envelope(env)
