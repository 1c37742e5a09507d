"""The client protocol of `serve`, driven by a plain WebSocket client against a real gateway."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from gateway.server.messages import (
    Address,
    AgentUtterance,
    FloorUpdate,
    Invite,
    SayText,
    SessionState,
    StateUpdate,
)
from gateway.testing.loopback import audio_manifest
from gateway.testing.page import PARROT, Page
from gateway.testing.speech import piper_16k, silence


async def test_text_conversation_floor_and_rejoin(gateway) -> None:
    page = await Page.open(gateway.ws, transport="none")
    w = page.welcome
    assert w["type"] == "welcome" and w["conversationId"].startswith("conv:") and not w["rejoined"]
    floor = await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == 5)
    names = {c["name"] for c in floor["conversants"]}
    assert {"Parrot", "Clock", "Concierge", "Assistant", "You"} <= names
    # One answer per utterance: the question goes to the agent best placed to answer it...
    await page.send(SayText("What time is it?"))
    asked = await page.wait_for(lambda e: e["type"] == "transcript" and e.get("typed"))
    assert asked["toName"] == "Clock" and "keyphrase" in asked["why"]
    await page.wait_for(lambda e: e["type"] == "utterance" and e["speaker"] == "Clock" and "It's" in e["text"])
    # ...and what the person addresses goes to that agent only.
    await page.send(SayText("Parrot, hello gateway"))
    reply = await page.wait_for(
        lambda e: e["type"] == "utterance" and e["text"] == "You said: Parrot, hello gateway"
    )
    assert reply["speaker"] == "Parrot"
    # The page's choice: a to that is not an agent here, or a private that is not a boolean,
    # is refused and the conversation goes on.
    await page.send(SayText("hi", to="tag:nobody"))
    await page.wait_for(lambda e: e["type"] == "error" and "not an agent" in e["message"])
    await page.send(type="text", text="hi", to=PARROT, private="yes")
    await page.wait_for(lambda e: e["type"] == "error" and "'private' must be" in e["message"])
    await page.send(type="address", to="tag:nobody")
    await page.wait_for(lambda e: e["type"] == "error" and "'tag:nobody'" in e["message"])
    # The same, read through the message classes the gateway writes them with.
    said = [m for m in page.messages if isinstance(m, AgentUtterance) and m.speaker == "Parrot"]
    assert said and said[-1].text == "You said: Parrot, hello gateway" and not said[-1].private
    # Nobody else answered: the parrot repeats only what is addressed to it, and the clock and
    # the concierge leave alone what is addressed to another (§2.1).
    answers = [m for m in page.messages if isinstance(m, AgentUtterance)]
    by = {n: [m.text for m in answers if m.speaker == n] for n in ("Parrot", "Clock", "Concierge")}
    assert len(by["Parrot"]) == 2 and len(by["Clock"]) == 2  # a greeting and one answer each
    assert len(by["Concierge"]) == 1  # its greeting alone
    assert len([m for m in page.messages if isinstance(m, FloorUpdate)][-1].conversants) == 5
    await page.close()
    # A reload: same id + token → the same conversation, with its history.
    again = await Page.open(
        gateway.ws, transport="none", conversationId=w["conversationId"], token=w["token"]
    )
    assert again.welcome["rejoined"] and again.welcome["conversationId"] == w["conversationId"]
    assert any(
        e.get("text") == "You said: Parrot, hello gateway" for e in again.welcome["history"]
    )
    await again.close()
    # A wrong token does not open someone else's conversation.
    other = await Page.open(
        gateway.ws, transport="none", conversationId=w["conversationId"], token="guess"
    )
    assert not other.welcome["rejoined"] and other.welcome["conversationId"] != w["conversationId"]
    await other.close()


async def test_voice_over_websocket_pcm(gateway) -> None:
    page = await Page.open(gateway.ws, transport="ws")
    try:
        assert page.welcome["audio"] == {"inRate": 16000, "outRate": 24000}
        await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == 4)
        # Spoken turns follow the page's choice of addressee (clicked in the floor panel).
        await page.send(Address(PARROT))
        await asyncio.sleep(1.0)
        said = "Please turn on the kitchen lights."
        pcm = np.concatenate([silence(300), piper_16k(said), silence(1200)])
        start = time.monotonic()
        for i in range(0, len(pcm), 320):
            await asyncio.sleep(max(0.0, start + i / 16000 - time.monotonic()))
            await page.ws.send(pcm[i : i + 320].astype("<i2").tobytes())
        final = await page.wait_for(lambda e: e["type"] == "transcript" and not e.get("typed"))
        assert "kitchen lights" in final["text"].lower()
        reply = await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"].startswith("You said: Please")
        )
        # The reply's own "speaking", not a greeting's before it.
        since = page.events.index(reply)
        await page.wait_for(
            lambda e: e["type"] == "state" and e["state"] == "speaking", since=since
        )
        assert StateUpdate(SessionState.SPEAKING) in page.messages
        before = page.audio_bytes
        await asyncio.sleep(1.0)
        assert page.audio_bytes - before > 24000  # at least half a second of reply audio arrived
    finally:
        await page.close()


async def test_audio_url_mode_serves_the_clip_and_metrics_count(gateway) -> None:
    from aiohttp import web

    seen: list[dict] = []

    async def agent(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body)
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": body["openFloor"]["conversation"],
                    "sender": {"speakerUri": "tag:listener"},
                    # Its manifest asks for audio: only then is the voice sent (docs/floor.md).
                    "events": audio_manifest(body, str(request.url), "tag:listener"),
                }
            }
        )

    app = web.Application()
    app.router.add_post("/agent", agent)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    page = await Page.open(gateway.ws, transport="ws")
    try:
        await page.send(Invite(f"http://127.0.0.1:{port}/agent"))
        await page.wait_for(
            lambda e: (
                e["type"] == "floor"
                and any(c["serviceUrl"].endswith("/agent") for c in e["conversants"])
            )
        )
        pcm = np.concatenate(
            [silence(300), piper_16k("Is it going to rain this weekend?"), silence(1200)]
        )
        for i in range(0, len(pcm), 3200):
            await page.ws.send(pcm[i : i + 3200].astype("<i2").tobytes())
            await asyncio.sleep(0.2)
        await page.wait_for(lambda e: e["type"] == "transcript" and not e.get("typed"))
        for _ in range(100):
            if any(e["eventType"] == "utterance" for b in seen for e in b["openFloor"]["events"]):
                break
            await asyncio.sleep(0.1)
        utter = next(
            e for b in seen for e in b["openFloor"]["events"] if e["eventType"] == "utterance"
        )
        url = utter["parameters"]["dialogEvent"]["features"]["audio"]["tokens"][0]["valueUrl"]
        assert url.startswith(gateway.url + "/audio/")
        status, body, headers = gateway.get(url[len(gateway.url) :])
        assert status == 200 and body[:4] == b"RIFF" and headers["Content-Type"] == "audio/wav"
        # A turn's stages are counted when its answer is first heard: wait for that, not for the
        # page to be closed before the parrot's reply is synthesised.
        await page.wait_for(lambda e: e["type"] == "timing")
    finally:
        await page.close()
        await runner.cleanup()
    status, body, _ = gateway.get("/metrics")
    text = body.decode()
    assert status == 200 and 'ofp_gateway_stage_seconds_count{stage="stt"}' in text
    assert 'ofp_gateway_utterances_total{source="voice"}' in text


async def test_export_needs_the_token(gateway) -> None:
    page = await Page.open(gateway.ws, transport="none")
    await page.send(SayText("keep this", to=PARROT))
    await page.wait_for(lambda e: e["type"] == "utterance" and "keep this" in e["text"])
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    status, body, headers = gateway.get(f"/export/{conv}?format=mplp-dialog&token={token}")
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    assert "keep this" in body.decode()
    assert gateway.get(f"/export/{conv}?format=mplp-dialog&token=nope")[0] == 403
    await page.close()


async def test_bad_input_gets_clear_errors_and_loses_nothing(gateway) -> None:
    # No hello: closed with 1008.
    async with connect(gateway.ws) as ws:
        await ws.send("not json")
        with pytest.raises(ConnectionClosed) as info:
            await ws.recv()
        assert info.value.rcvd.code == 1008
    # A 50 MB frame: closed with 1009; the conversation and its records survive.
    page = await Page.open(gateway.ws, transport="ws")
    await page.send(SayText("before the big frame", to=PARROT))
    await page.wait_for(lambda e: e["type"] == "utterance" and "before the big frame" in e["text"])
    with contextlib.suppress(ConnectionClosed):
        await page.ws.send(b"\0" * (50 * 1024 * 1024))
    await asyncio.wait_for(page._reader, 10)  # the server closes the connection
    assert page.ws.close_code == 1009
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    again = await Page.open(gateway.ws, transport="none", conversationId=conv, token=token)
    assert again.welcome["rejoined"]
    assert any("before the big frame" in e.get("text", "") for e in again.welcome["history"])
    # Unknown messages and bad invites are answered with errors; the session goes on.
    await again.send(type="dance")
    await again.wait_for(lambda e: e["type"] == "error" and "dance" in e["message"])
    await again.send(Invite("file:///etc/passwd"))
    await again.wait_for(lambda e: e["type"] == "error" and "https" in e["message"])
    # Fields that do not fit the message's definition (gateway/server/messages.py) are named.
    await again.send(type="ptt", down="yes")
    await again.wait_for(lambda e: e["type"] == "error" and "'down' must be true" in e["message"])
    await again.send(type="mode", mode="sometimes")
    await again.wait_for(lambda e: e["type"] == "error" and "'ptt', 'handsfree'" in e["message"])
    await again.send(type="offer", sdp="v=0")  # a text-only connection has no WebRTC
    await again.wait_for(lambda e: e["type"] == "error" and "misplaced message 'offer'" in e["message"])
    await again.send(SayText("still here", to=PARROT))
    await again.wait_for(lambda e: e["type"] == "utterance" and "still here" in e["text"])
    await again.close()


async def test_the_page_chooses_a_wake_word_the_gateway_has(gateway) -> None:
    """A wake word the gateway has is taken from the hello; an unknown one falls back to the
    server's (off here), and asked for later it is refused by name."""
    woken = await Page.open(gateway.ws, transport="none", wake="alexa")
    assert woken.welcome["wake"] == "alexa"
    await woken.close()
    odd = await Page.open(gateway.ws, transport="none", wake="hey_siri")
    assert odd.welcome["wake"] == "off"
    await odd.send(type="wake", wake="hey_siri")
    await odd.wait_for(lambda e: e["type"] == "error" and "unknown wake word 'hey_siri'" in e["message"])
    await odd.send(type="wake", wake="off")  # taken: no error, the conversation goes on
    await odd.send(SayText("still awake", to=PARROT))
    await odd.wait_for(lambda e: e["type"] == "utterance" and "still awake" in e["text"])
    assert sum(e["type"] == "error" for e in odd.events) == 1
    await odd.close()


