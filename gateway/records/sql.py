"""What the two SQL record stores share: the statements and the reading of rows into records.

:class:`~gateway.records.store.SQLiteRecorder` and :class:`~gateway.records.postgres.PostgresRecorder`
keep the same tables row for row, so everything but the storing of clips, deletion and the
PostgreSQL hot path (one statement an envelope) is written once here, in the SQL both engines
read. The dialects differ in three small things, class attributes of each store: the placeholder
(``?`` and ``%s``; statements here are written with ``?``), the two-argument maximum (``max`` and
``greatest``) and the column that keeps conversants in the order they came (``rowid`` and
``ord``). Times are stored as text in SQLite and ``timestamptz`` in PostgreSQL: each store says
how a time goes in (:meth:`SQLRecorder._stamp`) and comes out (:meth:`SQLRecorder._time`).

A failure of the storage itself (the disk, the database server, a value the engine cannot store)
leaves every public method as a :class:`RecordsError`: the host catches that one error and the
conversation goes on unrecorded.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from gateway.records.base import check_retention
from gateway.records.errors import RecordsError
from gateway.records.model import ConversationInfo, Holder, Record, RecordKind, StoredConversation
from gateway.records.paths import safe_name


class Cursor(Protocol):
    """What both drivers' cursors give back."""

    def fetchone(self) -> Any:
        """The next row, or None."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""


class Connection(Protocol):
    """What both drivers' connections do: run one statement with its parameters."""

    def execute(self, query: Any, params: Any = ..., /) -> Cursor:
        """Run ``query`` with ``params``."""


#: Reads a stored clip for an ``audio`` record's body; None when there is none.
ClipReader = Callable[[dict[str, Any]], bytes | None]


#: How a store keeps a time: SQLite as fixed-width text, PostgreSQL as a timestamptz.
Stamp = TypeVar("Stamp")


