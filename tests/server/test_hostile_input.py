"""Hostile input against a real `serve` (issue 14, items 1, 4 and 9): lone surrogates from an
agent and from the person, deeply nested JSON, odd tokens, paths and headers, a huge invite URL.
After each attack the page is still served, nothing already recorded is lost, and the log has a
one-line reason, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.testing.page import PARROT, Page
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served
from tests.server.hostile import (
    LoopbackAgent,
    assert_nothing_lost,
    envelope,
    get,
    quiet,
    raw_http,
    records,
    utterance,
    ws_handshake,
)

BAD_TEXT = "bad \ud800 reply"


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    return served_gateway("hostile", *PARROT_ON_LOOPBACK)


def no_traceback(gateway: Served) -> None:
    log = (gateway.data / "serve.log").read_text()
    assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:3000]


def text(record: tuple) -> str:
    """A record's body as text (however the store escapes it)."""
    return json.dumps(json.loads(record[3]), ensure_ascii=False)


def surrogate_reply(body: dict) -> str:
    """An agent that answers every utterance with a lone surrogate in its text (valid JSON)."""
    conv = body["openFloor"]["conversation"]
    events = body["openFloor"]["events"]
    if not any(e["eventType"] == "utterance" for e in events):
        return quiet(body)
    # json.dumps escapes the surrogate as \ud800: what a careless agent's JSON library sends.
    return json.dumps(envelope(conv, "tag:surrogate", [utterance("tag:surrogate", BAD_TEXT)]))


async def invite(page: Page, *agents: LoopbackAgent) -> None:
    for agent in agents:
        await page.send(type="invite", url=agent.url)
    await page.wait_for(
        lambda e: (
            e["type"] == "floor"
            and all(any(c["serviceUrl"] == a.url for c in e["conversants"]) for a in agents)
        )
    )


async def still_served(page: Page, text: str) -> None:
    """The page gets answers: a pong and the parrot's reply to ``text``."""
    since = len(page.events)
    await page.send(type="ping")
    await page.wait_for(lambda e: e["type"] == "pong", since=since)
    await page.send(type="text", text=text, to=PARROT)
    await page.wait_for(
        lambda e: e["type"] == "utterance" and e["text"] == f"You said: {text}", since=since
    )


async def test_lone_surrogate_from_an_agent_costs_nothing(gateway) -> None:
    bad = await LoopbackAgent(surrogate_reply).start()
    good = await LoopbackAgent(quiet).start()
    page = await Page.open(gateway.ws, transport="none")
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    try:
        await invite(page, good, bad)
        await still_served(page, "before the attack")
        before = records(gateway.data, conv)
        for i in range(4):  # more than max_failures: a wrongly charged agent would be gone
            await page.send(type="text", text=f"attack {i}")
            await page.wait_for(
                lambda e: e["type"] == "utterance" and e["speakerUri"] == "tag:surrogate",
                since=len(page.events) - 1,
            )
            await still_served(page, f"after attack {i}")
        assert page.ws.close_code is None
        shown = [e for e in page.events if e.get("speakerUri") == "tag:surrogate"]
        # Decided once, at the parse boundary: the surrogate is U+FFFD for the page and for the
        # agents the reply is forwarded to.
        assert len(shown) >= 4 and all(e["text"] == "bad \ufffd reply" for e in shown)
        forwarded = [u for u in good.utterances() if u["speakerUri"] == "tag:surrogate"]
        assert len(forwarded) >= 4
        assert all(
            u["features"]["text"]["tokens"][0]["value"] == "bad \ufffd reply" for u in forwarded
        )
        # The well-behaved agent is neither charged nor uninvited.
        assert not [e for e in page.events if e["type"] == "notice" and good.url in e["agent"]]
        floor = [e for e in page.events if e["type"] == "floor"][-1]
        assert {good.url, bad.url} <= {c["serviceUrl"] for c in floor["conversants"]}
        after = records(gateway.data, conv)
        assert_nothing_lost(before, after)
        assert sum(r[1] == "envelope" and "bad \ufffd reply" in text(r) for r in after) >= 4
        await page.close()
        # The conversation rejoins, with the bad reply in its history.
        again = await Page.open(gateway.ws, transport="none", conversationId=conv, token=token)
        assert again.welcome["rejoined"]
        assert any(e.get("speakerUri") == "tag:surrogate" for e in again.welcome["history"])
        await still_served(again, "after the rejoin")
        await again.close()
        assert_nothing_lost(after, records(gateway.data, conv))
    finally:
        await bad.stop()
        await good.stop()
    no_traceback(gateway)


