"""Conversation records in PostgreSQL, for several gateway nodes sharing one database.

The same records as the SQLite store (:mod:`gateway.records.store`), row for row, so ``history``,
``export`` and retention read the same from either; the clips are in the database too (``bytea``),
where every node can serve them. A clip is about 32 KB a second of speech; past a few hundred GB
of clips, object storage (S3 or alike, keyed like the SQLite store's files) with the key in the
row would keep the database small.

The driver is psycopg 3, used synchronously: the store's interface is synchronous (the host calls
it from the event loop, as it calls SQLite), and a measured write (``scripts/bench_cluster.py``)
costs the same round trips with asyncpg awaited in the loop; asyncpg would only have made every
caller async. Each write is one round trip (one statement, or a pipelined transaction), committed
with
``synchronous_commit = off``: the commit is in the server once it returns, so it survives the
gateway node being killed; only a crash of the database server itself can lose its last few
hundred milliseconds — the same trade SQLite's ``synchronous=NORMAL`` makes, for the same reason
(not stalling the event loop on a disk flush).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from gateway.records.base import utterance_index
from gateway.records.errors import RecordsError
from gateway.records.paths import safe_name
from gateway.records.sql import ClipReader, Connection, SQLRecorder

AUDIO_DIR = "audio"
#: Connections one node keeps: the event loop writes on one at a time; the rest serve readers
#: (clips, exports) without waiting behind a write.
POOL_MIN = 1
POOL_MAX = 4
#: Seconds to wait for the pool at start (the database may be starting too).
POOL_TIMEOUT_S = 5.0
#: Seconds a call waits for a connection once running. The host calls from its event loop, so a
#: database that went away must cost it a bounded stall, not the pool's patience.
CALL_TIMEOUT_S = 1.0
#: After a call found the database unreachable, calls fail at once for this long (the pool
#: reconnects meanwhile): an outage costs the loop one stall every few seconds, not one per record.
BACKOFF_S = 3.0

#: Schema migrations, by the version they bring the database to; applied in order at start under
#: an advisory lock, so two nodes starting together do not both migrate.
MIGRATIONS: dict[int, str] = {
    1: """
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    ord BIGSERIAL,
    started_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    ended_at TIMESTAMPTZ,
    status TEXT NOT NULL DEFAULT 'active',
    title TEXT NOT NULL DEFAULT '',
    user_speaker_uri TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL,
    token_digest TEXT NOT NULL DEFAULT '',
    node TEXT NOT NULL DEFAULT ''
);
CREATE INDEX conversations_by_update ON conversations(updated_at);
CREATE TABLE records (
    seq BIGSERIAL PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    at TIMESTAMPTZ NOT NULL,
    kind TEXT NOT NULL,
    direction TEXT,
    peer TEXT,
    body TEXT NOT NULL
);
CREATE INDEX records_by_conversation ON records(conversation_id, seq);
CREATE TABLE utterances (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    dialog_event_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    speaker_uri TEXT NOT NULL,
    snippet TEXT NOT NULL,
    PRIMARY KEY (conversation_id, dialog_event_id)
);
CREATE TABLE conversants (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    speaker_uri TEXT NOT NULL,
    ord BIGSERIAL,
    name TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (conversation_id, speaker_uri)
);
CREATE TABLE clips (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    dialog_event_id TEXT NOT NULL,
    wav BYTEA NOT NULL,
    PRIMARY KEY (conversation_id, dialog_event_id)
);
""",
}
SCHEMA_VERSION = max(MIGRATIONS)
_LOCK_KEY = 0x0F9_6A7E  # pg_advisory_xact_lock key of the migration

# The hot path (several envelopes a turn) as one statement: one round trip, atomic without BEGIN
# and COMMIT: 0.6 ms a call against 1.1 ms as a pipelined transaction of four statements
# (measured on a loaded 2-core machine; scripts/bench_cluster.py). The conversation row the
# first CTE inserts satisfies the others' foreign keys: they are checked at the statement's end.
_ENVELOPE = """
WITH c AS (
    INSERT INTO conversations (id, started_at, updated_at, folder)
    VALUES (%(cid)s, %(at)s, %(at)s, %(folder)s)
    ON CONFLICT (id) DO UPDATE
    SET updated_at = greatest(conversations.updated_at, excluded.updated_at)
    RETURNING id
), r AS (
    INSERT INTO records (conversation_id, at, kind, direction, peer, body)
    SELECT id, %(at)s, 'envelope', %(direction)s, %(peer)s, %(body)s FROM c
    RETURNING seq, conversation_id
), u AS (
    INSERT INTO utterances (conversation_id, dialog_event_id, seq, speaker_uri, snippet)
    SELECT r.conversation_id, x.id, r.seq, x.speaker, x.snippet
    FROM r, unnest(%(ids)s::text[], %(speakers)s::text[], %(snippets)s::text[])
        AS x(id, speaker, snippet)
    ON CONFLICT DO NOTHING
)
INSERT INTO conversants (conversation_id, speaker_uri)
SELECT id, %(peer)s FROM c
ON CONFLICT (conversation_id, speaker_uri) DO NOTHING
"""


class _OutageNoise(logging.Filter):
    """Drops the pool's warning at each failed reconnection (one every 1, 2, 4… s of an outage)
    and at each broken connection discarded: the outage is reported once, when it begins and
    when it ends, by :mod:`gateway.records.kept`."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = str(record.msg)
        return not message.startswith(("error connecting in", "discarding closed connection"))


