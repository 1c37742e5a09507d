"""Run as a script by test_crash.py: records envelopes forever, printing each one's number once
``Recorder.envelope`` has returned, until it is killed."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

from gateway.ofp import Conversation, Envelope, Event, EventType, Parameters, Sender, text_event
from gateway.records import Recorder

AGENT = "tag:crash.test,2025:agent"


def main(data_dir: str) -> None:
    recorder = Recorder(Path(data_dir))
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
