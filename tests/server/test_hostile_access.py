"""Access against a real `serve` (issue 14, items 2, 3, 7 and 8): the person's voice clips only
to their own page or by a signed, expiring URL; the voice kept only with --keep-audio; hosts the
gateway does not answer for refused (DNS rebinding); no STUN server unless configured; a
per-address session limit."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.testing.page import Page
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from gateway.testing.speech import piper_16k, silence
from tests.server.hostile import LoopbackAgent, get, quiet, raw_http, records, ws_handshake

TTL_S = 4


class StunListener:
    """A STUN server on loopback that answers binding requests and counts them."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.requests = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from aioice import stun

        while not self._stop.is_set():
            try:
                data, addr = self.sock.recvfrom(2048)
            except OSError:
                continue
            try:
                request = stun.parse_message(data)
            except ValueError:
                continue
            self.requests += 1
            response = stun.Message(
                message_method=request.message_method,
                message_class=stun.Class.RESPONSE,
                transaction_id=request.transaction_id,
            )
            response.attributes["XOR-MAPPED-ADDRESS"] = addr
            self.sock.sendto(bytes(response), addr)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture(scope="module")
def stun() -> Iterator[StunListener]:
    listener = StunListener()
    yield listener
    listener.close()


@pytest.fixture(scope="module")
def url_mode(served_gateway: Callable[..., Served], stun: StunListener) -> Served:
    """Clips by capability URL (short-lived), an extra host name, 2 sessions per address, and
    a STUN server on loopback."""
    return served_gateway(
        "url-mode",
        *PARROT_ON_LOOPBACK,
        *("--audio-feature", "url", "--audio-url-ttl", str(TTL_S)),
        *("--allow-host", "gw.example", "--max-sessions-per-address", "2"),
        *("--ice-server", f"stun:127.0.0.1:{stun.port}"),
    )


