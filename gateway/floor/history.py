"""The conversation so far, for the agents the person invites (OFP 1.1.0 §1.12 ``dialogHistory``).

The floor remembers the public utterances of the conversation (the newest
:attr:`DialogHistory.max_events`); the person's invites carry them, at most
:attr:`DialogHistory.max_bytes` of JSON (the newest kept), so a newcomer has context. The
person's voice (the ``audio`` feature of their utterances) goes with it only when the gateway
keeps audio (``serve --keep-audio``): a voice is personal.

Sans-I/O: the floor's host (gateway/floor/host.py) tells :class:`DialogHistory` every envelope's
events and asks it for the invites' history.
"""

from __future__ import annotations

import json
from collections import deque

from gateway.ofp import DialogEvent, Event, EventType


class DialogHistory:
    """One conversation's public utterances, newest last (see the module's docstring). The
    defaults are ``Limits.history_events`` and ``Limits.history_bytes``."""

    def __init__(self, max_events: int = 10, max_bytes: int = 32_000) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self._said: deque[DialogEvent] = deque(maxlen=max_events)

    def remember(self, events: list[Event]) -> None:
        """Events that went through the floor: its public utterances are kept."""
        for e in events:
            de = e.dialog_event
            if e.event_type is EventType.UTTERANCE and de is not None and not e.is_private:
                self._said.append(de)

    def recent(self, person: str, *, keep_audio: bool = False) -> list[DialogEvent]:
        """The last public utterances, oldest first, within :attr:`max_bytes`; the audio of the
        ``person``'s (a speaker URI) left out unless ``keep_audio``."""
        out: list[DialogEvent] = []
        size = 0
        for de in reversed(self._said):
            if de.speaker_uri == person and not keep_audio and "audio" in de.features:
                features = {k: v for k, v in de.features.items() if k != "audio"}
                de = de.model_copy(update={"features": features})
            size += len(json.dumps(de.wire(), ensure_ascii=False))
            if size > self.max_bytes:
                break
            out.append(de)
        return out[::-1]

    def given(self, event: Event, person: str, *, keep_audio: bool = False) -> Event:
        """``event`` (from the ``person``) with the conversation so far if it is an invite that
        carries no history of its own; any other event unchanged."""
        if event.event_type is not EventType.INVITE or event.parameters.dialog_history:
            return event
        history = self.recent(person, keep_audio=keep_audio)
        if not history:
            return event
        params = event.parameters.model_copy(update={"dialog_history": history})
        return event.model_copy(update={"parameters": params})