async def test_foreign_origin_is_refused(gateway) -> None:
    with pytest.raises(InvalidStatus) as info:
        async with connect(gateway.ws, origin="https://evil.example"):
            pass
    assert info.value.response.status_code == 403


async def test_past_capacity_new_sessions_are_refused_clearly(gateway) -> None:
    pages = [await Page.open(gateway.ws, transport="none") for _ in range(3)]
    try:
        async with connect(gateway.ws) as ws:
            with pytest.raises(ConnectionClosed) as info:
                await ws.recv()
        assert info.value.rcvd.code == 1013 and "full" in info.value.rcvd.reason
        # Existing sessions still work.
        await pages[0].send(SayText("still served", to=PARROT))
        await pages[0].wait_for(lambda e: e["type"] == "utterance" and "still served" in e["text"])
    finally:
        for p in pages:
            await p.close()


def test_static_files_and_health(gateway) -> None:
    status, _, _ = gateway.get("/healthz")
    assert status == 200
    assert gateway.get("/../../etc/passwd")[0] == 404
    assert gateway.get("/nope.js")[0] == 404
    status, body, headers = gateway.get("/metrics")
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert "# TYPE ofp_gateway_stage_seconds histogram" in body.decode()


def test_serve_restarts_itself_under_jemalloc(gateway) -> None:
    """scripts/test installs libjemalloc2; ``serve`` from the command line runs on it, in the
    process it was started as (the same pid: the restart is an exec)."""
    maps = Path(f"/proc/{gateway.proc.pid}/maps").read_text()
    assert "libjemalloc" in maps
    body = gateway.get("/metrics")[1].decode()
    assert 'ofp_gateway_memory_info{allocator="jemalloc"} 1.0' in body


