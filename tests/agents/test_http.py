"""The HTTP transport against real servers on 127.0.0.1: every way an agent can fail."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web

from gateway.agents import (
    AddressRefused,
    AgentBadReply,
    AgentHTTPError,
    AgentTimeout,
    AgentUnreachable,
    HttpAgent,
    HttpClient,
    HttpSettings,
    ReplyTooLarge,
    RequestTooLarge,
)
from gateway.ofp import Identification, Manifest, Sender, text_event
from tests.agents.helpers import LOOPBACK, USER, serving, texts, utterance
from tests.ofp_schemas import assert_valid_envelope, assert_valid_ovon_envelope


def _reply_for(request_body: dict, text: str) -> dict:
    """A 1.1.0 reply from a test agent to the envelope it was sent."""
    conv = request_body["openFloor"]["conversation"]["id"]
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": conv},
            "sender": {"speakerUri": "tag:test.agent,2025:1"},
            "events": [
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": text_event("tag:test.agent,2025:1", text).to_wire()
                    },
                }
            ],
        }
    }


def _app(handler) -> web.Application:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    return app


async def test_posts_the_envelope_and_parses_the_reply(loopback_client: HttpClient) -> None:
    seen: list[tuple[str, dict]] = []

    async def agent(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.content_type, body))
        return web.json_response(_reply_for(body, "hello back"))

    async with serving(_app(agent)) as base:
        sent = utterance("hello")
        reply = await HttpAgent(base + "/bot", loopback_client).handle(sent)
    assert reply is not None and texts(reply) == ["hello back"]
    assert reply.conversation.id == "conv-1"
    content_type, body = seen[0]
    assert content_type == "application/json"
    assert body == sent.to_wire()
    assert_valid_envelope(body)


async def test_reply_missing_sender_and_conversation_gets_them_from_the_transport(
    loopback_client: HttpClient,
) -> None:
    async def agent(request: web.Request) -> web.Response:
        return web.json_response({"openFloor": {"schema": {"version": "1.1"}, "events": []}})

    async with serving(_app(agent)) as base:
        reply = await HttpAgent(base + "/bot", loopback_client).handle(utterance("hi"))
    assert reply is not None and reply.events == []
    assert reply.sender == Sender(speaker_uri=base + "/bot", service_url=base + "/bot")
    assert reply.conversation.id == "conv-1"


@pytest.mark.parametrize("status", [204, 200])
async def test_no_reply_is_none(loopback_client: HttpClient, status: int) -> None:
    async def agent(request: web.Request) -> web.Response:
        return web.Response(status=status, body=b"" if status == 204 else b"  \n")

    async with serving(_app(agent)) as base:
        assert await HttpAgent(base + "/bot", loopback_client).handle(utterance("hi")) is None


async def test_slow_agent_times_out(loopback_client: HttpClient) -> None:
    """The bound ends the wait, whatever the machine's speed: the agent never answers, so only
    the client's 1 s limit can end the request; it raises AgentTimeout naming that limit (not
    the 0.5 s connect limit) and hangs up (the agent's handler is cancelled)."""
    hung_up = asyncio.Event()

    async def agent(request: web.Request) -> web.Response:
        try:
            await asyncio.Event().wait()  # never answers
        except asyncio.CancelledError:
            hung_up.set()  # the client closed the connection (handler_cancellation)
            raise
        return web.json_response({})

    async with serving(_app(agent)) as base:
        started = time.monotonic()
        with pytest.raises(AgentTimeout) as caught:
            # The guard only turns a missing bound into a failure instead of a hang.
            await asyncio.wait_for(
                HttpAgent(base + "/slow", loopback_client).handle(utterance("hi")), 60
            )
        elapsed = time.monotonic() - started
        await asyncio.wait_for(hung_up.wait(), 30)  # an event, not a duration
    assert caught.value.reason_token == "@timedOut"
    assert caught.value.agent_url == base + "/slow"
    assert caught.value.seconds == 1.0  # the fixture's request limit
    assert elapsed >= 0.9  # not given up before the limit (a lower bound: no machine is early)


async def test_http_500_is_an_http_error(loopback_client: HttpClient) -> None:
    async def agent(request: web.Request) -> web.Response:
        return web.Response(status=500, text="Traceback: KeyError 'events'\n" + "x" * 10_000)

    async with serving(_app(agent)) as base:
        with pytest.raises(AgentHTTPError) as caught:
            await HttpAgent(base + "/bot", loopback_client).handle(utterance("hi"))
    assert caught.value.status == 500
    assert caught.value.reason_token == "@error"
    assert "KeyError 'events'" in str(caught.value)
    assert len(str(caught.value)) < 1000  # the detail is a snippet, not the whole body


async def test_redirects_are_not_followed(loopback_client: HttpClient) -> None:
    followed: list[str] = []

    async def agent(request: web.Request) -> web.Response:
        if request.path == "/target":
            followed.append(request.path)
            return web.json_response({})
        raise web.HTTPTemporaryRedirect("/target")

    async with serving(_app(agent)) as base:
        with pytest.raises(AgentHTTPError, match="redirects are not followed") as caught:
            await loopback_client.post_json(base + "/moved", "{}")
    assert caught.value.status == 307
    assert followed == []


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (b"<html>Welcome to nginx</html>", "$"),
        (b'{"hello": "world"}', "$"),
        (
            b'{"openFloor": {"schema": {"version": "1.1.0"}, "events": [{"eventType": "utterance"}]}}',
            "$.openFloor.events[0]",
        ),
    ],
)
async def test_a_reply_that_is_not_an_envelope_is_a_bad_reply(
    loopback_client: HttpClient, body: bytes, path: str
) -> None:
    async def agent(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type="application/json")

    async with serving(_app(agent)) as base:
        with pytest.raises(AgentBadReply) as caught:
            await HttpAgent(base + "/bot", loopback_client).handle(utterance("hi"))
    assert any(p.path.startswith(path) for p in caught.value.problems)
    assert "not an envelope" in str(caught.value)


