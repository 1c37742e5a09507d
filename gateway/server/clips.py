"""The person's voice clips: kept in the records only when ``serve --keep-audio`` says so, and
held in memory just long enough for agents to fetch them by capability URL (``url`` mode).

:class:`VoiceRecords` sits between the sessions and the records store: every call goes through
unchanged except the two that carry the person's voice — :meth:`VoiceRecords.audio` (the clip)
and :meth:`VoiceRecords.envelope` (an inline ``audio`` feature in the person's utterance).
"""

from __future__ import annotations

import copy
import time
from collections import OrderedDict
from datetime import datetime
from pathlib import Path
from typing import Any

#: Speaker URIs of the people on this gateway start with this (see ``user_identity``).
PERSON_PREFIX = "tag:ofp-gateway.local,2025:user:"


class ClipShelf:
    """Recent clips in memory, each for ``ttl_s`` seconds, at most ``max_bytes`` in all (the
    oldest go first): the capability URLs of the ``url`` mode expire after ``ttl_s`` anyway."""

    def __init__(self, ttl_s: float, max_bytes: int = 64 * 1024 * 1024) -> None:
        self.ttl_s = ttl_s
        self.max_bytes = max_bytes
        self._clips: OrderedDict[tuple[str, str], tuple[float, bytes]] = OrderedDict()
        self._bytes = 0

    def put(self, conversation_id: str, event_id: str, wav: bytes) -> None:
        """Hold one clip."""
        self._expire()
        key = (conversation_id, event_id)
        old = self._clips.pop(key, None)
        if old is not None:
            self._bytes -= len(old[1])
        self._clips[key] = (time.monotonic() + self.ttl_s, wav)
        self._bytes += len(wav)
        while self._bytes > self.max_bytes and self._clips:
            _, (_, dropped) = self._clips.popitem(last=False)
            self._bytes -= len(dropped)

    def get(self, conversation_id: str, event_id: str) -> bytes | None:
        """A clip still held, or None."""
        self._expire()
        item = self._clips.get((conversation_id, event_id))
        return item[1] if item is not None else None

    def _expire(self) -> None:
        now = time.monotonic()
        while self._clips:
            key, (until, wav) = next(iter(self._clips.items()))
            if until > now:
                return
            del self._clips[key]
            self._bytes -= len(wav)


def without_person_audio(envelope: dict[str, Any]) -> dict[str, Any]:
    """``envelope`` (wire form, 1.1.0) without the inline ``audio`` of the person's utterances.

    Only inline values are the voice itself; a ``valueUrl`` is a short-lived capability and is
    kept as a reference. The original is not changed (it may be on its way to an agent)."""
    body = envelope.get("openFloor")
    if not isinstance(body, dict) or not isinstance(body.get("events"), list):
        return envelope
    out: dict[str, Any] | None = None
    for i, event in enumerate(body["events"]):
        de = (event.get("parameters") or {}).get("dialogEvent") if isinstance(event, dict) else None
        if not isinstance(de, dict) or not str(de.get("speakerUri", "")).startswith(PERSON_PREFIX):
            continue
        audio = (de.get("features") or {}).get("audio")
        tokens = audio.get("tokens") if isinstance(audio, dict) else None
        if not isinstance(tokens, list) or not any(
            isinstance(t, dict) and "value" in t for t in tokens
        ):
            continue
        if out is None:
            out = copy.deepcopy(envelope)
        features = out["openFloor"]["events"][i]["parameters"]["dialogEvent"]["features"]
        del features["audio"]
    return out if out is not None else envelope


class VoiceRecords:
    """The records store as the sessions see it, keeping the person's voice only if told to.

    ``keep_audio`` False: clips are never written and inline audio is cut from recorded
    envelopes (the transcript, words and timings are kept). ``shelf``: where clips wait for
    agents to fetch them (``url`` mode), or None.
    """

    def __init__(self, store: Any, *, keep_audio: bool, shelf: ClipShelf | None) -> None:
        self.store = store
        self.keep_audio = keep_audio
        self.shelf = shelf

    def audio(
        self, conversation_id: str, dialog_event_id: str, wav: bytes, *, at: datetime | None = None
    ) -> Path | None:
        """One utterance's clip: on the shelf for agents, in the records if kept."""
        if self.shelf is not None:
            self.shelf.put(conversation_id, dialog_event_id, wav)
        if self.keep_audio and self.store is not None:
            kept: Path | None = self.store.audio(conversation_id, dialog_event_id, wav, at=at)
            return kept
        return None

    def envelope(self, conversation_id: str, *, envelope: dict[str, Any], **kw: Any) -> None:
        """Record an envelope, without the person's inline voice unless it is kept."""
        if self.store is None:
            return
        if not self.keep_audio:
            envelope = without_person_audio(envelope)
        self.store.envelope(conversation_id, envelope=envelope, **kw)

    def floor_changed(self, conversation_id: str, **kw: Any) -> None:
        """Record a floor change (nothing without a store)."""
        if self.store is not None:
            self.store.floor_changed(conversation_id, **kw)

    def heard(self, conversation_id: str, **kw: Any) -> None:
        """Record what the person heard (nothing without a store)."""
        if self.store is not None:
            self.store.heard(conversation_id, **kw)

    def clip(self, conversation_id: str, dialog_event_id: str) -> bytes | None:
        """A clip from the shelf, else from the records."""
        held = self.shelf.get(conversation_id, dialog_event_id) if self.shelf else None
        if held is not None or self.store is None:
            return held
        clip: bytes | None = self.store.clip(conversation_id, dialog_event_id)
        return clip

    def __getattr__(self, name: str) -> Any:
        # Everything else (floor changes, reading…) is the store's own.
        return getattr(self.store, name)
