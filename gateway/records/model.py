"""What the record stores hold and give back, whichever store it is (SQLite or PostgreSQL)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

#: How many characters of an utterance the listing keeps as "first words".
SNIPPET_CHARS = 80

RecordKind = Literal["envelope", "floor", "audio", "heard"]
Direction = Literal["in", "out"]


@dataclass(frozen=True, slots=True)
class Record:
    """One stored event of a conversation, in the order it happened.

    ``data`` is, by ``kind``: ``envelope`` — the wire dict as sent or received; ``floor`` —
    ``{"conversants": [identification…], "floorGranted": [uri…], "convener": uri | None}``;
    ``audio`` — ``{"dialogEventId", "file" (relative to the data folder), "bytes"}``;
    ``heard`` — what the person heard when it was not what was sent: an agent's reply stopped
    part-way (``{"outcome": "stopped", "reply": its dialog event id, "playedMs", "said": the
    words heard}``), or their own speech over an agent that was not a turn (``{"outcome":
    "backchannel" | "noise" | "echo", "text": its words, "reply", "playedMs"}``), or the first
    part of a request they went on with, replaced by the whole (``{"outcome": "replaced",
    "utterance": the part's dialog event id, "by": the whole's, "text": the part's words}``).
    ``audio`` holds the clip itself when the conversation was read ``with_audio``.
    """

    seq: int
    at: datetime
    kind: RecordKind
    direction: Direction | None
    peer: str | None
    data: dict[str, Any]
    audio: bytes | None = None


@dataclass(frozen=True, slots=True)
class ConversationInfo:
    """What the listing shows of a conversation.

    ``conversants`` maps every speaker URI the floor exchanged envelopes with (the person included)
    to its conversational name ("" when never told), in the order they appeared.
    """

    id: str
    started_at: datetime
    updated_at: datetime
    ended_at: datetime | None
    status: str
    title: str
    user_speaker_uri: str
    first_words: str
    message_count: int
    conversants: dict[str, str] = field(default_factory=dict)

    @property
    def agents(self) -> list[str]:
        """The speaker URIs of the conversants other than the person."""
        return [uri for uri in self.conversants if uri != self.user_speaker_uri]

    def name_of(self, speaker_uri: str) -> str:
        """A name to show for a speaker: its conversational name, else its URI."""
        return self.conversants.get(speaker_uri) or speaker_uri


@dataclass(frozen=True, slots=True)
class StoredConversation:
    """A conversation and all its records in order: what the exports are computed from."""

    info: ConversationInfo
    records: list[Record]


@dataclass(frozen=True, slots=True)
class Holder:
    """Who may resume a conversation, and where it is held now (see :meth:`Recorder.hold`).

    ``token_digest`` is the SHA-256 (hex) of the page's rejoin token: the token itself is never
    stored, so reading the database does not let anyone take a conversation over.
    """

    token_digest: str
    node: str
    updated_at: datetime
    ended_at: datetime | None
