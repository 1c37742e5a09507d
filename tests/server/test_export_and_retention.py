"""A real ``serve``: ``/export/`` refuses what the ``export`` command refuses, with the same words
(one function), and ``--retention-days`` purges while the server runs, not only at start-up."""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import quote

import pytest

from gateway.records import SQLiteRecorder
from gateway.records.cli import add_commands
from gateway.testing.page import PARROT, Page
from gateway.testing.processes import Served, start_gateway, stop_gateway


def export_cli(data: Path, *argv: str) -> int:
    parser = argparse.ArgumentParser(prog="gateway")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["export", *argv, "--data", str(data)])
    return args.func(args)


async def test_export_route_and_command_refuse_alike(gateway: Served, capsys) -> None:
    page = await Page.open(gateway.ws, transport="none")
    await page.send(type="text", text="export me", to=PARROT)
    await page.wait_for(lambda e: e["type"] == "utterance" and "export me" in e["text"])
    conv, token = page.welcome["conversationId"], page.welcome["token"]
    base = f"/export/{quote(conv)}?token={token}"
    try:
        nobody = "tag:nobody.test,2025:x"
        cases = [
            # (query, HTTP status, CLI arguments)
            (f"&format=durable-agent-state&agent={quote(nobody)}", 404,
             ["--format", "durable-agent-state", "--agent", nobody]),
            ("&format=mplp-dialog&agent=" + quote(nobody), 400,
             ["--format", "mplp-dialog", "--agent", nobody]),
            ("&format=durable-agent-state", 400, ["--format", "durable-agent-state"]),
        ]  # fmt: skip
        for query, status, argv in cases:
            got, body, _ = gateway.get(base + query)
            assert got == status, (query, body)
            capsys.readouterr()
            assert export_cli(gateway.data, conv, *argv) == 1
            err = capsys.readouterr().err
            assert err == f"error: {body.decode()}", (query, err, body)
        assert b"took no part" in gateway.get(base + cases[0][0])[1]
        # The built-in agents speak: with several, durable-agent-state needs a choice, and the
        # choice is honoured the same way.
        got, body, _ = gateway.get(base + "&format=bogus")
        assert got == 400 and b"unknown format 'bogus'" in body
        got, body, _ = gateway.get(base + "&format=mplp-dialog")
        assert got == 200 and b"export me" in body
    finally:
        await page.close()


@pytest.fixture
def purging(tmp_path: Path):
    # 3 s of retention: checked every 0.3 s (a tenth), so a long-running server purges soon.
    served = start_gateway(tmp_path, "--retention-days", repr(3 / 86_400))
    yield served
    stop_gateway(served)


@pytest.mark.slow
def test_retention_purges_while_serving(purging: Served) -> None:
    # Recorded only after the server is up, so its start-up purge cannot be what removes it.
    rec = SQLiteRecorder(purging.data)
    try:
        rec.conversation_started("conv-old", at=datetime.now(UTC), title="to be forgotten")
        assert [c.id for c in rec.list_conversations()] == ["conv-old"]
        deadline = time.monotonic() + 30
        while "conv-old" in [c.id for c in rec.list_conversations()]:
            assert purging.proc.poll() is None, (purging.data / "serve.log").read_text()
            assert time.monotonic() < deadline, "a running server never purged expired records"
            time.sleep(0.3)
    finally:
        rec.close()
    assert purging.proc.poll() is None
    assert purging.get("/healthz")[0] == 200
