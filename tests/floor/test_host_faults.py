"""Agents that fail: each failure becomes Open Floor behaviour, and the conversation goes on."""

from __future__ import annotations

import asyncio
import dataclasses
import json

from aiohttp import web

from gateway.ofp import Event, EventType, text_event


def invite(url: str) -> Event:
    return Event(event_type=EventType.INVITE, to={"serviceUrl": url})


def say(h, text: str, to: str | None = None) -> list[Event]:
    """The person's utterance, addressed (``to``: a service URL) as the person's proxy does."""
    return [
        Event(
            event_type=EventType.UTTERANCE,
            to={"serviceUrl": to} if to else None,
            parameters={"dialog_event": text_event(h.conv.user.speaker_uri, text)},
        )
    ]


def conversants(h) -> list[str]:
    return [i.service_url for i in h.conv.floor.conversants]


async def test_timeout_uninvites_with_timed_out_and_tells_the_person(site, harness) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(5)
        return web.json_response({})

    url = site.route("slow", slow)
    h = harness(timeout=0.5)
    await h.conv.say([invite(url), invite("builtin:parrot")])
    assert await h.conv.wait_idle(10)
    # One miss: the person is told it is slow; it stays (Limits.max_timeouts).
    assert url in conversants(h)
    assert [n.reason for n in h.notices] == ["@slow"] and "slow to answer" in h.notices[0].text
    # A second miss in a row: uninvited with @timedOut.
    await h.conv.say(say(h, "are you there?", to=url))
    assert await h.conv.wait_idle(10)
    assert url not in conversants(h)
    assert [n.reason for n in h.notices][-1] == "@timedOut"
    assert "did not answer in time" in h.notices[-1].text
    # The others hear the uninvite with the @timedOut token; the parrot carries on.
    uninvites = [e for env in h.heard for e in env.events if e.event_type is EventType.UNINVITE]
    assert uninvites and "@timedOut" in uninvites[0].reason_tokens
    await h.conv.say(say(h, "still there?", to="builtin:parrot"))
    assert await h.conv.wait_idle(10)
    assert h.texts()[-1] == "You said: still there?"


async def test_http_500_is_an_error_and_the_conversation_goes_on(site, harness) -> None:
    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=500, text="Traceback: boom")

    url = site.route("broken", broken)
    h = harness()
    await h.conv.say([invite(url), invite("builtin:parrot")])
    assert await h.conv.wait_idle(10)
    assert url in conversants(h)  # one failure is not enough to remove it
    assert h.notices[0].reason == "@error" and "500" in h.notices[0].text
    await h.conv.say(say(h, "hello", to="builtin:parrot"))
    assert await h.conv.wait_idle(10)
    assert h.texts()[-1] == "You said: hello"
    # Third failure in a row: uninvited with @error.
    await h.conv.say(say(h, "again"))
    assert await h.conv.wait_idle(10)
    assert url not in conversants(h)
    assert [n.reason for n in h.notices] == ["@error"] * 3


async def test_non_json_and_oversized_replies_are_errors(site, harness) -> None:
    async def html(request: web.Request) -> web.Response:
        return web.Response(text="<html>not an agent</html>", content_type="text/html")

    async def huge(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        for _ in range(64):
            await resp.write(b" " * 65536)
        return resp

    h = harness(max_reply=256 * 1024)
    await h.conv.say([invite(site.route("html", html)), invite(site.route("huge", huge))])
    assert await h.conv.wait_idle(10)
    texts = sorted(n.text for n in h.notices)
    assert len(texts) == 2 and all(n.reason == "@error" for n in h.notices)
    assert any(("not" in t and "envelope" in t.lower()) or "JSON" in t for t in texts)
    assert any("262144" in t or "256" in t or "too large" in t.lower() for t in texts)


async def test_refused_address_is_uninvited_at_once_with_advice(site, harness) -> None:
    async def fine(request: web.Request) -> web.Response:
        return web.json_response({})

    url = site.route("fine", fine)
    h = harness(allow_loopback=False)
    await h.conv.say([invite(url)])
    assert await h.conv.wait_idle(10)
    assert url not in conversants(h)
    assert "fine" not in site.received  # never contacted
    [n] = h.notices
    assert n.reason == "@error" and "--allow-address" in n.text


async def test_agent_speaking_ovon_0_9_is_answered_in_0_9(site, harness) -> None:
    async def legacy(request: web.Request) -> web.Response:
        return web.json_response(
            {
                "ovon": {
                    "schema": {"version": "0.9.0"},
                    "conversation": {"id": "conv-test"},
                    "sender": {"from": str(request.url)},
                    "events": [
                        {
                            "eventType": "utterance",
                            "parameters": {
                                "dialogEvent": {
                                    "speakerId": "legacy-bot",
                                    "span": {"startTime": "2024-01-01T00:00:00Z"},
                                    "features": {
                                        "text": {
                                            "mimeType": "text/plain",
                                            "tokens": [{"value": "old but gold"}],
                                        }
                                    },
                                }
                            },
                        }
                    ],
                }
            }
        )

    url = site.route("legacy", legacy)
    h = harness()
    await h.conv.say([invite(url)])
    assert await h.conv.wait_idle(10)
    assert "old but gold" in h.texts()
    await h.conv.say(say(h, "do you hear me"))
    assert await h.conv.wait_idle(10)
    first, second = site.received["legacy"][:2]
    assert "openFloor" in first
    assert "ovon" in second and second["ovon"]["events"][0]["eventType"] == "utterance"
    assert json.dumps(second).count("do you hear me") == 1


async def test_agents_answering_each_other_are_cut_off(site, harness) -> None:
    n = {"calls": 0}

    async def chatty(request: web.Request) -> web.Response:
        n["calls"] += 1
        body = await request.json()
        me = str(request.url)
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": body["openFloor"]["conversation"]["id"]},
                    "sender": {"speakerUri": f"tag:{request.path}", "serviceUrl": me},
                    "events": [
                        {
                            "eventType": "utterance",
                            "parameters": {
                                "dialogEvent": {
                                    "speakerUri": f"tag:{request.path}",
                                    "span": {"startOffset": "PT0S"},
                                    "features": {
                                        "text": {
                                            "mimeType": "text/plain",
                                            "tokens": [{"value": "and another thing"}],
                                        }
                                    },
                                }
                            },
                        }
                    ],
                }
            }
        )

    h = harness()
    await h.conv.say([invite(site.route("a", chatty)), invite(site.route("b", chatty))])
    assert await h.conv.wait_idle(20)
    # Each greeting starts a chain; each chain is cut after Limits.max_agent_exchanges
    # agent-to-agent exchanges (it was 64 agent envelopes before the person heard of it).
    limit = h.conv.limits.max_agent_exchanges
    heard = [t for t in h.texts() if t == "and another thing"]
    assert 2 <= len(heard) <= 2 * (1 + limit)
    assert n["calls"] <= 4 * (1 + limit)  # a handful of calls, not hundreds
    told = [x for x in h.notices if "answering each other" in x.text]
    assert len(told) == 1 and f"after {limit} exchanges" in told[0].text


