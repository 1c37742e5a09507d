"""Records that survive their store failing: writes wait in a bounded buffer until it recovers.

A SQLite file on a full or read-only disk, or a PostgreSQL server that went away, makes every
write raise :class:`~gateway.records.errors.RecordsError`. Before this wrapper each such write was
lost (and logged with a traceback, once per envelope): in a measured 10 s of a full disk while six
people talked, 29 utterances the people saw acknowledged were never recorded. Now:

* the first failed write opens an **episode**: the write and every one after it wait, in order,
  in a buffer (:class:`KeptRecords`), and the log says so once;
* :meth:`KeptRecords.flush` (called every :data:`RETRY_S` by the server, and before a write once
  that much time has passed) writes the buffer out in order, stopping at the first failure; when
  it is empty the episode ends, and the log says how many writes waited;
* the buffer is bounded (:data:`MAX_PENDING` writes and :data:`MAX_PENDING_BYTES`): past the bound
  new writes are dropped and counted, and the state says ``dropping`` so the people can be told
  that their words are not being kept;
* ``listener`` hears each change of state (``ok``, ``failing``, ``dropping``) to tell the people;
  ``/readyz`` and ``/metrics`` read :meth:`KeptRecords.health`.

The buffer is memory: a gateway killed during an episode loses what it held (the store itself is
what survives a kill). A retried write the store had in fact committed before failing (a lost
reply from PostgreSQL) would be kept twice; the stores' writes are single statements or
transactions, so that takes a connection lost in the instant between commit and answer.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from gateway.records.base import Recorder
from gateway.records.errors import RecordsError
from gateway.records.model import ConversationInfo, Holder, StoredConversation

log = logging.getLogger(__name__)

#: Writes kept while the store fails. A person's turn makes about ten (their envelope in, one out
#: per agent, the agents' replies in and out, a clip, floor changes): 20 000 writes are about
#: 2 000 turns, several minutes of twelve people talking.
MAX_PENDING = 20_000
#: Bytes kept while the store fails (envelopes as JSON, clips as WAV): a clip is 32 KB a second of
#: speech, so this holds about 30 minutes of people's voices, or far more text.
MAX_PENDING_BYTES = 64 * 1024 * 1024
#: Seconds between attempts to write the buffer out while the store fails: a failing SQLite write
#: costs microseconds, a PostgreSQL one up to its call timeout (postgres.CALL_TIMEOUT_S), so a
#: retry a second keeps an outage from stalling the event loop more than once a second.
RETRY_S = 1.0

RecordsState = Literal["ok", "failing", "dropping"]


@dataclass(frozen=True)
class RecordsHealth:
    """How the records are doing, for ``/readyz``, ``/metrics`` and the people."""

    state: RecordsState
    #: Writes waiting for the store.
    pending: int
    #: Writes lost since start because the buffer was full.
    dropped: int
    #: Episodes of failure since start.
    episodes: int
    #: Why the store last failed (empty when it never did).
    error: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form ``/readyz`` shows."""
        return {
            "state": self.state,
            "pending": self.pending,
            "dropped": self.dropped,
            "episodes": self.episodes,
        }


@dataclass(frozen=True)
class _Write:
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    size: int


