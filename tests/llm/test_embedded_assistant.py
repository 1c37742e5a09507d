"""The assistant on the real embedded model (xllamacpp's llama.cpp, SmolLM2-135M), the way a
person reaches it: ``talk --text``, ``talk --wav``, and a reply streaming in process.

SmolLM2's answers vary with the machine: these tests assert that an answer arrives, is
non-empty speakable text and (in process) streamed, never what it says.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.agents.builtin import Assistant
from gateway.agents.builtin.assistant import APOLOGY, APOLOGY_CUT
from gateway.agents.streaming import ReplyStream, reply_streams
from gateway.audio import SAMPLE_RATE, read_wav, write_wav
from gateway.ofp import EventType
from gateway.testing.speech import espeak_wav, silence
from tests.agents.helpers import utterance

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
MARKUP = set("*#`<>[]{}|_~")


def talk(*args: str, cwd: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "gateway", "talk", "--no-record", "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assistant_answer(doc: dict) -> str:
    said = [line["text"] for line in doc["lines"] if line["speaker"] == "Assistant"]
    answers = [s for s in said if not s.startswith("Hi, I'm")]
    assert answers, doc["lines"]
    return answers[-1]


def speakable(text: str) -> None:
    assert text.strip() and any(c.isalpha() for c in text)
    assert not MARKUP & set(text), text
    assert APOLOGY not in text and APOLOGY_CUT not in text


def test_a_typed_question_is_answered_by_the_embedded_model(tmp_path: Path) -> None:
    doc = talk(
        "--text", "What should I pack for a weekend in Lisbon?",
        "--agent", "builtin:assistant",
        cwd=tmp_path,
    )  # fmt: skip
    assert doc["completed"] is True
    speakable(assistant_answer(doc))


def test_a_spoken_question_is_answered_aloud(tmp_path: Path) -> None:
    wav = tmp_path / "asked.wav"
    speech = espeak_wav("What is the capital of France?")
    write_wav(wav, np.concatenate([silence(300), speech, silence(300)]), SAMPLE_RATE)
    out = tmp_path / "reply.wav"
    doc = talk(
        "--wav", str(wav), "--fast", "--out", str(out), "--agent", "builtin:assistant",
        cwd=tmp_path,
    )  # fmt: skip
    assert "france" in doc["transcript"].lower()
    speakable(assistant_answer(doc))
    pcm, rate = read_wav(out)
    assert len(pcm) > rate // 2 and np.abs(pcm).max() > 1000  # its answer, spoken
    t = doc["timingsMs"]
    assert all(t[k] is not None for k in ("stt", "agent", "ttsFirstAudio", "total"))


def test_in_process_the_answer_arrives_as_separate_sentences() -> None:
    async def main() -> tuple[list[str], str]:
        agent = Assistant()
        streams: list[ReplyStream] = []

        def opener(event_id: str, speaker_uri: str, speaker: str) -> ReplyStream:
            streams.append(ReplyStream(event_id, speaker_uri, speaker))
            return streams[-1]

        token = reply_streams.set(opener)
        try:
            reply = await agent.handle(
                utterance("Describe the city of Paris in a few sentences for a visitor.")
            )
        finally:
            reply_streams.reset(token)
            await agent.aclose()
        pieces = [s async for s in streams[0].sentences()] if streams else []
        (event,) = [e for e in reply.events if e.event_type is EventType.UTTERANCE]
        return pieces, event.dialog_event.text()

    pieces, whole = asyncio.run(main())
    assert len(pieces) >= 2, pieces  # streamed: several sentences, each handed over alone
    assert " ".join(pieces) == whole
    for piece in pieces:
        speakable(piece)
