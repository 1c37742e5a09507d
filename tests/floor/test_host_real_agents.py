"""Agents we did not write, over real HTTP on loopback: URL spellings, OVON 0.9-only agents,
`talk --json` as a wire capture, and the person's `bye` when a conversation ends."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.agents.server import AGENTS_KEY, serve_agents
from gateway.agents.urls import normalize_service_url
from gateway.floor.host import FloorHost
from gateway.talk.text import TalkResult, talk_text
from gateway.testing.wire_agents import Respond, WireAgent, openfloor_bot, ovon09_only
from tests.ofp_schemas import (
    assert_valid_envelope,
    assert_valid_manifest,
    assert_valid_ovon_envelope,
)

SPEAKER = "tag:echo.example,2025:echo"


def echo_agent(service_url: str) -> Respond:
    """A hand-written 1.1 agent (not ours, not the openfloor package's) that, like many, does not
    look at ``to``: it publishes its manifest under ``service_url``, greets, echoes, and takes a
    ``bye`` with an empty reply."""
    manifest = {
        "identification": {
            "speakerUri": SPEAKER,
            "serviceUrl": service_url,
            "organization": "Echo Inc.",
            "conversationalName": "Echo Slash",
            "synopsis": "Says back what it hears.",
        },
        "capabilities": [{"keyphrases": ["echo"], "descriptions": ["Echoes what it hears."]}],
    }
    assert_valid_manifest(manifest)

    def say(text: str) -> dict[str, Any]:
        return {
            "eventType": "utterance",
            "parameters": {
                "dialogEvent": {
                    "speakerUri": SPEAKER,
                    "features": {"text": {"mimeType": "text/plain", "tokens": [{"value": text}]}},
                }
            },
        }

    async def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        of = body["openFloor"]
        out: list[dict[str, Any]] = []
        for ev in of["events"]:
            kind = ev["eventType"]
            if kind == "getManifests":
                out.append(
                    {
                        "eventType": "publishManifests",
                        "parameters": {"servicingManifests": [manifest]},
                    }
                )
            elif kind == "invite":
                out += [{"eventType": "acceptInvite"}, say("Echo here.")]
            elif kind == "utterance":
                de = ev["parameters"]["dialogEvent"]
                if de["speakerUri"] != SPEAKER:
                    out.append(say("echo: " + de["features"]["text"]["tokens"][0]["value"]))
        reply = {
            "openFloor": {
                "schema": {"version": "1.1.0"},
                "conversation": {"id": of["conversation"]["id"]},
                "sender": {"speakerUri": SPEAKER, "serviceUrl": service_url},
                "events": out,
            }
        }
        return 200, reply

    return respond


def loopback_directory() -> AgentDirectory:
    return AgentDirectory(AddressPolicy(["127.0.0.0/8"]))


def speaker_uris_for(result: TalkResult, service_url: str) -> set[str]:
    """Every speaker URI the floor listed the agent at ``service_url`` under, in every envelope
    delivered to the person."""
    key = normalize_service_url(service_url)
    return {
        c["identification"]["speakerUri"]
        for env in result.heard
        for c in env["openFloor"]["conversation"].get("conversants", [])
        if normalize_service_url(c["identification"]["serviceUrl"]) == key
    }


# ------------------------------------------------------------------------------ URL spellings
@pytest.mark.parametrize(
    ("typed", "published"),
    [
        ("{base}/", "{base}"),
        ("{base}", "{base}/"),
        ("HTTP://127.0.0.1:{port}/", "{base}"),
        ("{base}/", "HTTP://127.0.0.1:{port}/"),
    ],
)
async def test_agent_joins_under_its_manifest_name_however_its_url_is_written(
    typed: str, published: str
) -> None:
    async with WireAgent(echo_agent("")) as agent:
        port = agent.base.rsplit(":", 1)[1]
        published_url = published.format(base=agent.base, port=port)
        agent.respond = echo_agent(published_url)
        directory = loopback_directory()
        try:
            result = await talk_text(
                "hello echo", [typed.format(base=agent.base, port=port)], directory=directory
            )
        finally:
            await directory.aclose()
    assert result.notices == []
    assert ("Echo Slash", "Echo here.") in result.lines
    assert ("Echo Slash", "echo: hello echo") in result.lines
    # One agent, one speaker URI, in every envelope the person got: no provisional host name.
    assert speaker_uris_for(result, published_url) == {SPEAKER}
    names = {
        c["identification"]["conversationalName"]
        for env in result.heard
        for c in env["openFloor"]["conversation"].get("conversants", [])
    }
    assert "127.0.0.1" not in names
    assert agent.event_types() == [["getManifests"], ["invite"], ["utterance"], ["bye"]]
    for body in agent.bodies("received"):
        assert_valid_envelope(body)


async def test_built_in_agents_served_over_http_with_a_trailing_slash() -> None:
    runner = await serve_agents("127.0.0.1", 0, ["parrot"])
    try:
        url = runner.app[AGENTS_KEY]["parrot"].manifest.identification.service_url
        directory = loopback_directory()
        try:
            result = await talk_text("good morning", [url + "/"], directory=directory)
        finally:
            await directory.aclose()
    finally:
        await runner.cleanup()
    assert result.notices == []
    assert ("Parrot", "You said: good morning") in result.lines
    assert len(speaker_uris_for(result, url)) == 1
    for body in result.sent + result.received:
        assert_valid_envelope(body)


# ------------------------------------------------------------------------------ OVON 0.9 only
def _dialects(agent: WireAgent) -> list[str]:
    return ["ovon" if "ovon" in b else "openFloor" for b in agent.bodies("received")]


async def test_ovon_only_agent_is_detected_and_remembered() -> None:
    async with WireAgent(ovon09_only("")) as agent:
        agent.respond = ovon09_only(agent.base)
        directory = loopback_directory()
        try:
            result = await talk_text("hello there", [agent.base + "/"], directory=directory)
        finally:
            await directory.aclose()
    texts = [t for _, t in result.lines]
    assert "Hello from a 0.9 agent." in texts
    assert "0.9 heard: hello there" in texts
    assert result.notices == []  # the rejected 1.1 invite was retried, not reported
    # getManifests (nothing 0.9 can say) and the invite were tried in 1.1 and refused; the
    # invite went again in 0.9, and from then on everything went in 0.9 only: the utterance,
    # and the bye at the end.
    assert _dialects(agent) == ["openFloor", "openFloor", "ovon", "ovon", "ovon"]
    assert agent.statuses == [500, 500, 200, 200, 200]
    assert [e for e in agent.event_types() if e][-1] == ["bye"]
    for body in agent.bodies("received"):
        if "ovon" in body:
            assert_valid_ovon_envelope(body)
        else:
            assert_valid_envelope(body)


async def test_ovon_only_agent_declared_by_its_url_gets_no_1_1() -> None:
    async with WireAgent(ovon09_only("")) as agent:
        agent.respond = ovon09_only(agent.base)
        directory = loopback_directory()
        try:
            result = await talk_text("hi", ["ovon+" + agent.base], directory=directory)
        finally:
            await directory.aclose()
    assert "0.9 heard: hi" in [t for _, t in result.lines]
    assert result.notices == []
    assert set(_dialects(agent)) == {"ovon"} and 500 not in agent.statuses
    # The person's envelopes name the agent by its address, never with the ovon+ prefix.
    assert "ovon+" not in json.dumps(result.said + result.heard)


async def test_a_broken_1_1_agent_is_retried_once_not_forever() -> None:
    async def broken(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        return 500, {"error": "down"}

    async with WireAgent(broken) as agent:
        directory = loopback_directory()
        try:
            result = await talk_text("anyone?", [agent.base], directory=directory)
        finally:
            await directory.aclose()
    # getManifests: 1.1 only (0.9 has no way to say it); invite: 1.1 then 0.9 (the retry), which
    # failed too: no second retry for anything after.
    assert _dialects(agent)[:3] == ["openFloor", "openFloor", "ovon"]
    assert _dialects(agent)[3:] == ["openFloor"] * (len(agent.received) - 3)
    assert any("HTTP 500" in n.text for n in result.notices)


# ------------------------------------------------------------------------------ talk --json
async def _talk_cli(*args: str) -> dict[str, Any]:
    env = {**os.environ}
    env.pop("OFP_GATEWAY_ALLOW", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gateway",
        "talk",
        "--json",
        "--no-record",
        "--allow-address",
        "127.0.0.0/8",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    return json.loads(out)


async def test_talk_json_sent_and_received_are_the_wire() -> None:
    async with WireAgent(openfloor_bot("")) as agent:
        agent.respond = openfloor_bot(agent.base)
        out = await _talk_cli("--text", "hi bot", "--agent", agent.base)
    assert out["sent"] == agent.bodies("received")
    assert out["received"] == agent.bodies("sent")
    kinds = [[e["eventType"] for e in b["openFloor"]["events"]] for b in out["sent"]]
    assert kinds == [["getManifests"], ["invite"], ["utterance"], ["bye"]]
    # What went out carries the conversation section the floor wrote, not the person's bare one.
    invite = out["sent"][1]["openFloor"]["conversation"]
    assert {c["identification"]["speakerUri"] for c in invite["conversants"]} >= {
        "tag:openfloor-bot.example,2025:1"
    }
    assert "conversants" not in out["said"][0]["openFloor"]["conversation"]
    # The rewritten view is kept apart: what the person said and what the floor delivered.
    assert out["heard"] and out["said"]
    assert "Hello! How can I help you today?" in out["replyText"] or any(
        line["text"] == "Hello! How can I help you today?" for line in out["lines"]
    )
    for body in out["sent"] + out["received"] + out["said"] + out["heard"]:
        assert_valid_envelope(body)


# ------------------------------------------------------------------------------ bye at the end
async def test_talk_says_bye_to_the_agents_when_it_ends() -> None:
    async with WireAgent(openfloor_bot("")) as agent:
        agent.respond = openfloor_bot(agent.base)
        directory = loopback_directory()
        try:
            result = await talk_text("hi", [agent.base], directory=directory)
        finally:
            await directory.aclose()
    last = agent.bodies("received")[-1]["openFloor"]
    assert [e["eventType"] for e in last["events"]] == ["bye"]
    assert "parameters" not in last["events"][0]  # §1.16: bye has no parameters
    assert last["sender"]["speakerUri"] == "tag:ofp-gateway.local,2025:user"
    assert_valid_envelope(agent.bodies("received")[-1])
    assert result.completed


async def test_a_dead_agent_delays_the_end_by_the_bye_timeout_at_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An agent that never answers its bye cannot hold the end of a conversation: the bye wait
    gives up at Limits.bye_timeout_s (FloorHost.end says not every delivery finished) and the
    request to the agent is abandoned. Shown by what happened, not by the clock: only the bound
    can end a wait on an agent that never answers."""
    ends: list[bool] = []
    real_end = FloorHost.end

    async def end(self: FloorHost) -> bool:
        ends.append(await real_end(self))
        return ends[-1]

    monkeypatch.setattr(FloorHost, "end", end)
    abandoned = asyncio.Event()
    async with WireAgent(openfloor_bot("")) as agent:
        bot = openfloor_bot(agent.base, hang_on_bye=24 * 3600)  # never answers a bye

        async def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
            try:
                return await bot(body)
            except asyncio.CancelledError:  # the gateway hung up (handler_cancellation)
                abandoned.set()
                raise

        agent.respond = respond
        directory = loopback_directory()
        try:
            # The guard only turns a missing bound into a failure instead of a hang.
            result = await asyncio.wait_for(talk_text("hi", [agent.base], directory=directory), 120)
            await asyncio.wait_for(abandoned.wait(), 30)  # an event, not a duration
        finally:
            await directory.aclose()
        assert [e["eventType"] for e in agent.bodies("received")[-1]["openFloor"]["events"]] == [
            "bye"
        ]
    assert result.lines  # the conversation itself went on normally
    assert ends == [False]  # the bye wait ended on its bound, not on the agent's answer
