"""One node with its SQLite folder: a conversation survives the node being killed and restarted
(the rejoin token's digest and the state are in the records, as on a cluster)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from gateway.testing.cluster import Page, rejoin
from gateway.testing.processes import start_gateway, stop_gateway

pytestmark = pytest.mark.slow


async def test_a_restarted_node_takes_its_conversation_up_from_sqlite(tmp_path: Path):
    served = start_gateway(tmp_path, "--agent", "builtin:parrot")
    try:
        page = await Page.open(served.ws)
        await page.wait_for(lambda e: e["type"] == "floor" and len(e["conversants"]) == 2)
        await page.say("remember me")
        served.proc.send_signal(signal.SIGKILL)
        served.proc.wait(10)
        await page.close()
        served = start_gateway(tmp_path, "--agent", "builtin:parrot")
        port_page = Page.__new__(Page)  # the same page, now pointed at the restarted node
        port_page.welcome, port_page.node = page.welcome, ""
        again, _ = await rejoin(served.ws, port_page)
        try:
            assert again.welcome["rejoined"] is True
            history = [(e["type"], e["text"]) for e in again.welcome["history"]]
            assert ("transcript", "remember me") in history
            assert ("utterance", "You said: remember me") in history
            floor = await again.wait_for(lambda e: e["type"] == "floor")
            assert {c["name"] for c in floor["conversants"]} == {"Parrot", "You"}
            await again.say("still here")
        finally:
            await again.close()
        # A wrong token starts a new conversation instead.
        other = await Page.open(
            served.ws, conversationId=page.welcome["conversationId"], token="not-the-token"
        )
        try:
            assert other.welcome["rejoined"] is False
            assert other.welcome["conversationId"] != page.welcome["conversationId"]
        finally:
            await other.close()
    finally:
        stop_gateway(served)


async def test_sigusr1_drains_a_sqlite_node_and_leaves_its_conversation_open(tmp_path: Path):
    from gateway.records import SQLiteRecorder

    served = start_gateway(tmp_path, "--agent", "builtin:parrot")
    try:
        page = await Page.open(served.ws)
        await page.say("hold this")
        served.proc.send_signal(signal.SIGUSR1)
        assert served.proc.wait(30) == 0
        assert page._reader is not None
        await page._reader
        assert page.closed is not None and page.closed[0] == 1012
    finally:
        if served.proc.poll() is None:
            stop_gateway(served)
    rec = SQLiteRecorder(tmp_path)
    try:
        info = rec.get_conversation(page.welcome["conversationId"]).info
    finally:
        rec.close()
    assert info.ended_at is None and info.status == "active"  # waiting to be taken up
