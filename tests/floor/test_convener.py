"""A real convener (§0.4.2, §2.2): appointed, delegated to, falling back to the minimal convener
when it fails; and the built-in convener keeping order (gateway/agents/builtin/convener.py)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.ofp import EventType
from gateway.talk.text import talk_text
from tests.floor.helpers import by_recipient, env, ev, floor_with
from tests.ofp_schemas import assert_valid_envelope


def test_a_failed_convener_loses_its_role_and_the_floor_decides() -> None:
    floor = floor_with("user", "chair", "clock", convener="chair")
    out = floor.receive(env("tag:clock", ev("requestFloor")))
    assert [d.recipient.speaker_uri for d in out] == ["tag:chair"] and out[0].awaits_reply
    resumed = floor.convener_replied(None, fallback=True)
    assert floor.convener is None
    # The request is handled as without a convener: granted by the floor manager.
    assert by_recipient(resumed)["user"] == ["grantFloor"]
    grant = resumed[0].envelope
    assert grant.sender.speaker_uri == floor.manager.speaker_uri
    assert grant.conversation.assigned_floor_roles == {"convener": []}


def _utter(text: str, speaker: str) -> dict[str, Any]:
    return {
        "eventType": "utterance",
        "parameters": {
            "dialogEvent": {
                "speakerUri": speaker,
                "span": {"startOffset": "PT0S"},
                "features": {"text": {"mimeType": "text/plain", "tokens": [{"value": text}]}},
            }
        },
    }


async def test_the_built_in_convener_revokes_then_removes_an_agent_that_speaks_out_of_turn(
    site,
) -> None:
    async def chatty(request: web.Request) -> web.Response:
        of = (await request.json())["openFloor"]
        person = [
            c["identification"]["speakerUri"]
            for c in of["conversation"].get("conversants", [])
            if c["identification"].get("role") == "User"
        ]
        events = []
        # It answers the person every time, whoever the person is talking to.
        if of["sender"]["speakerUri"] in person and any(
            e["eventType"] == "utterance" for e in of["events"]
        ):
            events = [_utter("Me too, me too!", "tag:chatty")]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:chatty", "serviceUrl": url},
                    "events": events,
                }
            }
        )

    url = site.route("chatty", chatty)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            [f"Clock, tell me the time please ({i})" for i in range(5)],
            ["builtin:clock", url],
            directory=directory,
            timeout=15,
            convener="builtin:convener",
        )
    finally:
        await directory.aclose()
    # The convener is assigned and published in the conversation section.
    last = result.heard[-1]["openFloor"]["conversation"]
    convener = "tag:ofp-gateway,2025:builtin:convener"
    assert last["assignedFloorRoles"]["convener"] == [convener]
    for envelope in result.heard:
        assert_valid_envelope(envelope)
    told = [n.text for n in result.notices]
    revoked = "Convener took the floor from 127.0.0.1 (a broken policy; spoke out of turn)."
    removed = (
        "Convener removed 127.0.0.1 from the conversation (a broken policy; kept speaking out "
        "of turn)."
    )
    assert revoked in told and removed in told
    assert told.index(revoked) < told.index(removed)
    # Its first two answers were passed on (it still had the floor); later ones were not.
    assert [t for s, t in result.lines if t == "Me too, me too!"] == ["Me too, me too!"] * 2
    # The clock answered each time, and never struck.
    assert sum(1 for s, t in result.lines if s == "Clock" and t.startswith("It's")) == 5
    assert all(c["identification"]["speakerUri"] != "tag:chatty" for c in last["conversants"])
    assert EventType.UNINVITE.value in {
        e["eventType"] for envelope in result.heard for e in envelope["openFloor"]["events"]
    }


async def test_a_convener_that_errs_is_replaced_by_the_floor_and_the_person_told(site) -> None:
    async def broken(request: web.Request) -> web.Response:
        return web.Response(status=500, text="down")

    async def asker(request: web.Request) -> web.Response:
        of = (await request.json())["openFloor"]
        events = []
        if any(e["eventType"] == "utterance" for e in of["events"]):
            events = [{"eventType": "requestFloor", "reason": "I have news"}]
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:asker", "serviceUrl": asker_url},
                    "events": events,
                }
            }
        )

    chair = site.route("chair", broken)
    asker_url = site.route("asker", asker)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            ["Everyone, any news?"], [asker_url], directory=directory, timeout=15, convener=chair
        )
    finally:
        await directory.aclose()
    told = [n.text for n in result.notices]
    assert any("did not answer; the floor carries on as the convener" in t for t in told)
    # The floor answered the request itself, as the minimal convener.
    grants = [
        e
        for envelope in result.heard
        for e in envelope["openFloor"]["events"]
        if e["eventType"] == "grantFloor"
    ]
    assert grants and grants[0]["to"]["speakerUri"] == "tag:asker"
    assert result.heard[-1]["openFloor"]["conversation"]["assignedFloorRoles"]["convener"] == []


def _chair(site, *, accept: bool) -> tuple[str, list[dict[str, Any]]]:
    """An HTTP convener that records every envelope it gets; it publishes its manifest, accepts
    (or declines) its invite, and passes every delegated event back under its authority."""
    got: list[dict[str, Any]] = []

    async def chair(request: web.Request) -> web.Response:
        body = await request.json()
        got.append(body)
        of = body["openFloor"]
        events: list[dict[str, Any]] = []
        for e in of["events"]:
            kind = e["eventType"]
            if kind == "getManifests":
                manifest = {
                    "identification": {
                        "speakerUri": "tag:chair",
                        "serviceUrl": url,
                        "conversationalName": "Chair",
                        "role": "convener",
                        "openFloorRoles": {"convener": True},
                    },
                    "capabilities": [{"keyphrases": ["order"], "descriptions": ["Keeps order."]}],
                }
                events.append(
                    {
                        "eventType": "publishManifests",
                        "parameters": {"servicingManifests": [manifest]},
                    }
                )
            elif kind == "invite" and e.get("to", {}).get("serviceUrl") == url:
                events.append({"eventType": "acceptInvite" if accept else "declineInvite"})
            elif of["sender"]["speakerUri"] != "tag:chair" and kind not in ("invite", "bye"):
                events.append(e)  # delegated: let it through
        return web.json_response(
            {
                "openFloor": {
                    "schema": {"version": "1.1.0"},
                    "conversation": {"id": of["conversation"]["id"]},
                    "sender": {"speakerUri": "tag:chair", "serviceUrl": url},
                    "events": events,
                }
            }
        )

    url = site.route("chair-" + ("yes" if accept else "no"), chair)
    return url, got


async def test_the_convener_is_named_convener_from_its_invite_on(site) -> None:
    url, got = _chair(site, accept=True)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            ["Clock, what time is it?"],
            ["builtin:clock"],
            directory=directory,
            timeout=15,
            convener=url,
        )
    finally:
        await directory.aclose()
    kinds = [[e["eventType"] for e in b["openFloor"]["events"]] for b in got]
    assert kinds[0] == ["getManifests"] and ["invite"] in kinds, kinds
    after_invite = got[kinds.index(["invite"]) :]
    assert len(after_invite) >= 3, kinds  # the invite, and what the conversation sent it later
    for body in after_invite:
        assert_valid_envelope(body)  # still OFP 1.1.0: the role is in the conversation section
        conversation = body["openFloor"]["conversation"]
        assert conversation["assignedFloorRoles"]["convener"] == ["tag:chair"], kinds
        assert "tag:chair" in [
            c["identification"]["speakerUri"] for c in conversation["conversants"]
        ]
    # The person's words reached the clock through it.
    assert any(s == "Clock" and t.startswith("It's") for s, t in result.lines), result.lines
    assert not any("no convener any more" in n.text for n in result.notices), [
        (n.text) for n in result.notices
    ]


async def test_a_convener_that_declines_is_told_once_and_the_floor_keeps_order(site) -> None:
    url, got = _chair(site, accept=False)
    directory = AgentDirectory(AddressPolicy(["127.0.0.0/8"]))
    try:
        result = await talk_text(
            ["Clock, what time is it?"],
            ["builtin:clock"],
            directory=directory,
            timeout=15,
            convener=url,
        )
    finally:
        await directory.aclose()
    # It was asked as convener, and said no.
    [invite] = [b for b in got if b["openFloor"]["events"][0]["eventType"] == "invite"]
    assert invite["openFloor"]["conversation"]["assignedFloorRoles"]["convener"] == ["tag:chair"]
    told = [n.text for n in result.notices]
    assert sum("did not join; the floor is the convener" in t for t in told) == 1, told
    assert not any("no convener any more" in t for t in told), told
    assert any(s == "Clock" and t.startswith("It's") for s, t in result.lines), result.lines
    last = result.heard[-1]["openFloor"]["conversation"]
    assert last["assignedFloorRoles"]["convener"] == []
    assert "tag:chair" not in [c["identification"]["speakerUri"] for c in last["conversants"]]
