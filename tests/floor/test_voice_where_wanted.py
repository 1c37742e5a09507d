"""The person's voice goes only where it is wanted: the audio feature reaches only agents whose
manifest's supportedLayers.input has audio; others get the text, words and confidence."""

from __future__ import annotations

from aiohttp import web

from gateway.ofp import Event, EventType, Feature, Token, text_event
from gateway.testing.loopback import audio_manifest
from tests.ofp_schemas import assert_valid_envelope


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


async def test_invites_carry_the_conversation_so_far_bounded_and_without_the_voice(
    site, harness
) -> None:
    h = harness()
    await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": "builtin:parrot"})])
    assert await h.conv.wait_idle(10)
    for i in range(8):
        de = text_event(h.conv.user.speaker_uri, f"line {i}")
        de.features["audio"] = Feature(mime_type="audio/wav", tokens=[Token(value="UklGRg==")])
        await h.conv.say([Event(event_type=EventType.UTTERANCE, parameters={"dialog_event": de})])
        assert await h.conv.wait_idle(10)
    newcomer = site.route("newcomer", _agent("newcomer", hears=True))
    await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": newcomer})])
    assert await h.conv.wait_idle(10)
    invite = next(
        e
        for b in site.received["newcomer"]
        for e in b["openFloor"]["events"]
        if e["eventType"] == "invite"
    )
    assert_valid_envelope(site.received["newcomer"][0])
    history = invite["parameters"]["dialogHistory"]
    limit = h.conv.limits.history_events
    assert len(history) == limit  # the greeting and 16 utterances, the newest 10 kept
    said = [d["features"]["text"]["tokens"][0]["value"] for d in history]
    assert said[-2:] == ["line 7", "You said: line 7"]
    assert all("audio" not in d["features"] for d in history)  # the voice stays with the person
    # With --keep-audio the voice may go along.
    h.conv.history_keeps_audio = True
    assert any("audio" in d.features for d in h.conv.dialog_history())
