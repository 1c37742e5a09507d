"""The embedded store of conversation records: one SQLite file, audio clips as files beside it.

One machine's store; several gateway nodes share :mod:`gateway.records.postgres` instead. Both
implement :class:`gateway.records.base.Recorder`.

Layout of a data folder::

    records.sqlite3                    conversations, records (every envelope in and out, floor
                                       changes, audio clips), an index of utterances, conversants
    audio/<conversation>/<event>.wav   one clip per utterance; names from :func:`safe_name`

The host calls the writing methods from the asyncio event loop, so each is one small transaction
that returns in about a millisecond; see :meth:`Recorder._connect` for what that costs in safety.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.records.base import utterance_index
from gateway.records.errors import RecordsError
from gateway.records.model import (
    SNIPPET_CHARS,
    ConversationInfo,
    Direction,
    Record,
    RecordKind,
    StoredConversation,
)
from gateway.records.paths import safe_name
from gateway.records.sql import ClipReader, Connection, SQLRecorder

__all__ = [
    "AUDIO_DIR",
    "DB_NAME",
    "SNIPPET_CHARS",
    "ConversationInfo",
    "Direction",
    "Record",
    "RecordKind",
    "SQLiteRecorder",
    "StoredConversation",
]

DB_NAME = "records.sqlite3"
AUDIO_DIR = "audio"
_SCHEMA_VERSION = 2

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    ended_at TEXT,
    status TEXT NOT NULL DEFAULT 'active',
    title TEXT NOT NULL DEFAULT '',
    user_speaker_uri TEXT NOT NULL DEFAULT '',
    folder TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    at TEXT NOT NULL,
    kind TEXT NOT NULL,
    direction TEXT,
    peer TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS records_by_conversation ON records(conversation_id, seq);
CREATE TABLE IF NOT EXISTS utterances (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    dialog_event_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    speaker_uri TEXT NOT NULL,
    snippet TEXT NOT NULL,
    PRIMARY KEY (conversation_id, dialog_event_id)
);
CREATE TABLE IF NOT EXISTS conversants (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    speaker_uri TEXT NOT NULL,
    name TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (conversation_id, speaker_uri)
);
"""

#: Migrations from each format to the next, applied in order on open (``PRAGMA user_version``).
_MIGRATIONS: dict[int, str] = {
    # 1 → 2: who holds a conversation and the digest of its rejoin token (resume after restart).
    1: "ALTER TABLE conversations ADD COLUMN token_digest TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE conversations ADD COLUMN node TEXT NOT NULL DEFAULT '';",
}


def _stamp(at: datetime) -> str:
    # One fixed-width UTC form, so text order is time order. A naive time is taken as local time,
    # Python's own convention, rather than refused: a record should not be lost over it.
    return at.astimezone(UTC).isoformat(timespec="microseconds")


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value)


