"""The one interface of the record stores, and what the stores share.

Two stores implement :class:`Recorder`: SQLite in a data folder (:mod:`gateway.records.store`,
the embedded default, one machine) and PostgreSQL (:mod:`gateway.records.postgres`, several
gateway nodes sharing one database). This module knows neither: which one ``--data`` names is
chosen by :func:`gateway.records.open.open_recorder`, so the stores import the interface and
never the other way round.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from gateway.ofp import EnvelopeError, EventType, parse_envelope
from gateway.records.errors import RecordsError
from gateway.records.model import (
    SNIPPET_CHARS,
    ConversationInfo,
    Holder,
    StoredConversation,
)


@runtime_checkable
class Recorder(Protocol):
    """Writes conversation records as they happen and reads them back.

    Every method is synchronous and called from the event loop: each write is one short
    transaction that is durable against the gateway process being killed once it returns.
    """

    #: Days a conversation is kept after its last record (``None``: forever).
    retention_days: float | None
    #: Whether other gateway nodes read and write the same records (and so can take a
    #: conversation up).
    shared: bool

    @property
    def location(self) -> str:
        """Where the records are, for messages (a folder, or a database URL without password)."""
        ...

    # ------------------------------------------------------------------ writing (host side)
    def conversation_started(
        self, conversation_id: str, *, at: datetime, title: str = "", user_speaker_uri: str = ""
    ) -> None:
        """Record the start of a conversation (again: updates its title and person)."""

    def envelope(
        self,
        conversation_id: str,
        *,
        direction: str,
        peer: str,
        envelope: dict[str, Any],
        at: datetime,
    ) -> None:
        """Record an envelope ``"in"`` to the floor from ``peer`` or ``"out"`` to ``peer``."""

    def floor_changed(
        self,
        conversation_id: str,
        *,
        conversants: list[dict[str, Any]],
        floor_granted: list[str],
        convener: str | None,
        at: datetime,
    ) -> None:
        """Record the floor's new state; ``conversants`` are identification dicts."""

    def heard(self, conversation_id: str, *, data: dict[str, Any], at: datetime) -> None:
        """Record what the person heard when it was not what was sent (a reply stopped
        part-way, speech over an agent that was not a turn, a request's first part replaced by
        the whole): ``data`` as :class:`Record` describes for ``heard``."""

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> object:
        """Store the clip of an utterance where every reader of this store can fetch it."""

    def conversation_ended(
        self, conversation_id: str, *, at: datetime, status: str = "completed"
    ) -> None:
        """Record the end of a conversation; ``status`` is ``"completed"`` or why it stopped."""

    def hold(self, conversation_id: str, *, node: str, token_digest: str | None = None) -> None:
        """Note that ``node`` holds the conversation now (and, when given, the digest of the
        token a page must show to rejoin it): what lets any node resume it."""

    def holder(self, conversation_id: str) -> Holder | None:
        """Who holds the conversation and how to check a rejoin token; None if unknown."""

    # ------------------------------------------------------------------ reading (CLI, page)
    def clip(self, conversation_id: str, dialog_event_id: str) -> bytes | None:
        """The stored WAV of one utterance, or None."""

    def list_conversations(self) -> list[ConversationInfo]:
        """Every conversation, most recent first."""

    def get_conversation(
        self, conversation_id: str, *, with_audio: bool = False
    ) -> StoredConversation:
        """A conversation with all its records in order; raises :class:`RecordsError` if none."""

    def delete_conversation(self, conversation_id: str) -> bool:
        """Remove a conversation, its records and its clips; False if there was none."""

    def purge_expired(self, now: datetime) -> list[str]:
        """Delete the conversations idle for longer than the retention; return their ids."""

    def close(self) -> None:
        """Release the store; the records stay."""


def token_digest(token: str) -> str:
    """What is stored of a rejoin token: its SHA-256 in hex."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def check_retention(retention_days: float | None) -> None:
    """Refuse a retention that would delete everything at once."""
    if retention_days is not None and retention_days <= 0:
        raise RecordsError(
            f"retention must be a positive number of days, not {retention_days}; "
            "leave it unset to keep records forever"
        )


def utterance_index(envelope: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(dialog event id, speaker URI, snippet)`` of each utterance in a wire envelope.

    The same utterance is recorded once in and once per recipient out; the stores index it once,
    by dialog event id, so the listing counts messages, not deliveries.
    """
    try:
        parsed = parse_envelope(envelope)
    except EnvelopeError:
        return []  # kept verbatim in records; there is nothing to index
    return [
        (e.dialog_event.id, e.dialog_event.speaker_uri, e.dialog_event.text()[:SNIPPET_CHARS])
        for e in parsed.events
        if e.event_type is EventType.UTTERANCE and e.dialog_event is not None
    ]
