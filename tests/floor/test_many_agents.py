"""Many agents, one conversation, through ``talk``'s conversation (gateway/talk/text.py): one
answer per utterance, an agent we did not write (the ``openfloor`` package's BotAgent) that yields
after each answer and gets the floor back when addressed, and an agent that tries to shut the
person out."""

from __future__ import annotations

from typing import Any

from aiohttp import web
from openfloor import DialogEvent as OFDialogEvent
from openfloor import Envelope as OFEnvelope
from openfloor import TextFeature, UtteranceEvent, YieldFloorEvent
from openfloor.agent import BotAgent
from openfloor.manifest import Capability as OFCapability
from openfloor.manifest import Identification as OFIdentification
from openfloor.manifest import Manifest as OFManifest
from openfloor.manifest import SupportedLayers as OFLayers

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.talk.text import talk_text
from tests.ofp_schemas import assert_valid_envelope

WEATHER = "tag:weather.example,2025:bot"


class YieldingWeatherBot(BotAgent):
    """A third-party agent: answers what is addressed to it, then yields the floor (as a
    polite agent in a shared room does)."""

    def bot_on_utterance(
        self, event: Any, in_envelope: OFEnvelope, out_envelope: OFEnvelope
    ) -> None:
        said = OFDialogEvent(
            speakerUri=WEATHER, features={"text": TextFeature(values=["Sunny all week."])}
        )
        out_envelope.events.append(UtteranceEvent(dialogEvent=said))
        out_envelope.events.append(YieldFloorEvent(reason="@brb answered"))


def weather_route(site) -> str:
    bots: list[YieldingWeatherBot] = []

    async def handler(request: web.Request) -> web.Response:
        if not bots:
            ident = OFIdentification(
                speakerUri=WEATHER,
                serviceUrl=url,
                organization="weather.example",
                conversationalName="Weather",
                synopsis="Forecasts the weather.",
            )
            caps = OFCapability(
                keyphrases=["weather", "forecast", "rain"],
                descriptions=["Tells the weather."],
                supportedLayers=OFLayers(input=["text"], output=["text"]),
            )
            bots.append(YieldingWeatherBot(OFManifest(identification=ident, capabilities=[caps])))
        incoming = OFEnvelope.from_json(await request.text(), as_payload=True)
        reply = bots[0].process_envelope(incoming)
        return web.json_response(text=reply.to_json(as_payload=True))

    url = site.route("weather", handler)
    return url


def _said(result, speaker: str) -> list[str]:
    return [t for s, t in result.lines if s == speaker]


async def test_three_agents_one_answer_each_and_a_yielding_agent_gets_the_floor_back(
    site,
) -> None:
    weather = weather_route(site)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            [
                "Weather, will it rain tomorrow?",
                "Clock, what time is it?",
                "and what is the date?",
                "Weather, and the day after?",
                "Parrot, say cheese",
            ],
            ["builtin:parrot", "builtin:clock", weather],
            directory=directory,
            timeout=15,
        )
    finally:
        await directory.aclose()
    assert result.completed
    whom = [(a["toName"], a["why"]) for a in result.addressed]
    assert whom == [
        ("Weather", "you named Weather"),
        ("Clock", "you named Clock"),
        ("Clock", "you are talking with Clock"),
        ("Weather", "you named Weather"),
        ("Parrot", "you named Parrot"),
    ]
    # One answer per utterance (beside the three greetings): the yielding bot answered both
    # times — the second only because the floor granted it the floor back when addressed.
    greeted = 3
    answers = [(s, t) for s, t in result.lines if s != "User"][greeted:]
    assert [s for s, _ in answers] == ["Weather", "Clock", "Clock", "Weather", "Parrot"]
    assert answers[-1][1] == "You said: Parrot, say cheese"
    grants = [
        e
        for env in result.heard
        for e in env["openFloor"]["events"]
        if e["eventType"] == "grantFloor"
    ]
    assert [g["to"]["speakerUri"] for g in grants] == [WEATHER]
    # The bot was sent that grant, before the utterance, in the floor manager's envelope.
    sent_to_bot = [b for b in site.received["weather"]]
    kinds = [[e["eventType"] for e in b["openFloor"]["events"]] for b in sent_to_bot]
    assert ["grantFloor"] in kinds
    assert kinds.index(["grantFloor"]) < len(kinds) - 1
    for body in sent_to_bot:
        assert_valid_envelope(body)
    # The person is told when it yields, with its reason in words (§1.8 tokens).
    told = [n.text for n in result.notices]
    assert told.count("Weather yielded the floor (it will be right back; answered).") == 2
    # Every utterance the person sent carried its addressee.
    to = [
        e.get("to", {}).get("speakerUri")
        for env in result.said
        for e in env["openFloor"]["events"]
        if e["eventType"] == "utterance"
    ]
    assert to[0] == WEATHER and None not in to


async def test_an_agent_cannot_uninvite_the_person(site) -> None:
    async def rude(request: web.Request) -> web.Response:
        body = await request.json()
        of = body["openFloor"]
        events = [e["eventType"] for e in of["events"]]
        out: list[dict[str, Any]] = []
        person = [
            c["identification"]["speakerUri"]
            for c in of["conversation"].get("conversants", [])
            if c["identification"].get("role") == "User"
        ]
        if "utterance" in events and of["sender"]["speakerUri"] in person:
            out = [
                {
                    "eventType": "uninvite",
                    "to": {"speakerUri": person[0]},
                    "reason": "@error you talk too much",
                },
                {"eventType": "revokeFloor", "to": {"speakerUri": person[0]}},
            ]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:rude.example,2025:1", "serviceUrl": url},
                    "events": out,
                }
            }
        )

    url = site.route("rude", rude)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            ["Everyone, hello", "Parrot, are you there?"],
            ["builtin:parrot", url],
            directory=directory,
            timeout=15,
        )
    finally:
        await directory.aclose()
    tried = [n for n in result.notices if n.reason == "@refused"]
    assert len(tried) == 4  # it tries both at each of the two utterances (it ignores `to`)
    assert "tried to remove you from the conversation" in tried[0].text
    assert "@error you talk too much" in tried[0].text
    assert "tried to take the floor from you" in tried[1].text
    # Not applied, not passed on: the person is still here, and still heard and answered.
    assert _said(result, "Parrot")[-1] == "You said: Parrot, are you there?"
    for env in result.heard:
        for e in env["openFloor"]["events"]:
            assert e["eventType"] not in ("uninvite", "revokeFloor")
    last = result.heard[-1]["openFloor"]["conversation"]
    assert any(c["identification"]["role"] == "User" for c in last["conversants"])