def _size(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    if method == "audio":
        return len(args[2]) + 256
    if method == "envelope":
        return len(json.dumps(kwargs.get("envelope"), default=str)) + 128
    return 256


class KeptRecords:
    """A :class:`~gateway.records.base.Recorder` whose writes outlive the store failing.

    Reads pass through (and may raise :class:`RecordsError` while the store fails). Use from one
    thread (the event loop), like the store it wraps. ``clock`` is for tests.
    """

    def __init__(
        self,
        store: Recorder,
        *,
        max_pending: int = MAX_PENDING,
        max_bytes: int = MAX_PENDING_BYTES,
        retry_s: float = RETRY_S,
        listener: Callable[[RecordsHealth], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.max_pending = max_pending
        self.max_bytes = max_bytes
        self.retry_s = retry_s
        self.listener = listener
        self._clock = clock
        # Bounded by max_pending and max_bytes, checked in _keep (a deque's maxlen would drop
        # the oldest write silently; the newest is dropped instead, and counted).
        self._pending: deque[_Write] = deque()
        self._bytes = 0
        self._dropped = 0
        self._episodes = 0
        self._error = ""
        self._state: RecordsState = "ok"
        self._last_try = 0.0

    # ------------------------------------------------------------------ the Recorder protocol
    @property
    def retention_days(self) -> float | None:
        """The store's retention."""
        return self.store.retention_days

    @property
    def shared(self) -> bool:
        """Whether the store is shared by several nodes."""
        return self.store.shared

    @property
    def location(self) -> str:
        """The store's location, for messages."""
        return self.store.location

    def conversation_started(
        self, conversation_id: str, *, at: datetime, title: str = "", user_speaker_uri: str = ""
    ) -> None:
        """See :meth:`Recorder.conversation_started`; kept while the store fails."""
        self._write(
            "conversation_started",
            (conversation_id,),
            {"at": at, "title": title, "user_speaker_uri": user_speaker_uri},
        )

    def envelope(
        self,
        conversation_id: str,
        *,
        direction: str,
        peer: str,
        envelope: dict[str, Any],
        at: datetime,
    ) -> None:
        """See :meth:`Recorder.envelope`; kept while the store fails."""
        self._write(
            "envelope",
            (conversation_id,),
            {"direction": direction, "peer": peer, "envelope": envelope, "at": at},
        )

    def floor_changed(
        self,
        conversation_id: str,
        *,
        conversants: list[dict[str, Any]],
        floor_granted: list[str],
        convener: str | None,
        at: datetime,
    ) -> None:
        """See :meth:`Recorder.floor_changed`; kept while the store fails."""
        self._write(
            "floor_changed",
            (conversation_id,),
            {
                "conversants": conversants,
                "floor_granted": list(floor_granted),
                "convener": convener,
                "at": at,
            },
        )

    def heard(self, conversation_id: str, *, data: dict[str, Any], at: datetime) -> None:
        """See :meth:`Recorder.heard`; kept while the store fails."""
        self._write("heard", (conversation_id,), {"data": data, "at": at})

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> object:
        """See :meth:`Recorder.audio`; kept while the store fails (stamped now, not when
        written out)."""
        return self._write(
            "audio", (conversation_id, dialog_event_id, wav), {"at": at or datetime.now(UTC)}
        )

    def conversation_ended(
        self, conversation_id: str, *, at: datetime, status: str = "completed"
    ) -> None:
        """See :meth:`Recorder.conversation_ended`; kept while the store fails."""
        self._write("conversation_ended", (conversation_id,), {"at": at, "status": status})

    def hold(self, conversation_id: str, *, node: str, token_digest: str | None = None) -> None:
        """See :meth:`Recorder.hold`; kept while the store fails."""
        self._write("hold", (conversation_id,), {"node": node, "token_digest": token_digest})

    def holder(self, conversation_id: str) -> Holder | None:
        """See :meth:`Recorder.holder`."""
        return self.store.holder(conversation_id)

    def clip(self, conversation_id: str, dialog_event_id: str) -> bytes | None:
        """See :meth:`Recorder.clip`: a clip still waiting in the buffer is served from it."""
        for w in reversed(self._pending):
            if w.method == "audio" and w.args[:2] == (conversation_id, dialog_event_id):
                return bytes(w.args[2])
        return self.store.clip(conversation_id, dialog_event_id)

    def list_conversations(self) -> list[ConversationInfo]:
        """See :meth:`Recorder.list_conversations`."""
        return self.store.list_conversations()

    def get_conversation(
        self, conversation_id: str, *, with_audio: bool = False
    ) -> StoredConversation:
        """See :meth:`Recorder.get_conversation` (without what still waits in the buffer)."""
        return self.store.get_conversation(conversation_id, with_audio=with_audio)

    def delete_conversation(self, conversation_id: str) -> bool:
        """See :meth:`Recorder.delete_conversation`."""
        return self.store.delete_conversation(conversation_id)

    def purge_expired(self, now: datetime) -> list[str]:
        """See :meth:`Recorder.purge_expired`."""
        return self.store.purge_expired(now)

    def close(self) -> None:
        """Write out what waits (one last try), then close the store; what could not be written
        is logged as lost."""
        self.flush(force=True)
        if self._pending:
            log.error(
                "records: %d writes could not be kept before closing (%s)",
                len(self._pending),
                self._error,
            )
        self.store.close()

    # ------------------------------------------------------------------ the buffer
    def health(self) -> RecordsHealth:
        """The state now."""
        return RecordsHealth(
            self._state, len(self._pending), self._dropped, self._episodes, self._error
        )

    def flush(self, *, force: bool = False) -> bool:
        """Write out what waits, in order, stopping at the first failure; True when nothing waits.

        Tries at most once every ``retry_s`` unless ``force``."""
        if not self._pending:
            return True
        now = self._clock()
        if not force and now - self._last_try < self.retry_s:
            return False
        self._last_try = now
        written = 0
        while self._pending:
            w = self._pending[0]
            try:
                getattr(self.store, w.method)(*w.args, **w.kwargs)
            except RecordsError as exc:
                self._error = str(exc)
                if written:
                    log.info(
                        "records: %d waiting writes kept, %d still wait",
                        written,
                        len(self._pending),
                    )
                return False
            self._pending.popleft()
            self._bytes -= w.size
            written += 1
        log.warning(
            "records: the store %s recovered; every waiting write is kept%s",
            self.store.location,
            f" ({self._dropped} were dropped while the buffer was full)" if self._dropped else "",
        )
        self._set("ok")
        return True

    def _write(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> object:
        if self._pending and not self.flush():
            self._keep(method, args, kwargs)
            return None
        try:
            return getattr(self.store, method)(*args, **kwargs)
        except RecordsError as exc:
            self._error = str(exc)
            self._last_try = self._clock()
            self._episodes += 1
            log.warning(
                "records: the store %s is failing (%s); writes wait in memory (up to %d, %d MB) "
                "until it recovers",
                self.store.location,
                exc,
                self.max_pending,
                self.max_bytes // 2**20,
            )
            self._keep(method, args, kwargs)
            return None

    def _keep(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        size = _size(method, args, kwargs)
        if len(self._pending) >= self.max_pending or self._bytes + size > self.max_bytes:
            self._dropped += 1
            if self._state != "dropping":
                log.error(
                    "records: the store %s is still failing and %d writes wait; new ones are "
                    "dropped until it recovers",
                    self.store.location,
                    len(self._pending),
                )
                self._set("dropping")
            return
        self._pending.append(_Write(method, args, kwargs, size))
        self._bytes += size
        if self._state == "ok":
            self._set("failing")

    def _set(self, state: RecordsState) -> None:
        if state == self._state:
            return
        self._state = state
        if self.listener is not None:
            try:
                self.listener(self.health())
            except Exception:  # the caller's callback: its bug must not lose a record
                log.exception("records: the health listener failed")