async def test_an_endless_reply_is_cut_off_without_reading_it_all(
    loopback_client: HttpClient,
) -> None:
    written = 0
    total = 200 * 1024 * 1024

    async def agent(request: web.Request) -> web.StreamResponse:
        nonlocal written
        response = web.StreamResponse()
        await response.prepare(request)
        chunk = b"x" * 65536
        try:
            while written < total:
                await response.write(chunk)
                written += len(chunk)
        except (ConnectionError, asyncio.CancelledError):
            pass
        return response

    async with serving(_app(agent)) as base:
        with pytest.raises(ReplyTooLarge) as caught:
            await HttpAgent(base + "/big", loopback_client).handle(utterance("hi"))
        await asyncio.sleep(0.1)
    assert caught.value.limit == 64 * 1024
    assert written < total // 10  # the client hung up long before the end


async def test_a_declared_oversized_reply_is_refused_before_its_body(
    loopback_client: HttpClient,
) -> None:
    async def agent(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Length": str(50 * 1024 * 1024)})
        await response.prepare(request)
        await response.write(b"{")
        await asyncio.Event().wait()  # never sends the rest: reading it would time out
        return response

    async with serving(_app(agent)) as base:
        # ReplyTooLarge, not AgentTimeout: refused on its Content-Length, before its body (the
        # body never comes, so reading any of it could only end in the 1 s timeout).
        with pytest.raises(ReplyTooLarge) as caught:
            await asyncio.wait_for(
                HttpAgent(base + "/big", loopback_client).handle(utterance("hi")), 60
            )
    assert caught.value.limit == 64 * 1024


async def test_refused_addresses_are_never_contacted() -> None:
    hits = 0

    async def agent(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        return web.json_response({})

    async with serving(_app(agent)) as base, HttpClient() as default_client:
        with pytest.raises(AddressRefused, match="--allow-address"):
            await HttpAgent(base + "/bot", default_client).handle(utterance("hi"))
    assert hits == 0


async def test_a_closed_port_is_unreachable(loopback_client: HttpClient) -> None:
    async with serving(web.Application()) as base:
        pass  # the port is free again once the server is gone
    with pytest.raises(AgentUnreachable) as caught:
        await loopback_client.post_json(base + "/bot", "{}")
    assert caught.value.reason_token == "@error"


async def test_an_oversized_request_is_not_sent() -> None:
    hits = 0

    async def agent(request: web.Request) -> web.Response:
        nonlocal hits
        hits += 1
        return web.json_response({})

    settings = HttpSettings(max_request_bytes=1000)
    async with serving(_app(agent)) as base, HttpClient(LOOPBACK, settings) as client:
        with pytest.raises(RequestTooLarge) as caught:
            await HttpAgent(base + "/bot", client).handle(utterance("y" * 2000))
    assert caught.value.size > 2000 and caught.value.limit == 1000
    assert hits == 0


async def test_concurrency_per_host_is_bounded() -> None:
    active = peak = 0

    async def agent(request: web.Request) -> web.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.05)
        active -= 1
        return web.json_response({})

    async with serving(_app(agent)) as base, HttpClient(LOOPBACK, HttpSettings(per_host=2)) as c:
        await asyncio.gather(*(c.post_json(f"{base}/{i}", "{}") for i in range(6)))
    assert peak == 2


async def test_an_ovon_agent_is_answered_in_ovon(loopback_client: HttpClient) -> None:
    received: list[dict] = []

    async def ovon_agent(request: web.Request) -> web.Response:
        body = await request.json()
        received.append(body)
        conv = (body.get("ovon") or body.get("openFloor"))["conversation"]["id"]
        return web.json_response(
            {
                "ovon": {
                    "schema": {"version": "0.9.0"},
                    "conversation": {"id": conv},
                    "sender": {"from": "https://legacy.example/bot"},
                    "events": [
                        {
                            "eventType": "utterance",
                            "parameters": {
                                "dialogEvent": {
                                    "speakerId": "legacy-bot",
                                    "span": {"startTime": "2025-01-01T00:00:00Z"},
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

    async with serving(_app(ovon_agent)) as base:
        agent = HttpAgent(base + "/legacy", loopback_client)
        first = await agent.handle(utterance("hi"))
        assert first is not None and first.dialect == "ovon"
        assert texts(first) == ["old but gold"]
        assert first.events[0].dialog_event.speaker_uri == "legacy-bot"
        assert agent.dialect == "ovon"
        second = await agent.handle(utterance("again"))
    assert second is not None
    assert "openFloor" in received[0]
    assert set(received[1]) == {"ovon"}
    assert_valid_ovon_envelope(received[1])
    again = received[1]["ovon"]["events"][0]["parameters"]["dialogEvent"]
    assert again["features"]["text"]["tokens"][0]["value"] == "again"


async def test_fetch_manifest_adopts_the_matching_manifest(loopback_client: HttpClient) -> None:
    async def agent(request: web.Request) -> web.Response:
        body = await request.json()
        event = body["openFloor"]["events"][0]
        assert event["eventType"] == "getManifests"
        url = event["to"]["serviceUrl"]
        other = dict(MANIFEST, identification={**MANIFEST["identification"], "serviceUrl": "x"})
        mine = dict(MANIFEST, identification={**MANIFEST["identification"], "serviceUrl": url})
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": body["openFloor"]["conversation"],
                    "sender": {"speakerUri": "tag:weather.example,2025:1"},
                    "events": [
                        {
                            "eventType": "publishManifests",
                            "parameters": {"servicingManifests": [other, mine]},
                        }
                    ],
                }
            }
        )

    async with serving(_app(agent)) as base:
        agent_ = HttpAgent(base + "/weather", loopback_client)
        provisional = agent_.manifest
        assert provisional.identification.conversational_name == "127.0.0.1"
        assert provisional.identification.speaker_uri == base + "/weather"
        manifest = await agent_.fetch_manifest("conv-1", Sender(speaker_uri=USER))
    assert manifest.identification.conversational_name == "Weather"
    assert manifest.identification.service_url == base + "/weather"
    assert agent_.manifest is manifest


async def test_fetch_manifest_keeps_the_provisional_one_when_none_matches(
    loopback_client: HttpClient,
) -> None:
    async def agent(request: web.Request) -> web.Response:
        conv = (await request.json())["openFloor"]["conversation"]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": conv,
                    "sender": {"speakerUri": "tag:weather.example,2025:1"},
                    "events": [
                        {
                            "eventType": "publishManifests",
                            "parameters": {"servicingManifests": [MANIFEST]},
                        }
                    ],
                }
            }
        )

    async with serving(_app(agent)) as base:
        agent_ = HttpAgent(base + "/weather", loopback_client)
        manifest = await agent_.fetch_manifest("conv-1", Sender(speaker_uri=USER))
    assert manifest.identification.service_url == base + "/weather"
    assert manifest.identification.conversational_name == "127.0.0.1"


async def test_fetch_gets_bytes_and_type_under_the_same_limits(
    loopback_client: HttpClient,
) -> None:
    async def files(request: web.Request) -> web.Response:
        size = int(request.match_info["tail"])
        return web.Response(body=b"\x00" * size, content_type="audio/wav")

    async with serving(_app(files)) as base:
        data, content_type = await loopback_client.fetch(base + "/3000")
        assert (len(data), content_type) == (3000, "audio/wav")
        with pytest.raises(ReplyTooLarge):
            await loopback_client.fetch(base + "/3000", max_bytes=1000)
        with pytest.raises(ReplyTooLarge):
            await loopback_client.fetch(base + "/100000")  # over the client's 64 KiB default
    with pytest.raises(AddressRefused):
        await loopback_client.fetch("http://169.254.169.254/latest/meta-data/")


MANIFEST = Manifest(
    identification=Identification(
        speaker_uri="tag:weather.example,2025:1",
        service_url="https://weather.example/of",
        organization="Weather Inc.",
        conversational_name="Weather",
        synopsis="Forecasts for anywhere.",
    )
).to_wire()