async def test_a_slow_answer_brings_one_moment_from_the_floor(site, harness) -> None:
    async def thinker(request: web.Request) -> web.Response:
        body = await request.json()
        of = body["openFloor"]
        events = []
        if any(e["eventType"] == "utterance" for e in of["events"]):
            await asyncio.sleep(1.5)  # well past the 0.2 s below, well within the timeout
            events = [
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": {
                            "speakerUri": "tag:thinker",
                            "span": {"startOffset": "PT0S"},
                            "features": {
                                "text": {"mimeType": "text/plain", "tokens": [{"value": "42."}]}
                            },
                        }
                    },
                }
            ]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:thinker"},
                    "events": events,
                }
            }
        )

    from dataclasses import replace

    url = site.route("thinker", thinker)
    h = harness()
    h.conv.limits = replace(h.conv.limits, slow_notice_s=0.2)
    await h.conv.say([invite(url)])
    assert await h.conv.wait_idle(10)
    assert h.notices == []
    await h.conv.say(say(h, "what is the answer?", to=url))
    assert await h.conv.wait_idle(10)
    # One notice, naming the agent the person waits on.
    assert [n.reason for n in h.notices] == ["@wait"]
    assert h.notices[0].text.startswith("One moment")
    host = url.split("/")[2]  # it has no manifest: it is named by its address
    assert f"{host} is taking longer than usual" in h.notices[0].text, h.notices[0].text
    assert h.notices[0].agent == url
    assert h.texts()[-1] == "42."


async def test_invites_past_the_most_agents_are_refused_in_words(site, harness) -> None:
    """The floor stays bounded (docs/bounds.md): with Limits.max_agents agents here, another
    invite (from the person or from an agent) is refused with a notice, and talk goes on."""
    h = harness()
    h.conv.limits = dataclasses.replace(h.conv.limits, max_agents=2)
    urls = [site.route(f"quiet{n}", quiet_agent) for n in range(3)]
    await h.conv.say([invite("builtin:parrot"), invite(urls[0])])
    assert await h.conv.wait_idle(10)
    await h.conv.say([invite(urls[1]), invite(urls[2])])
    assert await h.conv.wait_idle(10)
    assert urls[1] not in conversants(h) and urls[2] not in conversants(h)
    refused = [n.text for n in h.notices if "the most it takes" in n.text]
    assert len(refused) == 2 and "already has 2 agents" in refused[0]
    await h.conv.say(say(h, "still there?"))
    assert await h.conv.wait_idle(10)
    assert h.texts()[-1] == "You said: still there?"


async def quiet_agent(request: web.Request) -> web.Response:
    body = await request.json()
    conv = body["openFloor"]["conversation"]
    return web.json_response(
        {
            "openFloor": {
                "schema": {"version": "1.1.0"},
                "conversation": {"id": conv["id"]},
                "sender": {"speakerUri": f"tag:{request.path.strip('/')}"},
                "events": [],
            }
        }
    )


async def test_a_slow_agent_is_said_to_be_slow_and_still_waited_for(site, harness) -> None:
    """A hung agent no longer leaves the person in silence for its whole timeout."""

    async def slow(request: web.Request) -> web.Response:
        body = await request.json()
        events = body["openFloor"]["events"]
        if any(e["eventType"] == "utterance" for e in events):
            await asyncio.sleep(1.0)
        return await quiet_agent(request)

    h = harness()
    h.conv.limits = dataclasses.replace(h.conv.limits, slow_notice_s=0.2)
    url = site.route("slowpoke", slow)
    await h.conv.say([invite(url), invite("builtin:parrot")])
    assert await h.conv.wait_idle(10)
    assert not [n for n in h.notices if n.reason == "@wait"]  # an invite is not a question
    await h.conv.say(say(h, "anyone there?"))  # the parrot answers at once; the other is slow
    assert await h.conv.wait_idle(10)
    slow_notices = [n for n in h.notices if n.reason == "@wait"]
    assert len(slow_notices) == 1 and "taking longer than usual" in slow_notices[0].text
    assert not [n for n in h.notices if n.reason == "@slow"]  # one notice, not two
    assert url in conversants(h)  # waited for, not given up on
    assert h.texts()[-1] == "You said: anyone there?"
