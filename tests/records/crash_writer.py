"""Run as a script by test_crash.py (with a data folder or a database URL): records envelopes forever, printing each one's number once
``Recorder.envelope`` has returned, until it is killed."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from gateway.ofp import Conversation, Envelope, Event, EventType, Parameters, Sender, text_event
from gateway.records import open_recorder

AGENT = "tag:crash.test,2025:agent"


def main(target: str) -> None:
    recorder = open_recorder(target)  # a data folder or a postgresql:// URL
    recorder.conversation_started("crash", at=datetime.now(UTC), title="crash test")
    n = 0
    while True:
        de = text_event(AGENT, f"message {n}")
        envelope = Envelope(
            conversation=Conversation(id="crash"),
            sender=Sender(speaker_uri=AGENT),
            events=[Event(event_type=EventType.UTTERANCE, parameters=Parameters(dialog_event=de))],
        )
        recorder.envelope(
            "crash", direction="in", peer=AGENT, envelope=envelope.to_wire(), at=datetime.now(UTC)
        )
        print(n, flush=True)
        n += 1


if __name__ == "__main__":
    main(sys.argv[1])
