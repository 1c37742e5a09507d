"""Two gateway nodes behind HAProxy sharing PostgreSQL: a node dies or drains, its people go on.

Real parts only: Debian's PostgreSQL and HAProxy, two ``serve`` processes, a WebSocket client
that talks through HAProxy as a page does (its sticky cookie, its hello with conversation and
token).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections import Counter
from urllib.parse import quote

import pytest

from gateway.cluster.local import LocalCluster, Node
from gateway.records.postgres import PostgresRecorder
from gateway.testing.cluster import Page, rejoin

pytestmark = pytest.mark.slow

AGENTS = {"Parrot", "Clock", "Concierge", "Assistant", "You"}


def ws_url(cluster: LocalCluster) -> str:
    return cluster.url.replace("http://", "ws://") + "/ws"


def node_named(cluster: LocalCluster, name: str) -> Node:
    return next(n for n in cluster.nodes if n.name == name)


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=20) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def floor_names(event: dict) -> set[str]:
    return {c["name"] for c in event["conversants"]}


def envelope_duplicates(cluster: LocalCluster, conversation_id: str) -> list[tuple]:
    rec = PostgresRecorder(cluster.database_url)
    try:
        stored = rec.get_conversation(conversation_id)
    finally:
        rec.close()
    seen = Counter(
        (r.direction, r.peer, json.dumps(r.data, sort_keys=True))
        for r in stored.records
        if r.kind == "envelope"
    )
    return [key for key, n in seen.items() if n > 1]


def holder_of(cluster: LocalCluster, conversation_id: str) -> str | None:
    """The node the records name as holding the conversation."""
    rec = PostgresRecorder(cluster.database_url)
    try:
        holder = rec.holder(conversation_id)
    finally:
        rec.close()
    return holder.node if holder else None


def said_by_person(cluster: LocalCluster, conversation_id: str) -> list[str]:
    """The person's utterances as recorded (envelopes in from them), in order."""
    rec = PostgresRecorder(cluster.database_url)
    try:
        stored = rec.get_conversation(conversation_id)
    finally:
        rec.close()
    person = stored.info.user_speaker_uri
    texts = []
    for r in stored.records:
        if r.kind == "envelope" and r.direction == "in" and r.peer == person:
            for ev in r.data["openFloor"]["events"]:
                if ev["eventType"] == "utterance":
                    de = ev["parameters"]["dialogEvent"]
                    texts.append(de["features"]["text"]["tokens"][0]["value"])
    return texts


async def test_a_killed_node_s_person_rejoins_on_the_other_and_goes_on(cluster: LocalCluster):
    page = await Page.open(ws_url(cluster))
    conv = page.welcome["conversationId"]
    assert page.node in {"node1", "node2"}, "HAProxy set no sticky cookie"
    floor = await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == len(AGENTS))
    assert floor_names(floor) == AGENTS
    await page.say("hello cluster")
    await page.say("second message")
    first = node_named(cluster, page.node)
    other = next(n for n in cluster.nodes if n is not first)
    # Other tests of this module may have left detached rooms on it (kept rejoin_s for their
    # pages), so what is checked is the one conversation this rejoin adds.
    held_before = other.readiness()[1]["conversations"]

    cluster.kill(first)  # SIGKILL: no goodbye, no drain
    again, seconds = await rejoin(ws_url(cluster), page)
    try:
        assert again.welcome["rejoined"] is True
        assert again.welcome["conversationId"] == conv
        assert again.node == other.name  # HAProxy re-dispatched, and set the new node's cookie

        # The history rebuilt from the records is what the page saw on the dead node: the
        # agents' greetings, what the person said and the answers, in order.
        def view(e: dict) -> tuple:
            return (e["type"], e["text"], e.get("speaker"), e.get("typed"), e.get("html"))

        seen = [view(e) for e in page.events if e["type"] in ("transcript", "utterance")]
        assert [view(e) for e in again.welcome["history"]] == seen
        assert ("transcript", "hello cluster", None, True, None) in seen
        assert ("utterance", "You said: second message", "Parrot", None, []) in seen
        floor = await again.wait_for(lambda e: e["type"] == "floor")
        assert floor_names(floor) == AGENTS  # the same agents, not invited again
        await again.say("after the failover")
        assert other.readiness()[1]["conversations"] == held_before + 1
        assert holder_of(cluster, conv) == other.name
    finally:
        await again.close()
        await page.close()
    assert seconds < 15, f"rejoining took {seconds:.1f} s"

    # Every completed event is in the database once.
    assert said_by_person(cluster, conv) == [
        "hello cluster",
        "second message",
        "after the failover",
    ]
    assert envelope_duplicates(cluster, conv) == []

    # The dead node comes back; an export from either node is the same.
    cluster.start_node(first)
    cluster.wait_ready(first, 180)
    token = quote(page.welcome["token"], safe="")
    path = f"/export/{quote(conv, safe='')}?format=mplp-dialog&token={token}"
    exports = [get(node.url + path) for node in cluster.nodes]
    assert [status for status, _ in exports] == [200, 200], exports
    assert exports[0][1] == exports[1][1]
    dialog = json.loads(exports[0][1])
    assert dialog["status"] == "active"
    assert get(cluster.nodes[0].url + path.replace(token, "wrong"))[0] == 403