class SQLRecorder(ABC, Generic[Stamp]):
    """A :class:`~gateway.records.base.Recorder` over SQL tables; a store supplies its
    connections, its dialect and its clips."""

    #: The driver's placeholder; statements below are written with ``?``.
    placeholder: ClassVar[str] = "?"
    #: The SQL function of the larger of two values.
    greatest: ClassVar[str] = "max"
    #: The column of ``conversants`` that orders them as they came.
    arrival: ClassVar[str] = "rowid"

    #: Days a conversation is kept after its last record (``None``: forever).
    retention_days: float | None

    def __init__(self, retention_days: float | None) -> None:
        check_retention(retention_days)
        self.retention_days = retention_days

    # ------------------------------------------------------------------ what a store supplies
    @property
    @abstractmethod
    def location(self) -> str:
        """Where the records are, for messages."""

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Connection]:
        """A connection to read with; storage failures inside leave as :class:`RecordsError`."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Connection]:
        """One transaction; storage failures inside roll it back and leave as
        :class:`RecordsError`."""

    @staticmethod
    @abstractmethod
    def _stamp(at: datetime) -> Stamp:
        """``at`` as the store keeps a time (in UTC)."""

    @staticmethod
    @abstractmethod
    def _time(value: Stamp) -> datetime:
        """A stored time back as a datetime."""

    @abstractmethod
    def _clip_reader(self, db: Connection, conversation_id: str) -> ClipReader:
        """How to read the clips of one conversation's ``audio`` records (``db`` is open)."""

    @abstractmethod
    def _envelope(
        self, conversation_id: str, direction: str, peer: str, envelope: dict[str, Any], at: datetime
    ) -> None:
        """Store one envelope record (and index its utterances, note ``peer``)."""

    @abstractmethod
    def _purge(self, cutoff: Any) -> list[str]:
        """Delete the conversations last updated before ``cutoff`` (a stamp); their ids."""

    # ------------------------------------------------------------------ statements
    def _sql(self, query: str) -> str:
        """``query`` (written with ``?``) in the driver's placeholder."""
        return query if self.placeholder == "?" else query.replace("?", self.placeholder)

    def _one(self, db: Connection, query: str, *params: Any) -> Any:
        """The first row ``query`` (written with ``?``) finds, or None."""
        return db.execute(self._sql(query), params).fetchone()

    def _ensure(self, db: Connection, conversation_id: str, at: datetime) -> str:
        """Create the conversation if this is the first we hear of it; mark it updated at
        ``at``. Returns the name of its audio folder."""
        stamp = self._stamp(at)
        folder = safe_name(conversation_id)
        db.execute(
            self._sql(
                "INSERT INTO conversations (id, started_at, updated_at, folder) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET updated_at = "
                f"{self.greatest}(conversations.updated_at, excluded.updated_at)"
            ),
            (conversation_id, stamp, stamp, folder),
        )
        return folder

    def _insert(
        self,
        db: Connection,
        conversation_id: str,
        at: datetime,
        kind: RecordKind,
        direction: str | None,
        peer: str | None,
        body: dict[str, Any],
    ) -> Cursor:
        """Append one record; returns the driver's cursor (SQLite's knows the new ``seq``)."""
        # A body is stored as the JSON text written (not jsonb, which reorders keys), so both
        # stores give back byte-identical records and the exports match.
        return db.execute(
            self._sql(
                "INSERT INTO records (conversation_id, at, kind, direction, peer, body) "
                "VALUES (?, ?, ?, ?, ?, ?)"
            ),
            (
                conversation_id,
                self._stamp(at),
                kind,
                direction,
                peer,
                json.dumps(body, allow_nan=False),
            ),
        )

    def _add_conversant(
        self, db: Connection, conversation_id: str, speaker_uri: str, name: Any = None
    ) -> None:
        """Note a conversant; a name given later replaces none, never the other way round."""
        db.execute(
            self._sql(
                "INSERT INTO conversants (conversation_id, speaker_uri, name) VALUES (?, ?, ?) "
                "ON CONFLICT (conversation_id, speaker_uri) DO UPDATE "
                "SET name = coalesce(nullif(excluded.name, ''), conversants.name)"
            ),
            (conversation_id, speaker_uri, name if isinstance(name, str) else ""),
        )

    # ------------------------------------------------------------------ writing (host side)
    def conversation_started(
        self, conversation_id: str, *, at: datetime, title: str = "", user_speaker_uri: str = ""
    ) -> None:
        """Record the start of a conversation (again: updates its title and person)."""
        with self._write() as db:
            self._ensure(db, conversation_id, at)
            db.execute(
                self._sql("UPDATE conversations SET title = ?, user_speaker_uri = ? WHERE id = ?"),
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
        self._envelope(conversation_id, direction, peer, envelope, at)

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
        with self._write() as db:
            self._ensure(db, conversation_id, at)
            self._insert(db, conversation_id, at, "floor", None, None, body)
            for ident in conversants:
                uri = ident.get("speakerUri")
                if isinstance(uri, str) and uri:
                    self._add_conversant(db, conversation_id, uri, ident.get("conversationalName"))

    def heard(self, conversation_id: str, *, data: dict[str, Any], at: datetime) -> None:
        """See :meth:`Recorder.heard`."""
        with self._write() as db:
            self._ensure(db, conversation_id, at)
            self._insert(db, conversation_id, at, "heard", None, None, dict(data))

    def conversation_ended(
        self, conversation_id: str, *, at: datetime, status: str = "completed"
    ) -> None:
        """Record the end of a conversation; ``status`` is ``"completed"`` or why it stopped."""
        with self._write() as db:
            self._ensure(db, conversation_id, at)
            db.execute(
                self._sql("UPDATE conversations SET ended_at = ?, status = ? WHERE id = ?"),
                (self._stamp(at), status, conversation_id),
            )

    def hold(self, conversation_id: str, *, node: str, token_digest: str | None = None) -> None:
        """Note the node holding the conversation (and the digest of its rejoin token)."""
        with self._write() as db:
            self._ensure(db, conversation_id, datetime.now(UTC))
            db.execute(
                self._sql(
                    "UPDATE conversations SET node = ?, token_digest = coalesce(?, token_digest) "
                    "WHERE id = ?"
                ),
                (node, token_digest, conversation_id),
            )

    # ------------------------------------------------------------------ reading (CLI, page)
    def holder(self, conversation_id: str) -> Holder | None:
        """Who holds the conversation, its token digest and whether it ended; None if unknown."""
        with self._reading() as db:
            row = self._one(
                db,
                "SELECT token_digest, node, updated_at, ended_at FROM conversations WHERE id = ?",
                conversation_id,
            )
        if row is None:
            return None
        digest, node, updated, ended = row
        return Holder(digest, node, self._time(updated), self._time(ended) if ended else None)

    def list_conversations(self) -> list[ConversationInfo]:
        """Every conversation, most recent first."""
        with self._reading() as db:
            rows = db.execute(
                f"SELECT id FROM conversations ORDER BY started_at DESC, {self.arrival} DESC"
            ).fetchall()
        return [info for (cid,) in rows if (info := self._info(cid)) is not None]

    def get_conversation(
        self, conversation_id: str, *, with_audio: bool = False
    ) -> StoredConversation:
        """A conversation with all its records in order; clips read too when ``with_audio``.

        Raises :class:`RecordsError` when there is no such conversation.
        """
        info = self._info(conversation_id)
        if info is None:
            raise RecordsError(
                f"no conversation {conversation_id!r} in {self.location}; "
                "`python -m gateway history list` shows the ones there are"
            )
        records = []
        with self._reading() as db:
            clip = self._clip_reader(db, conversation_id) if with_audio else None
            for seq, at, kind, direction, peer, body in db.execute(
                self._sql(
                    "SELECT seq, at, kind, direction, peer, body FROM records "
                    "WHERE conversation_id = ? ORDER BY seq"
                ),
                (conversation_id,),
            ).fetchall():
                data = json.loads(body)
                audio = clip(data) if clip is not None and kind == "audio" else None
                records.append(Record(seq, self._time(at), kind, direction, peer, data, audio))
        return StoredConversation(info, records)

    def purge_expired(self, now: datetime) -> list[str]:
        """Delete the conversations idle for longer than the retention; return their ids."""
        if self.retention_days is None:
            return []
        return self._purge(self._stamp(now - timedelta(days=self.retention_days)))

    def _info(self, conversation_id: str) -> ConversationInfo | None:
        with self._reading() as db:
            row = self._one(
                db,
                "SELECT started_at, updated_at, ended_at, status, title, user_speaker_uri "
                "FROM conversations WHERE id = ?",
                conversation_id,
            )
            if row is None:
                return None
            started, updated, ended, status, title, user = row
            count, first = self._one(
                db,
                "SELECT count(*), (SELECT snippet FROM utterances WHERE conversation_id = ? "
                "AND snippet != '' ORDER BY seq LIMIT 1) FROM utterances WHERE conversation_id = ?",
                conversation_id,
                conversation_id,
            )
            conversants = dict(
                db.execute(
                    self._sql(
                        "SELECT speaker_uri, name FROM conversants WHERE conversation_id = ? "
                        f"ORDER BY {self.arrival}"
                    ),
                    (conversation_id,),
                ).fetchall()
            )
        return ConversationInfo(
            id=conversation_id,
            started_at=self._time(started),
            updated_at=self._time(updated),
            ended_at=self._time(ended) if ended else None,
            status=status,
            title=title,
            user_speaker_uri=user,
            first_words=first or "",
            message_count=count,
            conversants=conversants,
        )