async def test_a_page_without_audio_costs_no_speech_synthesis(served_gateway) -> None:
    """Issue 30 item 6: replies to a ``transport: "none"`` page are sent as text only; the
    shared synthesizer's sentence count (``/metrics``) does not move for them. A WebSocket-audio
    page saying the same thing before and after measures what one spoken reply costs (from after
    its greeting), and shows the counter counts. The parrot alone answers: its reply
    is the same every time (the assistant's length is the model's to choose)."""
    # Without the synthesis cache: a reply said again would otherwise find the parrot's
    # "You said:" kept, and cost one sentence fewer than the first time (issue 40).
    gateway = served_gateway("silent", "--agent", "builtin:parrot", "--tts-cache", "0")
    said = "Count the sentences. There are two."

    async def spoken_turn() -> float:
        page = await Page.open(gateway.ws, transport="ws")
        try:
            # The parrot's greeting is spoken first: counted from before it, a typed line that
            # barged into it made the count 2-4 by timing (seen under load), so the count
            # starts once the greeting has been spoken whole.
            greeting = await page.wait_for(
                lambda e: e["type"] == AgentUtterance.TYPE and e["text"].startswith("Hi, I'm")
            )
            spoken = await page.wait_for(
                lambda e: e["type"] == "state" and e["state"] == "speaking",
                since=page.events.index(greeting),
            )
            await page.wait_for(
                lambda e: e["type"] == "state" and e["state"] != "speaking",
                since=page.events.index(spoken),
            )
            before = gateway.metrics()["ofp_gateway_tts_sentences"]
            reply = await page.say(said)
            since = page.events.index(reply)
            speaking = await page.wait_for(
                lambda e: e["type"] == "state" and e["state"] == "speaking", since=since
            )
            await page.wait_for(
                lambda e: e["type"] == "state" and e["state"] != "speaking",
                since=page.events.index(speaking),
            )
        finally:
            await page.close()
        return gateway.metrics()["ofp_gateway_tts_sentences"] - before

    one_reply = await spoken_turn()
    assert one_reply >= 1  # the counter counts the reply spoken
    before = gateway.metrics()["ofp_gateway_tts_sentences"]
    quiet = await Page.open(gateway.ws, transport="none")
    try:
        for _ in range(3):
            await quiet.say(said)
        # Open while a synthesis of its replies, if one had started, would finish (a second
        # sentence takes about 0.1-0.3 s here); the silent page's session must still be alive.
        await asyncio.sleep(2.0)
        assert gateway.metrics()["ofp_gateway_tts_sentences"] == before
        assert await spoken_turn() == one_reply  # and the counter still counts
    finally:
        await quiet.close()
