"""Issue 30 item 2 through a real `serve`: its records on a small disk of its own fill up while a
person talks, then get room again. Nothing the person saw acknowledged is lost, the person is told
in words both times, ``/readyz`` and ``/metrics`` say records are failing, and the log says it
once for the episode, without a traceback."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from gateway.testing.faults import SmallDisk, can_mount
from gateway.testing.page import Page
from gateway.testing.processes import PARROT_ON_LOOPBACK

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not can_mount(), reason="needs root to mount a tmpfs in a namespace"),
]


def readyz(disk: SmallDisk) -> dict:
    return json.loads(disk.served.get("/readyz")[1])


def wait_until(check, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.2)


def recorded_texts(db_dir: Path, conversation_id: str) -> str:
    db = sqlite3.connect(f"file:{db_dir / 'records.sqlite3'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT body FROM records WHERE conversation_id = ? AND kind = 'envelope'",
            (conversation_id,),
        ).fetchall()
    finally:
        db.close()
    return "\n".join(json.dumps(json.loads(body), ensure_ascii=False) for (body,) in rows)


async def test_a_full_disk_loses_no_acknowledged_words(tmp_path: Path) -> None:
    disk = SmallDisk(tmp_path / "data", tmp_path / "serve.log", *PARROT_ON_LOOPBACK, size_mb=16)
    try:
        page = await Page.open(disk.served.ws, transport="none")
        conv = page.welcome["conversationId"]
        said = ["before the disk fills"]
        await page.say(said[0])
        assert readyz(disk)["records"]["state"] == "ok"

        disk.fill()
        for n in range(12):  # the conversation goes on
            said.append(f"while the disk is full, number {n}")
            await page.say(said[-1])
        told = await page.wait_for(lambda e: e["type"] == "notice" and e["reason"] == "@records")
        assert "cannot be saved" in told["text"] and "kept in memory" in told["text"]
        ready = readyz(disk)
        assert ready["state"] == "ready" and ready["records"]["state"] == "failing"
        assert ready["records"]["pending"] > 12 and ready["records"]["dropped"] == 0
        metrics = disk.served.metrics()
        assert metrics["ofp_gateway_records_failing"] == 1
        assert metrics["ofp_gateway_records_pending"] > 12

        since = len(page.events)
        disk.free()
        wait_until(
            lambda: readyz(disk)["records"] == {**ready["records"], "state": "ok", "pending": 0}
        )
        again = await page.wait_for(
            lambda e: e["type"] == "notice" and e["reason"] == "@records", since=since
        )
        assert "saved again; nothing said was lost" in again["text"]
        said.append("after the disk has room")
        await page.say(said[-1])
        assert disk.served.metrics()["ofp_gateway_records_failing"] == 0
        await page.close()

        # Every word the person saw acknowledged (their text and the reply) is in the records.
        kept = recorded_texts(disk.copy_out(tmp_path / "copy"), conv)
        for text in said:
            assert text in kept and f"You said: {text}" in kept, text
    finally:
        disk.stop()
    log = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:3000]
    assert log.count("is failing") == 1 and log.count("recovered") == 1


async def test_postgresql_going_away_loses_no_acknowledged_words(tmp_path: Path) -> None:
    """The shared store's server stopped while a person talks, then started again."""
    import psycopg

    from gateway.cluster.postgres import PostgresUnavailable, TempPostgres
    from gateway.testing.processes import free_port, spawn

    try:
        pg = TempPostgres(fsync=False).start()  # its own: the session's server must stay up
    except PostgresUnavailable as exc:
        pytest.skip(f"no PostgreSQL here: {exc}")
    port = free_port()
    served = spawn(
        ["-v", "serve", "--port", str(port), "--data", pg.url, *PARROT_ON_LOOPBACK],
        tmp_path / "serve.log",
        port,
    )
    try:
        page = await Page.open(served.ws, transport="none")
        conv = page.welcome["conversationId"]
        said = ["before the database stops"]
        await page.say(said[0])
        pg.halt()
        for n in range(8):  # the conversation goes on
            said.append(f"while the database is down, number {n}")
            await page.say(said[-1])
        await page.wait_for(lambda e: e["type"] == "notice" and e["reason"] == "@records")
        assert json.loads(served.get("/readyz")[1])["records"]["state"] == "failing"
        assert served.metrics()["ofp_gateway_records_failing"] == 1
        since = len(page.events)
        pg.resume()
        await page.wait_for(
            lambda e: e["type"] == "notice" and "nothing said was lost" in e["text"],
            timeout=60,
            since=since,
        )
        said.append("after the database is back")
        await page.say(said[-1])
        await page.close()
        with psycopg.connect(pg.url) as db:
            rows = db.execute(
                "SELECT body FROM records WHERE conversation_id = %s AND kind = 'envelope'",
                (conv,),
            ).fetchall()
        kept = "\n".join(json.dumps(json.loads(b), ensure_ascii=False) for (b,) in rows)
        for text in said:
            assert text in kept and f"You said: {text}" in kept, text
    finally:
        served.stop()
        pg.stop()
    log = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:3000]
    assert log.count("is failing") == 1 and log.count("recovered") == 1
    assert "error connecting" not in log  # the pool's every reconnection is not news
