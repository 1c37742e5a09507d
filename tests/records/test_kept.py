"""Records that survive their store failing (gateway/records/kept.py), on a real SQLite store
made read-only under the recorder (its connection reopened ``mode=ro``: SQLite's own "attempt to
write a readonly database"), then writable again."""

from __future__ import annotations

import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.records import SQLiteRecorder
from gateway.records.kept import KeptRecords, RecordsHealth

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def read_only(store: SQLiteRecorder) -> sqlite3.Connection:
    """Swap the store's connection for a read-only one; returns the writable one."""
    writable = store._db
    store._db = sqlite3.connect(
        f"file:{store.data_dir / 'records.sqlite3'}?mode=ro", uri=True, isolation_level=None
    )
    return writable


def writable_again(store: SQLiteRecorder, writable: sqlite3.Connection) -> None:
    store._db.close()
    store._db = writable


def say(records: KeptRecords, n: int, text: str = "hello") -> None:
    records.envelope(
        "c1",
        direction="in",
        peer="tag:person",
        envelope={"openFloor": {"n": n, "text": text}},
        at=AT + timedelta(seconds=n),
    )


def kept_numbers(store: SQLiteRecorder) -> list[int]:
    stored = store.get_conversation("c1")
    return [r.data["openFloor"]["n"] for r in stored.records if r.kind == "envelope"]


@pytest.fixture
def store(tmp_path: Path):
    s = SQLiteRecorder(tmp_path / "data")
    yield s
    s.close()


def test_writes_wait_while_the_store_fails_and_are_kept_in_order(store, caplog) -> None:
    clock, heard = Clock(), []
    records = KeptRecords(store, clock=clock, listener=heard.append)
    say(records, 0)
    writable = read_only(store)
    with caplog.at_level(logging.INFO, logger="gateway.records.kept"):
        for n in range(1, 40):
            clock.now += 0.1
            say(records, n)
        records.audio("c1", "de:1", b"RIFF....", at=AT)
        assert records.health().state == "failing" and records.health().pending == 40
        assert records.clip("c1", "de:1") == b"RIFF...."  # served from the buffer meanwhile
        clock.now += 5
        assert not records.flush()  # still read-only: nothing lost, nothing written
        writable_again(store, writable)
        clock.now += 5
        say(records, 40)  # the next write writes the buffer out first, in order
    assert kept_numbers(store) == list(range(41))
    assert store.clip("c1", "de:1") == b"RIFF...."
    assert [h.state for h in heard] == ["failing", "ok"]
    assert records.health() == RecordsHealth("ok", 0, 0, 1, records.health().error)
    assert "readonly" in records.health().error
    failing = [r for r in caplog.records if "is failing" in r.getMessage()]
    assert len(failing) == 1 and not any(r.exc_info for r in caplog.records)  # once, no traceback
    assert sum("recovered" in r.getMessage() for r in caplog.records) == 1


def test_past_the_bound_writes_are_dropped_counted_and_said(store) -> None:
    clock, heard = Clock(), []
    records = KeptRecords(store, max_pending=5, clock=clock, listener=heard.append)
    writable = read_only(store)
    for n in range(8):
        say(records, n)
    health = records.health()
    assert (health.state, health.pending, health.dropped) == ("dropping", 5, 3)
    writable_again(store, writable)
    assert records.flush(force=True)
    assert kept_numbers(store) == [0, 1, 2, 3, 4]  # the first five, in order
    assert [h.state for h in heard] == ["failing", "dropping", "ok"]
    assert heard[-1].dropped == 3


def test_the_byte_bound_counts_clips(store) -> None:
    records = KeptRecords(store, max_bytes=100_000)
    writable = read_only(store)
    records.audio("c1", "de:a", b"x" * 60_000, at=AT)
    records.audio("c1", "de:b", b"x" * 60_000, at=AT)
    assert (records.health().pending, records.health().dropped) == (1, 1)
    writable_again(store, writable)
    records.close()  # the last try writes what waits
    reopened = SQLiteRecorder(store.data_dir)
    try:
        assert reopened.clip("c1", "de:a") == b"x" * 60_000
    finally:
        reopened.close()


def test_a_failing_store_is_tried_at_most_once_per_retry_interval(store) -> None:
    clock = Clock()
    records = KeptRecords(store, clock=clock, retry_s=1.0)
    writable = read_only(store)
    tries = 0
    real = store.envelope

    def counted(*args, **kwargs):
        nonlocal tries
        tries += 1
        return real(*args, **kwargs)

    store.envelope = counted  # type: ignore[method-assign]
    for n in range(100):  # 100 writes within 0.99 s: one try, the first
        clock.now = n * 0.0099
        say(records, n)
    assert tries == 1 and records.health().pending == 100
    writable_again(store, writable)
