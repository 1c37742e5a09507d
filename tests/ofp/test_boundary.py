"""The parse boundary end to end: a real HTTP agent on loopback sends what Python's json accepts
but nothing downstream can carry, and a real ``talk`` process (with its records) goes on."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]


def _reply(conversation_id: str, text_json: str, confidence: str) -> str:
    """An agent reply as raw JSON text, so the hostile escapes and numbers reach the wire."""
    return (
        '{"openFloor": {"schema": {"version": "1.1.0"}, "conversation": {"id": '
        + json.dumps(conversation_id)
        + '}, "sender": {"speakerUri": "tag:hostile", "serviceUrl": "tag:hostile"},'
        ' "events": [{"eventType": "utterance", "parameters": {"dialogEvent": {'
        '"speakerUri": "tag:hostile", "span": {"startOffset": "PT0S"}, "features": {"text":'
        ' {"mimeType": "text/plain", "tokens": [{"value": ' + text_json + ', "confidence": '
        + confidence
        + "}]}}}}}]}}"
    )


class HostileAgent:
    """An aiohttp agent on 127.0.0.1 in its own thread; answers every utterance with ``body``."""

    def __init__(self) -> None:
        self.text_json = '"x"'
        self.confidence = "0.9"
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._run(),))

    async def _handle(self, request: web.Request) -> web.Response:
        env = json.loads(await request.read())["openFloor"]
        kinds = [e.get("eventType") for e in env.get("events", [])]
        if "utterance" not in kinds:
            body = json.dumps(
                {
                    "openFloor": {
                        "schema": {"version": "1.1.0"},
                        "conversation": {"id": env["conversation"]["id"]},
                        "sender": {"speakerUri": "tag:hostile"},
                        "events": [],
                    }
                }
            )
        else:
            body = _reply(env["conversation"]["id"], self.text_json, self.confidence)
        return web.Response(text=body, content_type="application/json")

    async def _run(self) -> None:
        self._stop = asyncio.Event()
        app = web.Application()
        app.router.add_post("/agent", self._handle)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/agent"
        self._ready.set()
        await self._stop.wait()
        await runner.cleanup()

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(10)

    def stop(self) -> None:
        assert self._stop is not None
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)


@pytest.fixture
def agent() -> Iterator[HostileAgent]:
    a = HostileAgent()
    a.start()
    yield a
    a.stop()


def _gateway(*args: str, data: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OFP_GATEWAY_DATA": str(data)}
    env.pop("OFP_GATEWAY_ALLOW", None)
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="strict",  # a surrogate escaping into the output would fail here
        timeout=120,
        env=env,
    )


def _talk(agent: HostileAgent, data: Path) -> subprocess.CompletedProcess[str]:
    return _gateway(
        "talk",
        "--json",
        "--text",
        "hello",
        "--agent",
        agent.url,
        "--allow-address",
        "127.0.0.0/8",
        "--timeout",
        "20",
        data=data,
    )


def test_a_lone_surrogate_from_an_agent_becomes_u_fffd_and_is_recorded(
    agent: HostileAgent, tmp_path: Path
) -> None:
    agent.text_json = '"before \\ud800 after"'
    result = _talk(agent, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = json.loads(result.stdout)
    assert "before \ufffd after" in out["replyText"]
    # Logged once, at the boundary, naming the agent and the field.
    assert "U+FFFD" in result.stderr and agent.url in result.stderr
    assert "tokens[0].value" in result.stderr
    assert "Traceback" not in result.stderr
    # The record was written (no rolled-back transaction) and holds the replacement.
    shown = _gateway("history", "show", out["conversationId"], "--json", data=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "before \ufffd after" in shown.stdout


@pytest.mark.parametrize("number", ["1e999", "NaN", "-Infinity"])
def test_a_non_finite_confidence_from_an_agent_is_refused_naming_the_field(
    agent: HostileAgent, tmp_path: Path, number: str
) -> None:
    agent.confidence = number
    result = _talk(agent, tmp_path)
    text = result.stdout + result.stderr
    assert "Traceback" not in text

    def no_constants(name: str) -> None:
        raise AssertionError(f"{name} in the output: not JSON")

    out = json.loads(result.stdout, parse_constant=no_constants)
    # The reply is refused as a bad reply, and the reason names the field.
    assert "confidence" in text and "non-finite" in text, text
    # talk --json shows the refused body as the wire text it was, not as data...
    assert any(isinstance(r, str) and number in r for r in out["received"])
    # ...and nothing of it reached the person.
    assert out["replyText"] == "" and [line["speaker"] for line in out["lines"]] == ["User"]