@pytest.fixture(scope="module")
def off_mode(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("off-mode", *PARROT_ON_LOOPBACK, "--audio-feature", "off", "--keep-audio")


@pytest.fixture(scope="module")
def inline_mode(served_gateway: Callable[..., Served]) -> Served:
    """The defaults: inline audio to agents, the voice not kept, no ICE servers."""
    return served_gateway("inline-mode", *PARROT_ON_LOOPBACK)


async def speak_to(gateway: Served, agent: LoopbackAgent) -> tuple[Page, dict]:
    """Open a page, invite ``agent``, say a sentence; the page and the dialog event it got."""
    page = await Page.open(gateway.ws, transport="ws")
    await page.send(type="invite", url=agent.url)
    await page.wait_for(
        lambda e: (
            e["type"] == "floor" and any(c["serviceUrl"] == agent.url for c in e["conversants"])
        )
    )
    pcm = np.concatenate(
        [silence(300), piper_16k("Is it going to rain this weekend?"), silence(1200)]
    )
    for i in range(0, len(pcm), 3200):
        await page.ws.send(pcm[i : i + 3200].astype("<i2").tobytes())
        await asyncio.sleep(0.2)
    await page.wait_for(lambda e: e["type"] == "transcript" and not e.get("typed"), timeout=60)
    for _ in range(100):
        spoken = [u for u in agent.utterances() if "user:" in u["speakerUri"]]
        if spoken:
            return page, spoken[0]
        await asyncio.sleep(0.1)
    raise AssertionError("the agent got no utterance")


def person_envelopes(gateway: Served, conv: str) -> list[dict]:
    """The recorded envelopes that carry the person's spoken utterance."""
    out = []
    for _, kind, _, body in records(gateway.data, conv):
        if kind != "envelope":
            continue
        for e in json.loads(body)["openFloor"]["events"]:
            de = e.get("parameters", {}).get("dialogEvent")
            if e["eventType"] == "utterance" and de and "words" in de["features"]:
                out.append(de)
    return out


def audio_files(gateway: Served) -> list[Path]:
    return [p for p in (gateway.data / "audio").rglob("*") if p.is_file()]


async def test_clips_only_to_their_page_or_a_signed_expiring_url(url_mode) -> None:
    agent = await LoopbackAgent(quiet).start()
    try:
        page, de = await speak_to(url_mode, agent)
        conv, token = page.welcome["conversationId"], page.welcome["token"]
        url = de["features"]["audio"]["tokens"][0]["valueUrl"]
        split = urlsplit(url)
        query = parse_qs(split.query)
        assert url.startswith(url_mode.url + "/audio/") and query["sig"] and query["exp"]
        path = split.path
        # The capability URL works for the agent, the page's token works, nothing else does.
        status, body, headers = url_mode.get(url[len(url_mode.url) :])
        assert status == 200 and body[:4] == b"RIFF" and headers["Content-Type"] == "audio/wav"
        assert url_mode.get(path)[0] == 403
        assert url_mode.get(f"{path}?token={token}")[0] == 200
        assert url_mode.get(f"{path}?token=guess")[0] == 403
        forged = f"{path}?exp={int(query['exp'][0]) + 3600}&sig={query['sig'][0]}"
        assert url_mode.get(forged)[0] == 403
        other = path.replace(de["id"].replace(":", "%3A"), "de%3Aother")
        assert other != path and url_mode.get(f"{other}?{split.query}")[0] == 403
        # Once expired, the URL grants nothing; the voice was never stored (no --keep-audio).
        await asyncio.sleep(int(query["exp"][0]) - time.time() + 1)
        assert url_mode.get(url[len(url_mode.url) :])[0] == 403
        assert url_mode.get(f"{path}?token={token}")[0] == 404
        assert audio_files(url_mode) == []
        assert not [r for r in records(url_mode.data, conv) if r[1] == "audio"]
        await page.close()
    finally:
        await agent.stop()


async def test_audio_feature_off_has_no_url_and_serves_nothing(off_mode) -> None:
    agent = await LoopbackAgent(quiet).start()
    try:
        page, de = await speak_to(off_mode, agent)
        conv, token = page.welcome["conversationId"], page.welcome["token"]
        assert "audio" not in de["features"] and "/audio/" not in json.dumps(agent.seen)
        # --keep-audio: the clip is in the records, but with the feature off nobody gets it.
        assert len(audio_files(off_mode)) == 1
        assert off_mode.get(f"/audio/{conv}/{de['id']}.wav?token={token}")[0] == 404
        assert off_mode.get(f"/audio/{conv}/{de['id']}.wav")[0] == 404
        await page.close()
    finally:
        await agent.stop()


async def test_the_voice_is_not_kept_by_default(inline_mode) -> None:
    agent = await LoopbackAgent(quiet).start()
    try:
        page, de = await speak_to(inline_mode, agent)
        conv = page.welcome["conversationId"]
        assert de["features"]["audio"]["tokens"][0]["value"]  # the agent got the voice inline
        await asyncio.sleep(0.5)
        kept = person_envelopes(inline_mode, conv)
        assert kept and all("audio" not in d["features"] for d in kept)
        assert all(d["features"]["words"]["tokens"] for d in kept)  # the words are kept
        assert audio_files(inline_mode) == []
        assert (
            inline_mode.get(f"/audio/{conv}/{de['id']}.wav?token={page.welcome['token']}")[0] == 404
        )
        await page.close()
    finally:
        await agent.stop()


def test_the_page_states_whether_the_voice_is_kept(url_mode, off_mode) -> None:
    async def said(gateway: Served) -> dict:
        page = await Page.open(gateway.ws, transport="none")
        await page.close()
        return page.welcome

    assert asyncio.run(said(url_mode))["keepAudio"] is False
    assert asyncio.run(said(off_mode))["keepAudio"] is True


def test_hosts_the_gateway_does_not_answer_for_are_refused(url_mode) -> None:
    own = url_mode.url.removeprefix("http://")
    port = own.split(":")[1]
    status, reply = raw_http(url_mode.url, get("/", "evil.example"))
    assert status == 421 and b"--allow-host" in reply
    # DNS rebinding: a page on evil.example re-pointed here, same-origin as far as it knows.
    rebound = ws_handshake(f"evil.example:{port}", f"Origin: http://evil.example:{port}")
    assert raw_http(url_mode.url, rebound)[0] == 421
    # The scheme counts: an https page is another origin than the plain-http gateway.
    assert raw_http(url_mode.url, ws_handshake(own, f"Origin: https://{own}"))[0] == 403
    assert raw_http(url_mode.url, ws_handshake(own, f"Origin: http://{own}"))[0] == 101
    local = f"localhost:{port}"
    assert raw_http(url_mode.url, ws_handshake(local, f"Origin: http://{local}"))[0] == 101
    # --allow-host adds a name.
    named = f"gw.example:{port}"
    assert raw_http(url_mode.url, get("/", named))[0] == 200
    assert raw_http(url_mode.url, ws_handshake(named, f"Origin: http://{named}"))[0] == 101
    assert raw_http(url_mode.url, get("/", ""))[0] == 421
    assert "Traceback" not in (url_mode.data / "serve.log").read_text()


async def test_one_address_cannot_take_every_session(url_mode) -> None:
    def visitor(address: str):
        return connect(url_mode.ws, additional_headers={"X-Forwarded-For": address})

    async def hello(ws) -> dict:
        await ws.send(json.dumps({"type": "hello", "transport": "none"}))
        return json.loads(await ws.recv())

    async with visitor("203.0.113.7") as a, visitor("203.0.113.7") as b:
        assert (await hello(a))["type"] == "welcome" and (await hello(b))["type"] == "welcome"
        async with visitor("203.0.113.7") as c:
            with pytest.raises(ConnectionClosed) as info:
                await c.recv()
        assert info.value.rcvd.code == 1013
        assert "too many sessions from your address (2)" in info.value.rcvd.reason
        # Another visitor, and this machine's own clients, are still served.
        async with visitor("198.51.100.9") as d:
            assert (await hello(d))["type"] == "welcome"
        page = await Page.open(url_mode.ws, transport="none")
        await page.close()
    # Once one closes, the address may open another.
    async with visitor("203.0.113.7") as e:
        assert (await hello(e))["type"] == "welcome"


async def webrtc_connects(gateway: Served) -> None:
    """A WebRTC session over loopback (an aiortc client with no ICE servers) connects."""
    from aiortc import RTCConfiguration, RTCPeerConnection, RTCSessionDescription
    from aiortc.mediastreams import AudioStreamTrack

    page = await Page.open(gateway.ws, transport="webrtc")
    pc = RTCPeerConnection(RTCConfiguration(iceServers=[]))
    try:
        pc.addTrack(AudioStreamTrack())
        await pc.setLocalDescription(await pc.createOffer())
        await page.send(type="offer", sdp=pc.localDescription.sdp)
        answer = await page.wait_for(lambda e: e["type"] == "answer")
        await pc.setRemoteDescription(RTCSessionDescription(sdp=answer["sdp"], type="answer"))
        for _ in range(100):
            if pc.connectionState == "connected":
                break
            await asyncio.sleep(0.1)
        assert pc.connectionState == "connected"
    finally:
        await pc.close()
        await page.close()


async def test_webrtc_uses_the_ice_servers_given(url_mode, stun) -> None:
    before = stun.requests
    await webrtc_connects(url_mode)
    # The gateway asked the STUN server it was given (--ice-server).
    assert stun.requests > before


async def test_webrtc_works_with_no_ice_servers_by_default(inline_mode) -> None:
    await webrtc_connects(inline_mode)
    log = (inline_mode.data / "serve.log").read_text()
    assert "webrtc connection connected" in log


def test_default_rtc_configuration_has_no_ice_servers() -> None:
    from gateway.server.webrtc import rtc_configuration

    assert rtc_configuration().iceServers == []
    configured = rtc_configuration(("stun:127.0.0.1:3478", "turn:ann:pw@127.0.0.1:3478"))
    assert [s.urls for s in configured.iceServers] == [
        "stun:127.0.0.1:3478",
        "turn:127.0.0.1:3478",
    ]
    assert configured.iceServers[1].username == "ann"
    assert configured.iceServers[1].credential == "pw"