async def test_a_drained_node_hands_its_people_over(cluster: LocalCluster):
    for node in cluster.nodes:
        if not node.alive:
            cluster.start_node(node)
        cluster.wait_ready(node, 180)
    page = await Page.open(ws_url(cluster))
    conv = page.welcome["conversationId"]
    await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == len(AGENTS))
    await page.say("before the drain")
    leaving = node_named(cluster, page.node)
    assert cluster.drain(leaving) == 0  # SIGTERM: finishes its turns, hands over, exits cleanly
    assert page._reader is not None
    await page._reader
    assert page.closed is not None and page.closed[0] == 1012, page.closed
    again, _ = await rejoin(ws_url(cluster), page)
    try:
        assert again.welcome["rejoined"] is True and again.node != leaving.name
        assert ("transcript", "before the drain") in [
            (e["type"], e["text"]) for e in again.welcome["history"]
        ]
        await again.say("after the drain")
    finally:
        await again.close()
    rec = PostgresRecorder(cluster.database_url)
    try:
        info = rec.get_conversation(conv).info
    finally:
        rec.close()
    assert info.ended_at is None  # handed over, not ended
    assert said_by_person(cluster, conv) == ["before the drain", "after the drain"]
    assert envelope_duplicates(cluster, conv) == []
    cluster.start_node(leaving)
    cluster.wait_ready(leaving, 180)


async def test_readiness_says_full_and_a_balancer_sends_newcomers_elsewhere(
    cluster: LocalCluster,
):
    for node in cluster.nodes:
        if not node.alive:
            cluster.start_node(node)
        cluster.wait_ready(node, 180)
    node = cluster.nodes[0]
    status, body = node.readiness()
    assert (status, body["state"]) == (200, "ready")
    direct = node.url.replace("http://", "ws://") + "/ws"
    pages = [await Page.open(direct) for _ in range(3)]  # --max-sessions 3
    try:
        status, body = node.readiness()
        assert (status, body["state"], body["sessions"]) == (503, "full", 3)
        assert get(node.url + "/healthz")[0] == 200  # alive, only not taking people
    finally:
        for p in pages:
            await p.close()


def test_the_page_in_chromium_fails_over_by_itself(cluster: LocalCluster, tmp_path):
    """The real page through HAProxy: its own cookie, its own reconnection, its own redraw."""
    from pathlib import Path

    from playwright.sync_api import sync_playwright

    from gateway.testing.browser import CHROMIUM, launch

    if not Path(CHROMIUM).exists():
        pytest.skip(f"NO CHROMIUM at {CHROMIUM}: the page's failover not tried")
    for node in cluster.nodes:
        if not node.alive:
            cluster.start_node(node)
        cluster.wait_ready(node, 180)
    with sync_playwright() as p:
        browser = launch(p)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            page = context.new_page()
            page.goto(cluster.url + "/")
            page.locator("#conversants li").nth(3).wait_for(timeout=30_000)
            # Addressed by name: one agent answers each utterance (docs/floor.md).
            page.locator("#text-input").fill("Parrot, hello from the browser")
            page.locator("#text-input").press("Enter")
            conversation = page.locator("#conversation")
            said = "You said: Parrot, hello from the browser"
            conversation.get_by_text(said).wait_for(timeout=30_000)
            [cookie] = [c for c in context.cookies() if c["name"] == "OFPNODE"]
            first = node_named(cluster, cookie["value"])

            # Mark what is on screen now: a redraw from the new node's welcome replaces it.
            page.evaluate(
                "() => document.querySelectorAll('#conversation > *')"
                ".forEach(e => e.dataset.before = '1')"
            )
            cluster.kill(first)
            # The page notices, reconnects through HAProxy (its cookie names the dead node, so
            # HAProxy re-dispatches it and sets the other's) and is welcomed back.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                node = next(c["value"] for c in context.cookies() if c["name"] == "OFPNODE")
                if node != first.name:
                    break
                page.wait_for_timeout(100)
            assert node != first.name, "the page did not reconnect to the other node"
            page.locator("#connection[data-state=open]").wait_for(timeout=30_000)
            # The history was redrawn from the other node's welcome, and the talk goes on.
            page.wait_for_function(
                "() => !document.querySelector('#conversation > [data-before]')", timeout=10_000
            )
            conversation.get_by_text(said).wait_for(timeout=10_000)
            page.locator("#conversants li").nth(3).wait_for(timeout=10_000)
            page.locator("#text-input").fill("Parrot, and after the failover")
            page.locator("#text-input").press("Enter")
            conversation.get_by_text("You said: Parrot, and after the failover").wait_for(
                timeout=30_000
            )
            page.screenshot(path=str(tmp_path / "failover.png"))
        finally:
            browser.close()
    cluster.start_node(first)
    cluster.wait_ready(first, 180)
