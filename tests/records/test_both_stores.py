"""The two stores side by side: the same records give the same history and exports; each
migrates its schema on open; rejoin tokens and holders are kept where every node reads them."""

from __future__ import annotations

import json
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest

from gateway.records import (
    Recorder,
    RecordsError,
    SQLiteRecorder,
    open_recorder,
    to_durable_agent_state,
    to_mplp_dialog,
)
from gateway.records.base import token_digest
from gateway.records.postgres import SCHEMA_VERSION, PostgresRecorder, redact
from gateway.records.store import DB_NAME
from gateway.testing.records import ALICE, BOB, USER, Store, record_conversation, run


class Tee:
    """Feeds every write to several stores, so they record the very same conversation."""

    def __init__(self, *stores: Recorder) -> None:
        self.stores = stores

    def __getattr__(self, name: str) -> Any:
        def call(*args: Any, **kwargs: Any) -> None:
            for store in self.stores:
                getattr(store, name)(*args, **kwargs)

        return call


@pytest.fixture
def both(data_dir: Path, postgres_url: str):
    sqlite, postgres = SQLiteRecorder(data_dir), PostgresRecorder(postgres_url)
    yield sqlite, postgres
    sqlite.close()
    postgres.close()


def test_the_same_conversation_exports_identically_from_either_store(both, capsys):
    sqlite, postgres = both
    record_conversation(Tee(sqlite, postgres), "conv-lisbon-1")  # type: ignore[arg-type]
    record_conversation(Tee(sqlite, postgres), "conv-2", end_status=None)  # type: ignore[arg-type]
    a = sqlite.get_conversation("conv-lisbon-1", with_audio=True)
    b = postgres.get_conversation("conv-lisbon-1", with_audio=True)
    assert a.info == b.info
    # seq numbers are each store's own; everything else is the same, clips included
    strip = [(r.at, r.kind, r.direction, r.peer, r.data, r.audio) for r in a.records]
    assert strip == [(r.at, r.kind, r.direction, r.peer, r.data, r.audio) for r in b.records]
    assert json.dumps(to_mplp_dialog(a)) == json.dumps(to_mplp_dialog(b))
    for agent in (ALICE.speaker_uri, BOB.speaker_uri, USER.speaker_uri):
        assert json.dumps(to_durable_agent_state(a, agent)) == json.dumps(
            to_durable_agent_state(b, agent)
        )
    assert sqlite.list_conversations() == postgres.list_conversations()
    # and the command line prints the same from either
    outputs = []
    for target in (str(sqlite.data_dir), postgres.url):
        for argv in (
            ("history", "list", "--json"),
            ("history", "show", "conv-lisbon-1"),
            ("export", "conv-lisbon-1", "--format", "mplp-dialog"),
            (
                "export",
                "conv-lisbon-1",
                "--format",
                "durable-agent-state",
                "--agent",
                BOB.speaker_uri,
            ),
        ):
            assert run(*argv, "--data", target) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]