class SQLiteRecorder(SQLRecorder[str]):
    """Writes conversation records to SQLite as they happen and reads them back.

    Use one instance from one thread (the event loop). Several processes may open the same data
    folder: SQLite's write-ahead log lets the CLI read while the gateway writes.
    ``retention_days`` (``None``: keep forever) is applied when the store opens and on every
    :meth:`purge_expired`. Most of it is :class:`~gateway.records.sql.SQLRecorder`.
    """

    #: One machine's folder: no other node takes its conversations up.
    shared = False

    def __init__(self, data_dir: Path, *, retention_days: float | None = None) -> None:
        super().__init__(retention_days)
        self.data_dir = Path(data_dir)
        self._audio_root = self.data_dir / AUDIO_DIR
        self._db = self._connect(self.data_dir / DB_NAME)
        self.purge_expired(datetime.now(UTC))

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        advice = "check it is an ofp-gateway store in a writable folder, or pass another --data DIR"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            # Autocommit mode: transactions are opened explicitly by _transaction, one per call.
            db = sqlite3.connect(path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise RecordsError(f"cannot open the record store {path}: {exc}; {advice}") from None
        try:
            # WAL: a commit appends to the log instead of rewriting pages, and readers in other
            # processes (the CLI) never block the writer. synchronous=NORMAL skips the fsync on
            # each commit: a committed transaction is in the OS once COMMIT returns, so it
            # survives the process being killed; only a power cut or kernel crash can lose the
            # last few commits, a fair price for not stalling the event loop on the disk.
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            # Wait briefly instead of failing when the CLI deletes while the gateway writes.
            db.execute("PRAGMA busy_timeout=1000")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version > _SCHEMA_VERSION:
                raise RecordsError(
                    f"{path} was written by a newer ofp-gateway (format {version}); upgrade, or "
                    "pass another --data DIR"
                )
            db.execute("BEGIN IMMEDIATE")
            version = db.execute("PRAGMA user_version").fetchone()[0]  # again, under the lock
            # executescript() would commit first; one statement at a time stays in the transaction.
            steps = [_SCHEMA] if version == 0 else []  # a new store starts at format 1
            steps += [_MIGRATIONS[v] for v in range(max(version, 1), _SCHEMA_VERSION)]
            for step in steps:
                for statement in step.split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(f"PRAGMA user_version={_SCHEMA_VERSION}")
            db.execute("COMMIT")
        except sqlite3.Error as exc:
            db.close()
            raise RecordsError(f"cannot open the record store {path}: {exc}; {advice}") from None
        except RecordsError:
            db.close()
            raise
        return db

    @property
    def location(self) -> str:
        """The data folder, for messages."""
        return str(self.data_dir)

    # SQLRecorder's dialect and times: the defaults (``?``, ``max``, ``rowid``); text stamps.
    _stamp = staticmethod(_stamp)
    _time = staticmethod(_time)

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """A failing disk or database file (or a text SQLite cannot store) as a RecordsError."""
        try:
            yield
        except (OSError, sqlite3.Error, UnicodeError) as exc:
            raise RecordsError(f"the record store {self.data_dir} failed: {exc}") from exc

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        with self._failures():
            yield self._db

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._failures():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _ensure(self, db: Connection, conversation_id: str, at: datetime) -> str:
        super()._ensure(db, conversation_id, at)
        # The folder as first stored: a store written before a change of safe_name keeps its own.
        return str(self._folder(db, conversation_id))

    def _folder(self, db: Connection, conversation_id: str) -> str | None:
        """The audio folder of the conversation; None if there is no such conversation."""
        row = self._one(db, "SELECT folder FROM conversations WHERE id = ?", conversation_id)
        return None if row is None else str(row[0])

    # ------------------------------------------------------------------ writing (host side)
    def _envelope(
        self, conversation_id: str, direction: str, peer: str, envelope: dict[str, Any], at: datetime
    ) -> None:
        with self._write() as db:
            self._ensure(db, conversation_id, at)
            cur = self._insert(db, conversation_id, at, "envelope", direction, peer, envelope)
            seq = int(getattr(cur, "lastrowid", 0) or 0)
            self._add_conversant(db, conversation_id, peer)
            for event_id, speaker, snippet in utterance_index(envelope):
                db.execute(
                    "INSERT OR IGNORE INTO utterances VALUES (?, ?, ?, ?, ?)",
                    (conversation_id, event_id, seq, speaker, snippet),
                )

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> Path:
        """Store the clip of an utterance as a file beside the database; return its path.

        ``at`` defaults to now. Storing a clip again for the same event replaces the file.
        """
        at = at or datetime.now(UTC)
        with self._write() as db:
            folder = self._ensure(db, conversation_id, at)
            directory = self._audio_root / folder
            directory.mkdir(parents=True, exist_ok=True)
            path = directory / f"{safe_name(dialog_event_id)}.wav"
            # Written under a temporary name and renamed, so a crash never leaves half a clip
            # under the real name; the row is committed only once the file is complete.
            fd, tmp = tempfile.mkstemp(dir=directory, suffix=".part")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(wav)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            body = {
                "dialogEventId": dialog_event_id,
                "file": path.relative_to(self.data_dir).as_posix(),
                "bytes": len(wav),
            }
            self._insert(db, conversation_id, at, "audio", None, None, body)
        return path

    def clip(self, conversation_id: str, dialog_event_id: str) -> bytes | None:
        """The stored WAV of one utterance, or None (it is served as the audio ``valueUrl``)."""
        with self._reading() as db:
            folder = self._folder(db, conversation_id)
        if folder is None:
            return None
        path = self._audio_path(f"audio/{folder}/{safe_name(dialog_event_id)}.wav")
        try:
            return path.read_bytes() if path is not None else None
        except OSError:
            return None

    def close(self) -> None:
        """Close the database; the records stay on disk."""
        self._db.close()

    # ------------------------------------------------------------------ reading (CLI, page)
    def delete_conversation(self, conversation_id: str) -> bool:
        """Remove a conversation, its records and its audio files; False if there was none."""
        with self._reading() as db:
            folder = self._folder(db, conversation_id)
        if folder is None:
            return False
        # Files first: if this is interrupted, running it again finds the rows and finishes,
        # whereas rows-first would leave clips on disk that nothing points to any more.
        with self._failures():
            self._remove_audio(folder)
        with self._write() as db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return True

    def _purge(self, cutoff: Any) -> list[str]:
        with self._reading() as db:
            expired = [
                cid
                for (cid,) in db.execute(
                    "SELECT id FROM conversations WHERE updated_at < ?", (cutoff,)
                ).fetchall()
            ]
        return [cid for cid in expired if self.delete_conversation(cid)]

    # ------------------------------------------------------------------ clips
    def _clip_reader(self, db: Connection, conversation_id: str) -> ClipReader:
        return lambda body: self._read_clip(body["file"])  # files beside the database

    def _audio_path(self, relative: str) -> Path | None:
        """``relative`` (to the data folder) resolved, or None unless it is inside ``audio/``."""
        root = self._audio_root.resolve()
        path = (self.data_dir / relative).resolve()
        return path if path.is_relative_to(root) and path != root else None

    def _read_clip(self, relative: str) -> bytes | None:
        path = self._audio_path(relative)
        try:
            return path.read_bytes() if path is not None else None
        except FileNotFoundError:
            return None  # removed by hand; the export simply has no clip for it

    def _remove_audio(self, folder: str) -> None:
        path = self._audio_path(f"{AUDIO_DIR}/{folder}")
        if path is not None and path.exists():
            shutil.rmtree(path)
