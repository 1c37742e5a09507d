"""An agent speaks later through the reference HAProxy deployment: its inbound URL points at
HAProxy's inbound frontend and names the node holding the conversation, so the post reaches the
person whichever node the agent's connection would have gone to."""

from __future__ import annotations

import aiohttp
import pytest

from gateway.cluster.local import LocalCluster
from gateway.testing.cluster import Page
from gateway.testing.timer_agent import TimerAgent, envelope, say

pytestmark = pytest.mark.slow


async def test_a_post_to_the_inbound_url_reaches_the_person_through_haproxy(
    cluster: LocalCluster, site
) -> None:
    timer = TimerAgent(site, delay=1.0)
    page = await Page.open(cluster.url.replace("http", "ws", 1) + "/ws")
    try:
        await page.ws.send(f'{{"type": "invite", "url": "{timer.url}"}}')
        await page.wait_for(lambda e: e["type"] == "utterance" and e["text"] == "Timer here.")
        await page.ws.send('{"type": "text", "text": "Timer, ring in a second"}')
        await page.wait_for(lambda e: e["type"] == "utterance" and "I'll ring" in e["text"])
        assert cluster.haproxy is not None and cluster.haproxy.inbound_url is not None
        url = timer.inbound
        assert url is not None
        assert url.startswith(f"{cluster.haproxy.inbound_url}/ofp/in/{page.node}/"), url
        rung = await page.wait_for(
            lambda e: e["type"] == "utterance" and e["text"] == "Ring ring: time's up!"
        )
        assert rung["speaker"] == "Timer"
        assert timer.rang[0][0] == 200
        # The same path at the other node itself is refused (it does not hold the
        # conversation): HAProxy's routing by node is what brings the post home.
        other = next(n for n in cluster.nodes if n.name != page.node)
        path = url.split("/ofp/in/", 1)[1]
        body = envelope(timer.conv, timer.url, [say("misrouted")])
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"http://127.0.0.1:{other.inbound_port}/ofp/in/{path}", json=body) as r,
        ):
            assert r.status == 404
    finally:
        await page.close()
