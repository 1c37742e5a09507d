"""The built-in agents served over HTTP, driven end to end by HttpAgent (and by raw requests
for the error paths)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from gateway.agents import AddressRefused, HttpAgent, HttpClient
from gateway.agents.builtin import Parrot
from gateway.agents.server import AGENTS_KEY, agents_app, serve_agents
from gateway.ofp import EventType, Sender, To
from tests.agents.helpers import LOOPBACK, USER, events_of, serving, texts, utterance
from tests.ofp_schemas import (
    assert_valid_envelope,
    assert_valid_manifest,
    assert_valid_ovon_envelope,
)


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, dict[str, str]]]:
    runner = await serve_agents("127.0.0.1", 0)
    urls = {n: a.manifest.identification.service_url for n, a in runner.app[AGENTS_KEY].items()}
    base = urls["parrot"].rsplit("/", 1)[0]
    try:
        yield base, urls
    finally:
        await runner.cleanup()


@pytest.fixture
async def client() -> AsyncIterator[HttpClient]:
    async with HttpClient(LOOPBACK) as c:
        yield c


async def test_listing_and_manifests(served, client: HttpClient) -> None:
    base, urls = served
    assert set(urls) == {"parrot", "clock", "concierge", "assistant", "convener"}
    assert all(url == f"{base}/{name}" for name, url in urls.items())
    body, content_type = await client.fetch(base + "/")
    listed = json.loads(body)["agents"]
    assert content_type == "application/json"
    assert [a["name"] for a in listed] == ["parrot", "clock", "concierge", "assistant", "convener"]
    for entry in listed:
        assert_valid_manifest(entry["manifest"])
        assert entry["manifest"]["identification"]["serviceUrl"] == entry["serviceUrl"]
    body, _ = await client.fetch(urls["clock"])
    assert json.loads(body) == listed[1]["manifest"]


async def test_each_agent_answers_over_http(served, client: HttpClient) -> None:
    _, urls = served
    parrot = HttpAgent(urls["parrot"], client)
    manifest = await parrot.fetch_manifest("conv-1", Sender(speaker_uri=USER))
    assert manifest.identification.conversational_name == "Parrot"
    assert_valid_manifest(manifest.to_wire())

    reply = await parrot.handle(utterance("over the wire"))
    assert reply is not None
    assert_valid_envelope(reply.to_wire())
    assert texts(reply) == ["You said: over the wire"]
    assert reply.sender.service_url == urls["parrot"]

    reply = await HttpAgent(urls["clock"], client).handle(utterance("what time is it"))
    assert texts(reply)[0].startswith("It's ")

    concierge = HttpAgent(urls["concierge"], client)
    reply = await concierge.handle(utterance("talk to the clock"))
    (invite,) = events_of(reply, EventType.INVITE)
    assert invite.to.service_url == urls["clock"]  # the real URL, invitable over HTTP
    assert_valid_envelope(reply.to_wire())


async def test_an_unlisted_client_cannot_reach_the_local_server(served) -> None:
    _, urls = served
    async with HttpClient() as strict:
        with pytest.raises(AddressRefused):
            await HttpAgent(urls["parrot"], strict).handle(utterance("hi"))


async def test_replies_are_valid_wire_envelopes(served) -> None:
    _, urls = served
    async with aiohttp.ClientSession() as session:
        sent = utterance("raw", to=To(service_url=urls["parrot"], private=True)).to_wire()
        async with session.post(urls["parrot"], json=sent) as resp:
            assert resp.status == 200
            wire = await resp.json()
    assert_valid_envelope(wire)
    (event,) = wire["openFloor"]["events"]
    assert event["to"] == {"speakerUri": USER, "private": True}


async def test_an_ovon_request_gets_an_ovon_reply(served) -> None:
    _, urls = served
    ovon = {
        "ovon": {
            "schema": {"version": "0.9.0"},
            "conversation": {"id": "legacy-1"},
            "sender": {"from": "https://legacy.example/client"},
            "events": [
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": {
                            "speakerId": "legacy-user",
                            "span": {"startTime": "2025-01-01T00:00:00Z"},
                            "features": {
                                "text": {"mimeType": "text/plain", "tokens": [{"value": "old"}]}
                            },
                        }
                    },
                }
            ],
        }
    }
    async with aiohttp.ClientSession() as session, session.post(urls["parrot"], json=ovon) as resp:
        assert resp.status == 200
        wire = await resp.json()
    assert_valid_ovon_envelope(wire)
    assert wire["ovon"]["conversation"]["id"] == "legacy-1"
    said = wire["ovon"]["events"][0]["parameters"]["dialogEvent"]["features"]["text"]
    assert said["tokens"][0]["value"] == "You said: old"


@pytest.mark.parametrize(
    ("body", "status", "path"),
    [
        (b"this is not json", 400, "$"),
        (b'{"openFloor": {"schema": {"version": "1.1.0"}, "events": []}}', 400, "$.openFloor"),
        (
            b'{"openFloor": {"schema": {"version": "1.1.0"}, "conversation": {"id": "c"},'
            b' "sender": {"speakerUri": "u"}, "events": [{"eventType": "utterance"}]}}',
            400,
            "$.openFloor.events[0]",
        ),
    ],
)
async def test_bad_envelopes_get_400_with_the_problems(
    served, body: bytes, status: int, path: str
) -> None:
    _, urls = served
    async with aiohttp.ClientSession() as session, session.post(urls["parrot"], data=body) as resp:
        assert resp.status == status
        assert resp.content_type == "application/json"
        error = await resp.json()
    assert error["error"]
    assert error["problems"]
    assert all(set(p) == {"path", "message", "hint"} for p in error["problems"])
    assert any(p["path"].startswith(path) for p in error["problems"])


async def test_unknown_agents_and_oversized_requests_get_json_errors(served) -> None:
    base, urls = served
    async with aiohttp.ClientSession() as session:
        async with session.post(base + "/weather", json={}) as resp:
            assert resp.status == 404
            assert "GET / lists them" in (await resp.json())["error"]
        async with session.post(urls["parrot"], data=b"x" * (3 * 1024 * 1024)) as resp:
            assert resp.status == 413
            assert (await resp.json())["error"]


class _Broken(Parrot):
    """A built-in with a bug in it."""

    def answer(self, heard):
        raise KeyError("a bug")


async def test_an_agent_bug_is_a_json_500_without_a_traceback() -> None:
    app = agents_app({"broken": _Broken()})
    async with (
        serving(app) as base,
        aiohttp.ClientSession() as session,
        session.post(base + "/broken", data=utterance("hi").to_json()) as resp,
    ):
        assert resp.status == 500
        text = await resp.text()
    assert "Traceback" not in text and "KeyError" not in text
    assert "server log" in json.loads(text)["error"]
