"""The person's voice goes only where it is wanted: the audio feature reaches only agents whose
manifest's supportedLayers.input has audio; others get the text, words and confidence."""

from __future__ import annotations

from aiohttp import web

from gateway.ofp import Event, EventType, Feature, Token, text_event
from tests.ofp_schemas import assert_valid_envelope
from tests.support.loopback import audio_manifest


def _agent(name: str, *, hears: bool):
    async def handle(request: web.Request) -> web.Response:
        body = await request.json()
        events = audio_manifest(body, str(request.url), f"tag:{name}", name) if hears else []
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": body["openFloor"]["conversation"],
                    "sender": {"speakerUri": f"tag:{name}"},
                    "events": events,
                }
            }
        )

    return handle


async def test_audio_only_to_agents_that_take_it(site, harness) -> None:
    h = harness()
    listener = site.route("listener", _agent("listener", hears=True))
    reader = site.route("reader", _agent("reader", hears=False))
    for url in (listener, reader):
        await h.conv.learn_manifest(url)
    await h.conv.say(
        [Event(event_type=EventType.INVITE, to={"serviceUrl": u}) for u in (listener, reader)]
    )
    assert await h.conv.wait_idle(10)
    de = text_event(h.conv.user.speaker_uri, "hello everyone")
    de.features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value="UklGRg==")])
    await h.conv.say([Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": de})])
    assert await h.conv.wait_idle(10)

    def features(name: str) -> list[set[str]]:
        return [
            set(e["parameters"]["dialogEvent"]["features"])
            for b in site.received[name]
            for e in b["openFloor"]["events"]
            if e["eventType"] == "utterance"
        ]

    assert features("listener") == [{"text", "audio"}]
    assert features("reader") == [{"text"}]
    for body in site.received["reader"] + site.received["listener"]:
        assert_valid_envelope(body)
