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

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gateway.records.base import check_retention, utterance_index
from gateway.records.errors import RecordsError
from gateway.records.model import (
    SNIPPET_CHARS,
    ConversationInfo,
    Direction,
    Holder,
    Record,
    RecordKind,
    StoredConversation,
)
from gateway.records.paths import safe_name

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


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


class SQLiteRecorder:
    """Writes conversation records to SQLite as they happen and reads them back.

    Use one instance from one thread (the event loop). Several processes may open the same data
    folder: SQLite's write-ahead log lets the CLI read while the gateway writes.
    ``retention_days`` (``None``: keep forever) is applied when the store opens and on every
    :meth:`purge_expired`.
    """

    #: One machine's folder: no other node takes its conversations up.
    shared = False

    def __init__(self, data_dir: Path, *, retention_days: float | None = None) -> None:
        check_retention(retention_days)
        self.data_dir = Path(data_dir)
        self.retention_days = retention_days
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

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # ------------------------------------------------------------------ writing (host side)
    def conversation_started(
        self, conversation_id: str, *, at: datetime, title: str = "", user_speaker_uri: str = ""
    ) -> None:
        """Record the start of a conversation (again: updates its title and person)."""
        with self._transaction() as db:
            self._ensure(db, conversation_id, at)
            db.execute(
                "UPDATE conversations SET title = ?, user_speaker_uri = ? WHERE id = ?",
                (title, user_speaker_uri, conversation_id),
            )
            if user_speaker_uri:
                self._add_conversant(db, conversation_id, user_speaker_uri)

    def envelope(
        self,
        conversation_id: str,
        *,
        direction: str,
        peer: str,
        envelope: dict[str, Any],
        at: datetime,
    ) -> None:
        """Record an envelope: ``"in"`` received by the floor from ``peer`` (a speaker URI),
        ``"out"`` delivered by the floor to ``peer``. ``envelope`` is the wire dict as sent.

        ``direction`` is a plain ``str`` so the host's structural type matches; anything but the
        two values raises :class:`ValueError`.
        """
        if direction not in ("in", "out"):
            raise ValueError(f"direction must be 'in' or 'out', not {direction!r}")
        with self._transaction() as db:
            self._ensure(db, conversation_id, at)
            seq = self._insert(db, conversation_id, at, "envelope", direction, peer, envelope)
            self._add_conversant(db, conversation_id, peer)
            self._index_utterances(db, conversation_id, seq, envelope)

    def floor_changed(
        self,
        conversation_id: str,
        *,
        conversants: list[dict[str, Any]],
        floor_granted: list[str],
        convener: str | None,
        at: datetime,
    ) -> None:
        """Record the floor's new state; ``conversants`` are identification dicts (wire form)."""
        body = {"conversants": conversants, "floorGranted": floor_granted, "convener": convener}
        with self._transaction() as db:
            self._ensure(db, conversation_id, at)
            self._insert(db, conversation_id, at, "floor", None, None, body)
            for ident in conversants:
                uri = ident.get("speakerUri")
                if isinstance(uri, str) and uri:
                    self._add_conversant(db, conversation_id, uri, ident.get("conversationalName"))

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> Path:
        """Store the clip of an utterance as a file beside the database; return its path.

        ``at`` defaults to now. Storing a clip again for the same event replaces the file.
        """
        at = at or datetime.now(UTC)
        with self._transaction() as db:
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
        row = self._db.execute(
            "SELECT folder FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if row is None:
            return None
        path = self._audio_path(f"audio/{row[0]}/{safe_name(dialog_event_id)}.wav")
        try:
            return path.read_bytes() if path is not None else None
        except OSError:
            return None

    def conversation_ended(
        self, conversation_id: str, *, at: datetime, status: str = "completed"
    ) -> None:
        """Record the end of a conversation; ``status`` is ``"completed"`` or why it stopped."""
        with self._transaction() as db:
            self._ensure(db, conversation_id, at)
            db.execute(
                "UPDATE conversations SET ended_at = ?, status = ? WHERE id = ?",
                (_stamp(at), status, conversation_id),
            )

    def hold(self, conversation_id: str, *, node: str, token_digest: str | None = None) -> None:
        """Note the node holding the conversation (and the digest of its rejoin token)."""
        with self._transaction() as db:
            self._ensure(db, conversation_id, datetime.now(UTC))
            db.execute(
                "UPDATE conversations SET node = ?, token_digest = coalesce(?, token_digest) "
                "WHERE id = ?",
                (node, token_digest, conversation_id),
            )

    def holder(self, conversation_id: str) -> Holder | None:
        """Who holds the conversation, its token digest and whether it ended; None if unknown."""
        row = self._db.execute(
            "SELECT token_digest, node, updated_at, ended_at FROM conversations WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        if row is None:
            return None
        digest, node, updated, ended = row
        return Holder(digest, node, _time(updated), _time(ended) if ended else None)

    def close(self) -> None:
        """Close the database; the records stay on disk."""
        self._db.close()

    # ------------------------------------------------------------------ reading (CLI, page)
    def list_conversations(self) -> list[ConversationInfo]:
        """Every conversation, most recent first."""
        rows = self._db.execute(
            "SELECT id FROM conversations ORDER BY started_at DESC, rowid DESC"
        ).fetchall()
        return [self._info(cid) for (cid,) in rows]

    def get_conversation(
        self, conversation_id: str, *, with_audio: bool = False
    ) -> StoredConversation:
        """A conversation with all its records in order; clips read too when ``with_audio``.

        Raises :class:`RecordsError` when there is no such conversation.
        """
        if not self._exists(conversation_id):
            raise RecordsError(
                f"no conversation {conversation_id!r} in {self.data_dir}; "
                "`python -m gateway history list` shows the ones there are"
            )
        records = []
        for seq, at, kind, direction, peer, body in self._db.execute(
            "SELECT seq, at, kind, direction, peer, body FROM records "
            "WHERE conversation_id = ? ORDER BY seq",
            (conversation_id,),
        ):
            data = json.loads(body)
            clip = self._read_clip(data["file"]) if with_audio and kind == "audio" else None
            records.append(Record(seq, _time(at), kind, direction, peer, data, clip))
        return StoredConversation(self._info(conversation_id), records)

    def delete_conversation(self, conversation_id: str) -> bool:
        """Remove a conversation, its records and its audio files; False if there was none."""
        row = self._db.execute(
            "SELECT folder FROM conversations WHERE id = ?", (conversation_id,)
        ).fetchone()
        if row is None:
            return False
        # Files first: if this is interrupted, running it again finds the rows and finishes,
        # whereas rows-first would leave clips on disk that nothing points to any more.
        self._remove_audio(row[0])
        with self._transaction() as db:
            db.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        return True

    def purge_expired(self, now: datetime) -> list[str]:
        """Delete the conversations idle for longer than the retention; return their ids."""
        if self.retention_days is None:
            return []
        cutoff = _stamp(now - timedelta(days=self.retention_days))
        expired = [
            cid
            for (cid,) in self._db.execute(
                "SELECT id FROM conversations WHERE updated_at < ?", (cutoff,)
            ).fetchall()
        ]
        return [cid for cid in expired if self.delete_conversation(cid)]

    # ------------------------------------------------------------------ helpers
    def _exists(self, conversation_id: str) -> bool:
        found = self._db.execute("SELECT 1 FROM conversations WHERE id = ?", (conversation_id,))
        return found.fetchone() is not None

    def _ensure(self, db: sqlite3.Connection, conversation_id: str, at: datetime) -> str:
        """Create the conversation if this is the first we hear of it; mark it updated at ``at``.

        Returns the name of its audio folder.
        """
        stamp = _stamp(at)
        db.execute(
            "INSERT INTO conversations (id, started_at, updated_at, folder) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET updated_at = max(updated_at, excluded.updated_at)",
            (conversation_id, stamp, stamp, safe_name(conversation_id)),
        )
        row = db.execute("SELECT folder FROM conversations WHERE id = ?", (conversation_id,))
        return str(row.fetchone()[0])

    @staticmethod
    def _insert(
        db: sqlite3.Connection,
        conversation_id: str,
        at: datetime,
        kind: RecordKind,
        direction: str | None,
        peer: str | None,
        body: dict[str, Any],
    ) -> int:
        cur = db.execute(
            "INSERT INTO records (conversation_id, at, kind, direction, peer, body) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (conversation_id, _stamp(at), kind, direction, peer, json.dumps(body, allow_nan=False)),
        )
        return int(cur.lastrowid or 0)

    @staticmethod
    def _add_conversant(
        db: sqlite3.Connection, conversation_id: str, speaker_uri: str, name: Any = None
    ) -> None:
        db.execute(
            "INSERT INTO conversants (conversation_id, speaker_uri, name) VALUES (?, ?, ?) "
            "ON CONFLICT DO UPDATE SET name = coalesce(nullif(excluded.name, ''), name)",
            (conversation_id, speaker_uri, name if isinstance(name, str) else ""),
        )

    @staticmethod
    def _index_utterances(
        db: sqlite3.Connection, conversation_id: str, seq: int, envelope: dict[str, Any]
    ) -> None:
        for event_id, speaker, snippet in utterance_index(envelope):
            db.execute(
                "INSERT OR IGNORE INTO utterances VALUES (?, ?, ?, ?, ?)",
                (conversation_id, event_id, seq, speaker, snippet),
            )

    def _info(self, conversation_id: str) -> ConversationInfo:
        started, updated, ended, status, title, user = self._db.execute(
            "SELECT started_at, updated_at, ended_at, status, title, user_speaker_uri "
            "FROM conversations WHERE id = ?",
            (conversation_id,),
        ).fetchone()
        count, first = self._db.execute(
            "SELECT count(*), (SELECT snippet FROM utterances WHERE conversation_id = ?1 "
            "AND snippet != '' ORDER BY seq LIMIT 1) FROM utterances WHERE conversation_id = ?1",
            (conversation_id,),
        ).fetchone()
        conversants = dict(
            self._db.execute(
                "SELECT speaker_uri, name FROM conversants WHERE conversation_id = ? ORDER BY rowid",
                (conversation_id,),
            ).fetchall()
        )
        return ConversationInfo(
            id=conversation_id,
            started_at=_time(started),
            updated_at=_time(updated),
            ended_at=_time(ended) if ended else None,
            status=status,
            title=title,
            user_speaker_uri=user,
            first_words=first or "",
            message_count=count,
            conversants=conversants,
        )

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
