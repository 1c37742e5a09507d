"""A realistic recorded conversation, and validators for the official export schemas.

The conversation is what the host would record for: a person and two agents (Bob is convener),
invites and acceptances, an utterance with an inline base64 WAV ``audio`` feature (and its clip),
one with a ``valueUrl`` audio, a private utterance, revoke / request / grant / yield floor, an
announcement by the floor manager itself, a delivery in the OVON 0.9 form, an envelope an agent
garbled, floor changes, byes, and the end.
"""

from __future__ import annotations

import argparse
import base64
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from gateway.audio import wav_bytes
from gateway.ofp import (
    Conversant,
    Conversation,
    DialogEvent,
    Envelope,
    Event,
    EventType,
    Feature,
    Identification,
    Parameters,
    Sender,
    Span,
    To,
    Token,
    text_event,
    to_ovon,
)
from gateway.records import Recorder, open_recorder
from gateway.records.cli import add_commands

USER = Identification(
    speaker_uri="tag:gateway.test,2025:user", conversational_name="You", organization="test"
)
FLOOR = Identification(
    speaker_uri="tag:gateway.test,2025:floor", conversational_name="Floor", organization="test"
)
ALICE = Identification(
    speaker_uri="tag:alice.test,2025:agent",
    service_url="https://alice.test/ofp",
    conversational_name="Alice",
    organization="Alice Travel",
)
BOB = Identification(
    speaker_uri="tag:bob.test,2025:agent",
    service_url="https://bob.test/ofp",
    conversational_name="Bob",
    organization="Bob Hotels",
    open_floor_roles={"convener": True},
)
START = datetime(2025, 3, 1, 10, 0, 0, tzinfo=UTC)


def tone_wav(seconds: float = 0.25, hz: float = 440.0) -> bytes:
    """A short 16 kHz mono WAV of a sine tone."""
    t = np.arange(int(16000 * seconds)) / 16000
    pcm = (0.3 * 32767 * np.sin(2 * np.pi * hz * t)).astype(np.int16)
    return wav_bytes(pcm, 16000)


@dataclass
class Script:
    """What was recorded, for tests to compare the exports with."""

    conversation_id: str
    user_wav: bytes
    clip_only_wav: bytes
    utterances: list[DialogEvent] = field(default_factory=list)
    private: DialogEvent | None = None
    announcement: DialogEvent | None = None
    #: (direction, peer, wire dict) in recording order
    envelopes: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    floor_changes: int = 0


class _Writer:
    """Feeds a Recorder the way the host does, one step a second."""

    def __init__(self, recorder: Recorder, script: Script) -> None:
        self.recorder = recorder
        self.script = script
        self.clock = START
        self.members: list[Identification] = [USER]
        self.granted: list[str] = [USER.speaker_uri]
        self.convener: str | None = None

    def tick(self) -> datetime:
        self.clock += timedelta(seconds=1)
        return self.clock

    def conversation(self) -> Conversation:
        return Conversation(
            id=self.script.conversation_id,
            conversants=[Conversant(identification=m) for m in self.members],
            assigned_floor_roles={"convener": [self.convener] if self.convener else []},
            floor_granted=list(self.granted),
        )

    def send(
        self,
        sender: Identification,
        events: list[Event],
        to: list[Identification],
        *,
        ovon_for: Identification | None = None,
    ) -> None:
        """``sender`` sends ``events`` to the floor (unless it is the floor), which delivers them
        to each of ``to`` (in the OVON form to ``ovon_for``)."""
        env = Envelope(
            conversation=self.conversation(),
            sender=Sender(speaker_uri=sender.speaker_uri, service_url=sender.service_url or None),
            events=events,
        )
        if sender is not FLOOR:
            self.record("in", sender.speaker_uri, env.to_wire())
        for peer in to:
            wire = to_ovon(env) if peer is ovon_for else env.to_wire()
            self.record("out", peer.speaker_uri, wire)

    def record(self, direction: str, peer: str, wire: dict[str, Any]) -> None:
        self.recorder.envelope(
            self.script.conversation_id,
            direction=direction,
            peer=peer,
            envelope=wire,
            at=self.tick(),
        )
        self.script.envelopes.append((direction, peer, wire))

    def floor(self) -> None:
        self.recorder.floor_changed(
            self.script.conversation_id,
            conversants=[m.to_wire() for m in self.members],
            floor_granted=list(self.granted),
            convener=self.convener,
            at=self.tick(),
        )
        self.script.floor_changes += 1


def utterance(de: DialogEvent, to: To | None = None) -> Event:
    """An utterance event carrying ``de``."""
    return Event(event_type=EventType.UTTERANCE, to=to, parameters=Parameters(dialog_event=de))


def control(kind: EventType, to: Identification | None = None, reason: str | None = None) -> Event:
    """A floor-control event of ``kind``, to ``to`` if given."""
    target = To(speaker_uri=to.speaker_uri) if to is not None else None
    return Event(event_type=kind, to=target, reason=reason)