def test_postgres_migrates_once_even_when_nodes_start_together(postgres_url: str):
    errors: list[BaseException] = []
    opened: list[PostgresRecorder] = []

    def start() -> None:
        try:
            opened.append(PostgresRecorder(postgres_url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for rec in opened:
        rec.close()
    assert errors == [] and len(opened) == 4
    with psycopg.connect(postgres_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM ofp_schema ORDER BY 1")]
    assert versions == list(range(1, SCHEMA_VERSION + 1))


def test_postgres_from_a_newer_gateway_is_left_alone(postgres_url: str):
    PostgresRecorder(postgres_url).close()
    with psycopg.connect(postgres_url) as conn:
        conn.execute("INSERT INTO ofp_schema (version) VALUES (99)")
    with pytest.raises(RecordsError, match="newer ofp-gateway"):
        PostgresRecorder(postgres_url)


def test_sqlite_format_1_is_migrated_keeping_its_records(tmp_path: Path):
    # A store as the previous release wrote it: format 1, without the rejoin columns.
    from gateway.records.store import _SCHEMA

    db = sqlite3.connect(tmp_path / DB_NAME)
    db.executescript(_SCHEMA)
    db.execute(
        "INSERT INTO conversations (id, started_at, updated_at, folder) VALUES "
        "('old', '2025-01-01T00:00:00.000000+00:00', '2025-01-01T00:00:00.000000+00:00', 'old')"
    )
    db.execute("PRAGMA user_version=1")
    db.commit()
    db.close()
    rec = SQLiteRecorder(tmp_path)
    try:
        assert [i.id for i in rec.list_conversations()] == ["old"]
        holder = rec.holder("old")
        assert holder is not None and (holder.token_digest, holder.node) == ("", "")
    finally:
        rec.close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    assert db.execute("PRAGMA user_version").fetchone() == (2,)
    db.close()


def test_the_holder_and_token_digest_are_read_by_another_connection(store: Store):
    writer, reader = store.open(), store.open()  # two nodes
    try:
        assert reader.holder("c") is None
        writer.conversation_started("c", at=datetime.now(UTC))
        writer.hold("c", node="node-a", token_digest=token_digest("secret-token"))
        held = reader.holder("c")
        assert held is not None
        assert (held.node, held.token_digest) == ("node-a", token_digest("secret-token"))
        assert held.ended_at is None
        reader.hold("c", node="node-b")  # taken over: the digest stays
        held = writer.holder("c")
        assert held is not None
        assert (held.node, held.token_digest) == ("node-b", token_digest("secret-token"))
        writer.conversation_ended("c", at=datetime.now(UTC))
        assert (reader.holder("c") or held).ended_at is not None
    finally:
        writer.close()
        reader.close()


def test_the_token_itself_is_never_stored(store: Store):
    rec = store.open()
    try:
        rec.hold("c", node="n", token_digest=token_digest("plain-token-value"))
    finally:
        rec.close()
    if store.kind == "postgresql":
        with psycopg.connect(store.target) as conn:
            dump = str(conn.execute("SELECT * FROM conversations").fetchall())
    else:
        dump = (Path(store.target) / DB_NAME).read_bytes().decode("latin-1")
    assert "plain-token-value" not in dump


def test_open_recorder_chooses_by_url_and_environment(tmp_path, postgres_url, monkeypatch):
    monkeypatch.delenv("OFP_GATEWAY_DATABASE_URL", raising=False)
    rec = open_recorder(str(tmp_path))
    assert isinstance(rec, SQLiteRecorder)
    rec.close()
    monkeypatch.setenv("OFP_GATEWAY_DATABASE_URL", postgres_url)
    rec = open_recorder(None)
    assert isinstance(rec, PostgresRecorder) and isinstance(rec, Recorder)
    rec.close()
    rec = open_recorder(str(tmp_path))  # --data beats the environment
    assert isinstance(rec, SQLiteRecorder)
    rec.close()


def test_passwords_are_kept_out_of_messages():
    assert redact("postgresql://u:pw@db.example:5432/x") == "postgresql://u:***@db.example:5432/x"
    assert redact("postgresql://u@h/x") == "postgresql://u@h/x"


def test_a_lost_database_costs_a_bounded_stall_then_fails_fast(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Shown by what the recorder does, not by how long it took: the one call that meets the
    outage waits for a connection CALL_TIMEOUT_S at most (not the TCP timeout, not the pool's
    patience); for BACKOFF_S after it, calls fail without asking the pool at all; then one asks
    again. The backoff runs on a clock the test moves."""
    # Its own server: this test stops it.
    from gateway.cluster.postgres import PostgresUnavailable, TempPostgres
    from gateway.records import postgres

    try:
        server = TempPostgres(fsync=False).start()
    except PostgresUnavailable as exc:  # the session fixture reports this loudly already
        pytest.skip(f"NO POSTGRESQL HERE: {exc}")
    rec = PostgresRecorder(server.url)
    now = [1000.0]
    # The module's own clock only (the pool's timeouts keep the real one).
    monkeypatch.setattr(postgres, "time", SimpleNamespace(monotonic=lambda: now[0]))
    asked: list[float | None] = []
    pool_connection = rec._pool.connection

    def connection(timeout: float | None = None) -> Any:
        asked.append(timeout)
        return pool_connection(timeout=timeout)

    monkeypatch.setattr(rec._pool, "connection", connection)
    try:
        rec.conversation_started("c", at=datetime.now(UTC))
        server.stop()
        asked.clear()
        with pytest.raises(RecordsError, match="unreachable: "):
            rec.envelope("c", direction="in", peer="p", envelope={}, at=datetime.now(UTC))
        assert asked == [postgres.CALL_TIMEOUT_S]  # the stall's bound
        for _ in range(20):  # meanwhile every call fails at once: the pool is not asked
            now[0] += postgres.BACKOFF_S / 21
            with pytest.raises(RecordsError, match="unreachable; retrying soon"):
                rec.envelope("c", direction="in", peer="p", envelope={}, at=datetime.now(UTC))
        assert asked == [postgres.CALL_TIMEOUT_S]
        now[0] += postgres.BACKOFF_S  # the backoff over: the next call tries again
        with pytest.raises(RecordsError, match="unreachable: "):
            rec.envelope("c", direction="in", peer="p", envelope={}, at=datetime.now(UTC))
        assert asked == [postgres.CALL_TIMEOUT_S] * 2
    finally:
        rec.close()
        server.stop()
