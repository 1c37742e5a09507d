"""The inbound URLs agents post to later (gateway/floor/inbound.py) and what the floor host does
with a post (gateway/floor/host.py): in one process, with a real HTTP agent on loopback."""

from __future__ import annotations

from aiohttp import web

from gateway.floor.inbound import InboundDesk, refused_post
from gateway.ofp import Envelope, Event, EventType, text_event
from tests.ofp_schemas import assert_valid_envelope


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_urls_are_unguessable_per_conversation_and_agent_and_revocable() -> None:
    desk = InboundDesk("https://gw.example/ofp/in", node="n1")
    a = desk.url_for("conv:1", "https://a.example/ofp")
    assert a == desk.url_for("conv:1", "https://a.example/ofp")  # one per agent
    b = desk.url_for("conv:1", "https://b.example/ofp")
    c = desk.url_for("conv:2", "https://a.example/ofp")
    assert len({a, b, c}) == 3 and a.startswith("https://gw.example/ofp/in/n1/")
    token = a.rsplit("/", 1)[1]
    assert len(token) >= 32  # 192 random bits
    assert desk.lookup(token).conversation_id == "conv:1"
    assert desk.revoke("conv:1", "https://a.example/ofp") == 1
    assert desk.lookup(token) is None
    assert desk.revoke("conv:1") == 1 and len(desk) == 1  # conv:2's stays


def test_each_url_admits_a_bounded_rate() -> None:
    clock = Clock()
    desk = InboundDesk("http://gw/in", rate=5, burst=10, clock=clock)
    token = desk.url_for("conv:1", "http://a/").rsplit("/", 1)[1]
    admitted = sum(desk.admit(token) for _ in range(1000))  # 1000 at once
    assert admitted == 10
    clock.t += 1.0
    assert sum(desk.admit(token) for _ in range(100)) == 5
    assert not desk.admit("nope")


def test_the_desk_is_bounded() -> None:
    desk = InboundDesk("http://gw/in", max_urls=2)
    assert desk.url_for("c", "http://a/") and desk.url_for("c", "http://b/")
    assert desk.url_for("c", "http://c/") is None


async def test_agents_get_their_inbound_url_as_the_persons_service_url(site, harness) -> None:
    async def agent(request: web.Request) -> web.Response:
        body = await request.json()
        of = body["openFloor"]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:later,2025:1", "serviceUrl": url},
                    "events": [],
                }
            }
        )

    url = site.route("later", agent)
    h = harness()
    desk = InboundDesk("http://127.0.0.1:9/ofp/in", node="n1")
    h.conv.inbound = desk
    await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": url})])
    assert await h.conv.wait_idle(10)
    invite = site.received["later"][-1]
    assert_valid_envelope(invite)
    given = invite["openFloor"]["sender"]["serviceUrl"]
    assert given.startswith("http://127.0.0.1:9/ofp/in/n1/")
    person = [
        c["identification"]
        for c in invite["openFloor"]["conversation"]["conversants"]
        if c["identification"]["speakerUri"] == h.conv.user.speaker_uri
    ]
    assert person[0]["serviceUrl"] == given
    key = desk.lookup(given.rsplit("/", 1)[1]).agent

    # A post later: delivered through the floor to the person, like a reply.
    said = text_event("tag:later,2025:1", "Your timer rang.")
    post = Envelope(
        conversation={"id": h.conv.id},
        sender={"speakerUri": "tag:later,2025:1", "serviceUrl": url},
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                to={"serviceUrl": given},  # the person, by the URL it was given
                parameters={"dialog_event": said},
            )
        ],
    )
    assert await h.conv.post(key, post) is None
    assert await h.conv.wait_idle(10)
    assert h.texts()[-1] == "Your timer rang."
    # Not from that agent, or for another conversation: refused, nothing delivered.
    heard = len(h.heard)
    other = post.model_copy(
        update={"conversation": post.conversation.model_copy(update={"id": "x"})}
    )
    assert "another conversation" in await h.conv.post(key, other)
    impostor = post.model_copy(
        update={
            "sender": post.sender.model_copy(
                update={"speaker_uri": "tag:x", "service_url": "http://x/"}
            )
        }
    )
    assert "not the agent" in await h.conv.post(key, impostor)
    assert len(h.heard) == heard
    # It leaves: its URL is revoked.
    await h.conv.say([Event(event_type=EventType.UNINVITE, to={"speakerUri": "tag:later,2025:1"})])
    assert await h.conv.wait_idle(10)
    assert desk.lookup(given.rsplit("/", 1)[1]) is None
    # The conversation ends: every URL of it is revoked.
    await h.conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": url})])
    assert await h.conv.wait_idle(10)
    assert len(desk) == 1
    await h.conv.close()
    assert len(desk) == 0


async def test_a_taken_inbound_port_is_a_clear_error() -> None:
    import socket

    import pytest

    from gateway.server.inbound import InboundEndpoint, InboundUnavailable

    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        port = taken.getsockname()[1]
        with pytest.raises(InboundUnavailable, match=f"127.0.0.1:{port}.*--inbound-port"):
            await InboundEndpoint(None).start("127.0.0.1", port)  # type: ignore[arg-type]
    finally:
        taken.close()


def test_a_post_is_taken_only_from_its_agent_for_its_conversation() -> None:
    from .helpers import CONV, env, ident

    a = ident("a")
    key = a.service_url  # already normalised
    by_uri = env(a.speaker_uri)
    assert refused_post(by_uri, conversation_id=CONV, key=key, agent=a) is None
    by_url = Envelope.model_validate(
        {
            "conversation": {"id": CONV},
            "sender": {"speakerUri": "tag:renamed", "serviceUrl": "HTTPS://A.EXAMPLE/ofp"},
            "events": [],
        }
    )
    assert refused_post(by_url, conversation_id=CONV, key=key, agent=a) is None
    assert "no longer" in (refused_post(by_uri, conversation_id=CONV, key=key, agent=None) or "")
    assert "another conversation" in (
        refused_post(by_uri, conversation_id="other", key=key, agent=a) or ""
    )
    impostor = env("tag:someone-else")
    assert "not the agent" in (refused_post(impostor, conversation_id=CONV, key=key, agent=a) or "")