logging.getLogger("psycopg.pool").addFilter(_OutageNoise())


def _utc(at: datetime) -> datetime:
    # As the SQLite store: a naive time is local time; everything is kept in UTC.
    return at.astimezone(UTC)


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


class PostgresRecorder(SQLRecorder[datetime]):
    """The record store of several nodes: one PostgreSQL database, clips in it.

    Safe to share between threads (each call takes a pooled connection). ``retention_days`` as
    for SQLite: applied at start and on every :meth:`purge_expired`. Most of it is
    :class:`~gateway.records.sql.SQLRecorder`.
    """

    #: Every node of the cluster reads and writes it.
    shared = True
    placeholder = "%s"
    greatest = "greatest"
    arrival = "ord"

    def __init__(
        self, url: str, *, retention_days: float | None = None, pool_max: int = POOL_MAX
    ) -> None:
        super().__init__(retention_days)
        self.url = url
        self._down_until = 0.0
        advice = (
            "check the server is running and the URL (postgresql://USER[:PASSWORD]@HOST:PORT/DB) "
            "names a database you may create tables in"
        )
        try:
            self._pool = ConnectionPool(
                url,
                min_size=POOL_MIN,
                max_size=max(POOL_MIN, pool_max),
                timeout=POOL_TIMEOUT_S,
                configure=self._configure,
                kwargs={"connect_timeout": 3},
                open=True,
                name="ofp-records",
            )
        except (psycopg.Error, PoolTimeout) as exc:  # no pool to close
            raise RecordsError(
                f"cannot open the record store {redact(url)}: {str(exc).strip()}; {advice}"
            ) from None
        try:
            self._pool.wait(timeout=POOL_TIMEOUT_S)
            self._migrate()
        except (psycopg.Error, PoolTimeout) as exc:
            self.close()
            raise RecordsError(
                f"cannot open the record store {redact(url)}: {str(exc).strip()}; {advice}"
            ) from None
        except RecordsError:
            self.close()
            raise
        self.purge_expired(datetime.now(UTC))

    @staticmethod
    def _configure(conn: psycopg.Connection[Any]) -> None:
        conn.autocommit = True
        conn.execute("SET TIME ZONE 'UTC'")
        # See the module docstring: durable against the gateway being killed, not the server.
        conn.execute("SET synchronous_commit = off")

    def _migrate(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS ofp_schema (version INTEGER NOT NULL, "
                "applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            row = conn.execute("SELECT max(version) FROM ofp_schema").fetchone()
            version = (row[0] if row else None) or 0
            if version > SCHEMA_VERSION:
                raise RecordsError(
                    f"{redact(self.url)} was written by a newer ofp-gateway (format {version}); "
                    "upgrade this node"
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                conn.execute(MIGRATIONS[target])
                conn.execute("INSERT INTO ofp_schema (version) VALUES (%s)", (target,))

    @property
    def location(self) -> str:
        """The database URL without its password."""
        return redact(self.url)

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection; :class:`RecordsError` at once while the database is unreachable."""
        if time.monotonic() < self._down_until:
            raise RecordsError(f"the record database {self.location} is unreachable; retrying soon")
        try:
            with self._pool.connection(timeout=CALL_TIMEOUT_S) as conn:
                yield conn
        except (psycopg.OperationalError, PoolTimeout) as exc:
            self._down_until = time.monotonic() + BACKOFF_S
            raise RecordsError(
                f"the record database {self.location} is unreachable: {str(exc).strip()}"
            ) from None
        except (psycopg.Error, UnicodeError) as exc:  # e.g. a text PostgreSQL cannot store
            raise RecordsError(
                f"the record database {self.location} failed: {str(exc).strip()}"
            ) from exc

    _reading = _connection

    # SQLRecorder's times: timestamptz, kept in UTC.
    _stamp = staticmethod(_utc)

    @staticmethod
    def _time(value: datetime) -> datetime:
        return value  # psycopg reads a timestamptz as a datetime

    @contextmanager
    def _write(self) -> Iterator[psycopg.Connection[Any]]:
        """One transaction, its statements pipelined: sent together, one round trip."""
        # Transaction outside the pipeline: BEGIN, the statements and COMMIT then go out
        # together (the other way round measured 0.9 ms against 0.5 ms for three inserts).
        with self._connection() as conn, conn.transaction(), conn.pipeline():
            yield conn

    # ------------------------------------------------------------------ writing (host side)
    def _envelope(
        self, conversation_id: str, direction: str, peer: str, envelope: dict[str, Any], at: datetime
    ) -> None:
        index = utterance_index(envelope)
        params = {
            "cid": conversation_id,
            "at": _utc(at),
            "folder": safe_name(conversation_id),
            "direction": direction,
            "peer": peer,
            "body": json.dumps(envelope, allow_nan=False),
            "ids": [i for i, _, _ in index],
            "speakers": [s for _, s, _ in index],
            "snippets": [t for _, _, t in index],
        }
        with self._connection() as conn:
            conn.execute(_ENVELOPE, params)

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> str:
        """Store the clip of an utterance in the database; return its name (as the SQLite store
        would file it, so the records read the same). Storing it again replaces it."""
        at = at or datetime.now(UTC)
        name = f"{AUDIO_DIR}/{safe_name(conversation_id)}/{safe_name(dialog_event_id)}.wav"
        body = {"dialogEventId": dialog_event_id, "file": name, "bytes": len(wav)}
        with self._write() as conn:
            self._ensure(conn, conversation_id, at)
            conn.execute(
                "INSERT INTO clips VALUES (%s, %s, %s) ON CONFLICT (conversation_id, "
                "dialog_event_id) DO UPDATE SET wav = excluded.wav",
                (conversation_id, dialog_event_id, wav),
            )
            self._insert(conn, conversation_id, at, "audio", None, None, body)
        return name

    def close(self) -> None:
        """Close the pool; the records stay in the database."""
        self._pool.close()

    # ------------------------------------------------------------------ reading (CLI, page)
    def clip(self, conversation_id: str, dialog_event_id: str) -> bytes | None:
        """The stored WAV of one utterance, or None (it is served as the audio ``valueUrl``)."""
        with self._reading() as db:
            row = self._one(
                db,
                "SELECT wav FROM clips WHERE conversation_id = ? AND dialog_event_id = ?",
                conversation_id,
                dialog_event_id,
            )
        return bytes(row[0]) if row is not None else None

    def delete_conversation(self, conversation_id: str) -> bool:
        """Remove a conversation, its records and its clips; False if there was none."""
        with self._connection() as conn:
            cur = conn.execute("DELETE FROM conversations WHERE id = %s", (conversation_id,))
            return cur.rowcount > 0

    def _purge(self, cutoff: Any) -> list[str]:
        with self._connection() as conn:
            rows = conn.execute(
                "DELETE FROM conversations WHERE updated_at < %s RETURNING id", (cutoff,)
            ).fetchall()
        return [cid for (cid,) in rows]

    def _clip_reader(self, db: Connection, conversation_id: str) -> ClipReader:
        # Every clip of the conversation in one query, matched to its records by event id.
        clips = {
            event: bytes(wav)
            for event, wav in db.execute(
                "SELECT dialog_event_id, wav FROM clips WHERE conversation_id = %s",
                (conversation_id,),
            ).fetchall()
        }
        return lambda body: clips.get(body.get("dialogEventId", ""))
