"""A conversation over HTTP with an agent we did not write: the `openfloor` package's BotAgent."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from openfloor import Envelope as OFEnvelope
from openfloor.agent import BotAgent
from openfloor.manifest import Identification as OFIdentification
from openfloor.manifest import Manifest as OFManifest

from gateway.ofp import Event, EventType, text_event
from tests.ofp_schemas import assert_valid_envelope


async def test_conversation_with_openfloor_bot_agent(site, harness) -> None:
    url_holder: dict[str, str] = {}

    def make_bot() -> BotAgent:
        ident = OFIdentification(
            speakerUri="tag:openfloor-bot.example,2025:1",
            serviceUrl=url_holder["url"],
            organization="openfloor package",
            conversationalName="Simple Bot",
            synopsis="A BotAgent.",
        )
        return BotAgent(OFManifest(identification=ident, capabilities=[]))

    bots: list[BotAgent] = []

    async def handler(request: web.Request) -> web.Response:
        if not bots:
            bots.append(make_bot())
        incoming = OFEnvelope.from_json(await request.text(), as_payload=True)
        reply = bots[0].process_envelope(incoming)
        return web.json_response(text=reply.to_json(as_payload=True))

    url = site.route("bot", handler)
    url_holder["url"] = url
    h = harness()
    await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": url})])
    assert await h.conv.wait_idle(10)
    assert "acceptInvite" in h.event_types()
    assert "Hello! How can I help you today?" in h.texts()
    # The bot answered as tag:openfloor-bot..., and the floor now knows it by that name.
    assert "tag:openfloor-bot.example,2025:1" in h.conv.floor.floor_granted

    await h.conv.say(
        [
            Event(
                event_type=EventType.UTTERANCE,
                parameters={"dialog_event": text_event(h.conv.user.speaker_uri, "hi bot")},
            )
        ]
    )
    assert await h.conv.wait_idle(10)
    assert h.texts()[-1].startswith("Sorry! I'm a simple bot")
    assert h.notices == []
    # Everything we sent it validates against the official schemas.
    for body in site.received["bot"]:
        assert_valid_envelope(body)
    sent_texts = [
        e["parameters"]["dialogEvent"]["features"]["text"]["tokens"][0]["value"]
        for body in site.received["bot"]
        for e in body["openFloor"]["events"]
        if e["eventType"] == "utterance"
    ]
    assert sent_texts == ["hi bot"]
    assert json.dumps(site.received["bot"][0]).count('"invite"') == 1


async def test_agent_invited_by_an_agent_over_http_joins_under_its_own_name(harness) -> None:
    """The concierge (HTTP) brings in the clock (HTTP): the floor learns the clock's name."""
    from gateway.agents.server import AGENTS_KEY, serve_agents

    runner = await serve_agents("127.0.0.1", 0)
    try:
        concierge = runner.app[AGENTS_KEY]["concierge"].manifest.identification.service_url
        h = harness()
        await h.conv.learn_manifest(concierge, timeout=5)
        await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": concierge})])
        assert await h.conv.wait_idle(10)
        await h.conv.say(
            [
                Event(
                    event_type=EventType.UTTERANCE,
                    parameters={
                        "dialog_event": text_event(
                            h.conv.user.speaker_uri, "I want to talk to the clock"
                        )
                    },
                )
            ]
        )
        assert await h.conv.wait_idle(10)
        for _ in range(50):
            names = {i.conversational_name for i in h.conv.floor.conversants}
            if "Clock" in names:
                break
            await asyncio.sleep(0.1)
        assert {"Concierge", "Clock"} <= names
        assert any(t.startswith("It's ") for t in h.texts())  # the clock answered the history
    finally:
        await runner.cleanup()