async def test_lone_surrogate_typed_by_the_person_keeps_the_session(gateway) -> None:
    good = await LoopbackAgent(quiet).start()
    page = await Page.open(gateway.ws, transport="none")
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    try:
        await invite(page, good)
        await still_served(page, "before typing")
        before = records(gateway.data, conv)
        await page.ws.send('{"type": "text", "text": "typed \\ud800 here"}')
        reply = await page.wait_for(lambda e: e["type"] == "utterance" and "typed" in e["text"])
        assert reply["text"] == "You said: typed \ufffd here"
        await still_served(page, "after typing")
        assert any(
            u["features"]["text"]["tokens"][0]["value"] == "typed \ufffd here"
            for u in good.utterances()
        )
        assert not [e for e in page.events if e["type"] == "notice"]
        after = records(gateway.data, conv)
        assert_nothing_lost(before, after)
        assert any("typed \ufffd here" in text(r) for r in after)
        await page.close()
        again = await Page.open(gateway.ws, transport="none", conversationId=conv, token=token)
        assert again.welcome["rejoined"]
        await again.close()
    finally:
        await good.stop()
    no_traceback(gateway)


async def test_deep_json_and_odd_tokens_on_the_websocket_are_refused(gateway) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    # As the hello: closed with 1008, not 1011.
    async with connect(gateway.ws, max_size=2**20) as ws:
        await ws.send(deep)
        with pytest.raises(ConnectionClosed) as info:
            await ws.recv()
        assert info.value.rcvd.code == 1008
    page = await Page.open(gateway.ws, transport="none")
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    await still_served(page, "before the deep json")
    before = records(gateway.data, conv)
    # After the hello: an error message; the session goes on.
    await page.ws.send(deep)
    await page.ws.send('{"type": "text", "x": ' + "[" * 990 + "]" * 990 + "}")
    await page.wait_for(lambda e: e["type"] == "error" and "JSON" in e["message"])
    await still_served(page, "after the deep json")
    await page.close()
    # A non-ASCII rejoin token: refused (a new conversation), not a crash.
    other = await Page.open(gateway.ws, transport="none", conversationId=conv, token="jeton-é✓")
    assert other.welcome["type"] == "welcome" and not other.welcome["rejoined"]
    assert other.welcome["conversationId"] != conv
    await other.close()
    again = await Page.open(gateway.ws, transport="none", conversationId=conv, token=token)
    assert again.welcome["rejoined"]
    await again.close()
    assert_nothing_lost(before, records(gateway.data, conv))
    no_traceback(gateway)


