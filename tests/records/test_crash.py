"""A recording process killed mid-stream loses nothing it had reported as recorded."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from gateway.records.store import DB_NAME
from gateway.testing.records import Store

WRITER = Path(__file__).with_name("crash_writer.py")
#: How many envelopes the writer must report before it is killed.
REPORTED_BEFORE_KILL = 300


def test_sigkill_mid_stream_loses_nothing_that_was_reported(store: Store):
    child = subprocess.Popen(
        [sys.executable, str(WRITER), store.target],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    reported: list[int] = []
    try:
        assert child.stdout is not None
        while len(reported) < REPORTED_BEFORE_KILL:
            line = child.stdout.readline()
            assert line, f"the writer stopped early: {child.stderr.read() if child.stderr else ''}"
            reported.append(int(line))
        # Killed while it keeps writing: whatever call is in flight is the only one at risk.
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=10)
        reported.extend(int(line) for line in child.stdout.read().split())
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    assert child.returncode == -signal.SIGKILL

    if store.kind == "sqlite":
        db = sqlite3.connect(Path(store.target) / DB_NAME)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        finally:
            db.close()
    recorder = store.open()
    try:
        stored = recorder.get_conversation("crash")
        texts = [
            r.data["openFloor"]["events"][0]["parameters"]["dialogEvent"]["features"]["text"][
                "tokens"
            ][0]["value"]
            for r in stored.records
        ]
    finally:
        recorder.close()
    assert texts[: len(reported)] == [f"message {n}" for n in reported]
    assert len(texts) - len(reported) <= 1  # at most the one recorded but not yet reported