def record_conversation(
    recorder: Recorder, conversation_id: str, *, end_status: str | None = "completed"
) -> Script:
    """Record the whole conversation described in this module's docstring."""
    script = Script(conversation_id, user_wav=tone_wav(), clip_only_wav=tone_wav(0.1, 660.0))
    w = _Writer(recorder, script)
    recorder.conversation_started(
        conversation_id, at=START, title="Trip to Lisbon", user_speaker_uri=USER.speaker_uri
    )
    w.floor()

    for agent in (ALICE, BOB):
        invite = Event(event_type=EventType.INVITE, to=To(service_url=agent.service_url))
        w.send(USER, [invite], [agent])
        w.members.append(agent)
        w.granted.append(agent.speaker_uri)
        if agent is BOB:
            w.convener = BOB.speaker_uri
        w.floor()
        others = [m for m in w.members if m is not agent]
        w.send(agent, [control(EventType.ACCEPT_INVITE)], others)

    hello = DialogEvent(
        speaker_uri=USER.speaker_uri,
        span=Span(start_time="2025-03-01T10:00:09.500Z"),
        features={
            "text": Feature(mime_type="text/plain", tokens=[Token(value="Plan a trip to Lisbon")]),
            "audio": Feature(
                mime_type="audio/wav",
                tokens=[Token(value=base64.b64encode(script.user_wav).decode("ascii"))],
            ),
        },
    )
    recorder.audio(conversation_id, hello.id, script.user_wav, at=w.tick())
    w.send(USER, [utterance(hello)], [ALICE, BOB], ovon_for=BOB)

    three_days = DialogEvent(
        speaker_uri=ALICE.speaker_uri,
        features={
            "text": Feature(mime_type="text/plain", tokens=[Token(value="Three days is right.")]),
            "audio": Feature(
                mime_type="audio/wav", tokens=[Token(value_url="https://alice.test/clips/1.wav")]
            ),
            "ssml": Feature(
                mime_type="application/ssml+xml",
                tokens=[Token(value="<speak>Three days is right.</speak>")],
            ),
        },
    )
    w.send(ALICE, [utterance(three_days)], [USER, BOB])

    psst = text_event(BOB.speaker_uri, "Psst: Alice's hotel is pricey.")
    w.send(BOB, [utterance(psst, To(speaker_uri=USER.speaker_uri, private=True))], [USER])

    w.send(BOB, [control(EventType.REVOKE_FLOOR, ALICE, "@timedOut")], [ALICE])
    w.granted.remove(ALICE.speaker_uri)
    w.floor()
    w.send(ALICE, [control(EventType.REQUEST_FLOOR, reason="to add a museum")], [BOB])
    w.send(BOB, [control(EventType.GRANT_FLOOR, ALICE)], [ALICE])
    w.granted.append(ALICE.speaker_uri)
    w.floor()
    w.send(ALICE, [control(EventType.YIELD_FLOOR, reason="@brief")], [USER, BOB])
    w.granted.remove(ALICE.speaker_uri)
    w.floor()

    # Said with no audio feature; only the recorded clip carries the sound.
    thanks = text_event(USER.speaker_uri, "Thanks, book it.")
    recorder.audio(conversation_id, thanks.id, script.clip_only_wav, at=w.tick())
    w.send(USER, [utterance(thanks)], [ALICE, BOB])

    # An agent sent something that is not an envelope; it is kept verbatim.
    w.record("in", ALICE.speaker_uri, {"openFloor": {"events": "not a list"}})

    w.send(BOB, [control(EventType.BYE)], [USER, ALICE])
    w.members.remove(BOB)
    w.granted.remove(BOB.speaker_uri)
    w.convener = None
    w.floor()

    announcement = text_event(FLOOR.speaker_uri, "Bob has left the conversation.")
    w.send(FLOOR, [utterance(announcement)], [USER, ALICE])

    script.utterances = [hello, three_days, psst, thanks, announcement]
    script.private = psst
    script.announcement = announcement
    if end_status is not None:
        recorder.conversation_ended(conversation_id, at=w.tick(), status=end_status)
    return script


@dataclass
class Store:
    """Where a test's records are: ``kind`` is ``sqlite`` (``target`` a folder) or
    ``postgresql`` (``target`` a database URL); :meth:`open` opens (or reopens) it."""

    kind: str
    target: str

    def open(self, **options: Any) -> Recorder:
        """A recorder on this store."""
        return open_recorder(self.target, **options)


#: Every test taking ``store`` or ``recorder`` runs against both stores.
STORE_KINDS = ["sqlite", "postgresql"]


def load_json(path: Path) -> dict[str, Any]:
    """A JSON file (a vendored schema)."""
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def schema_errors(validator: Any, doc: dict[str, Any]) -> list[str]:
    """Every schema violation in ``doc``, located, for a readable assertion message."""
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def run(*argv: str) -> int:
    """``history`` / ``export`` with ``argv``, on a bare parser, in this process; the exit code."""
    parser = argparse.ArgumentParser(prog="gateway")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code