async def test_bad_http_requests_get_4xx_and_one_log_line(gateway) -> None:
    page = await Page.open(gateway.ws, transport="none")
    conv = page.welcome["conversationId"]
    await still_served(page, "keep this")
    before = records(gateway.data, conv)
    host = gateway.url.removeprefix("http://")
    cases = {
        "NUL in the path": (get("/index.html%00.js", host), 400),
        "NUL in an export id": (get("/export/conv%00x?token=x", host), 400),
        "a 5000-character path": (get("/" + "a" * 5000, host), 414),
        "a 300-character file name": (get("/" + "a" * 300 + ".js", host), 404),
        "a non-ASCII export token": (get(f"/export/{conv}?token=%C3%A9%E2%9C%93", host), 403),
        # Not even parsed: the websockets library closes a connection whose request line is
        # not ASCII before any of the gateway's code runs (no reply, no 500, no traceback).
        "a raw non-ASCII export token": (get(f"/export/{conv}?token=é✓", host), 0),
        "a non-ASCII clip token": (get(f"/audio/{conv}/de:x.wav?token=%C3%A9", host), 403),
        "two Host headers": (get("/", host, f"Host: {host}"), 400),
        "two Origin headers": (
            ws_handshake(host, f"Origin: http://{host}", f"Origin: http://{host}"),
            400,
        ),
        "an invalid percent escape": (get("/%ff%fe", host), 404),
    }
    for name, (request, expected) in cases.items():
        status, reply = raw_http(gateway.url, request)
        if expected is None:
            assert 400 <= status < 500, (name, status, reply[:300])
        else:
            assert status == expected, (name, status, reply[:300])
    await still_served(page, "after the bad requests")
    await page.close()
    assert_nothing_lost(before, records(gateway.data, conv))
    log = (gateway.data / "serve.log").read_text()
    assert "the Origin header appears more than once" in log
    assert "the path holds a NUL" in log
    no_traceback(gateway)


async def test_a_refused_invite_does_not_echo_a_huge_url(gateway) -> None:
    page = await Page.open(gateway.ws, transport="none")
    try:
        huge = "https://10.0.0.1/" + "a" * 200_000
        await page.send(type="invite", url=huge)
        error = await page.wait_for(lambda e: e["type"] == "error")
        assert len(error["message"]) < 1000 and "200017 characters" in error["message"]
        refused = "https://169.254.169.254/" + "b" * 1000
        since = len(page.events)
        await page.send(type="invite", url=refused)
        error = await page.wait_for(lambda e: e["type"] == "error", since=since)
        assert len(error["message"]) < 1000 and "169.254.169.254" in error["message"]
        await still_served(page, "after the refused invites")
    finally:
        await page.close()
    no_traceback(gateway)


HUGE_AGENT_URL = "https://agents.example/" + "c" * 200_000


def huge_invite_reply(body: dict) -> str:
    """An agent that answers every utterance by inviting an agent at a 200 000-character URL."""
    conv = body["openFloor"]["conversation"]
    events = body["openFloor"]["events"]
    if not any(e["eventType"] == "utterance" for e in events):
        return quiet(body)
    invite_event = {"eventType": "invite", "to": {"serviceUrl": HUGE_AGENT_URL}}
    return json.dumps(
        envelope(conv, "tag:inviter", [invite_event, utterance("tag:inviter", "I asked a friend")])
    )


async def test_an_agent_inviting_a_huge_url_is_refused_in_words(gateway) -> None:
    """Issue 30 item 4: the invite of a 200 000-character URL (here from an agent, the path the
    page cannot bound) is refused: the person is told in one short notice, nothing the page or the
    other agents get echoes the URL, the rest of the reply is delivered and talk goes on."""
    inviter = await LoopbackAgent(huge_invite_reply).start()
    page = await Page.open(gateway.ws, transport="none")
    try:
        await invite(page, inviter)
        since = len(page.events)
        await page.send(type="text", text="please bring a friend")
        notice = await page.wait_for(
            lambda e: e["type"] == "notice" and "not invited" in e["text"], since=since
        )
        assert "200023 characters" in notice["text"] and len(notice["text"]) < 1000
        await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == "I asked a friend", since=since
        )
        await still_served(page, "after the huge agent invite")
        assert all(len(json.dumps(e)) < 20_000 for e in page.events), "the URL was echoed"
    finally:
        await page.close()
        await inviter.stop()
    no_traceback(gateway)
    assert "c" * 5000 not in (gateway.data / "serve.log").read_text()
