"""A continuation survives a restart (issue 38, item 3, the person's path): against a real
``serve`` the person says "Turn on the lights." | 500 ms | "in the kitchen please." over the
WebSocket, the gateway is killed and started again on the same records, and the page that
rejoins is drawn one bubble with the whole request and the parrot's one answer to it — not the
first part and then the whole. SQLite and PostgreSQL (the records are what the new process
reads; OFP's envelopes stay as they were sent)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from gateway.records import open_recorder
from gateway.testing.cluster import rejoin
from gateway.testing.overlap import say_in_parts, speech
from gateway.testing.page import Page
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served, free_port, spawn
from gateway.testing.speech import normalise

pytestmark = pytest.mark.slow


def _serve(data: str, log: Path) -> Served:
    port = free_port()
    args = ["-v", "serve", "--port", str(port), "--data", data, *PARROT_ON_LOOPBACK]
    return spawn(args, log, port)


@pytest.fixture(params=["sqlite", "postgresql"])
def records(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "data")


async def test_a_rejoin_after_a_restart_shows_the_whole_request_once(records: str, tmp_path):
    served = _serve(records, tmp_path / "serve-1.log")
    try:
        page = await Page.open(served.ws, transport="ws")
        trial = await say_in_parts(
            served.ws,
            speech("Turn on the lights.", "piper"),
            speech("in the kitchen please.", "piper"),
            page=page,
        )
        first, whole = trial.transcripts  # the first part was sent, then replaced
        assert whole["replaces"] == first["id"], trial
        served.proc.send_signal(signal.SIGKILL)
        served.proc.wait(10)
        await page.close()
    finally:
        served.stop()
    served = _serve(records, tmp_path / "serve-2.log")
    try:
        again, _ = await rejoin(served.ws, page)
        try:
            assert again.welcome["rejoined"] is True
            history = again.welcome["history"]
        finally:
            await again.close()
    finally:
        served.stop()
    said = [e for e in history if e["type"] == "transcript"]
    answers = [e["text"] for e in history if e["type"] == "utterance"]
    [shown] = said
    assert shown["id"] == whole["id"] and shown["text"] == whole["text"], history
    assert {"lights", "kitchen"} <= set(normalise(shown["text"])), history
    # The parrot's greeting and its one answer, to the whole request.
    [answer] = [a for a in answers if "lights" in normalise(a)]
    assert "kitchen" in normalise(answer), history
    # The record keeps both utterances as sent, and says which replaced which.
    recorder = open_recorder(records)
    try:
        stored = recorder.get_conversation(page.welcome["conversationId"])
    finally:
        recorder.close()
    [note] = [r.data for r in stored.records if r.kind == "heard"]
    assert (note["outcome"], note["utterance"], note["by"]) == (
        "replaced",
        first["id"],
        whole["id"],
    )
    person = stored.info.user_speaker_uri
    sent = [
        event["parameters"]["dialogEvent"]
        for r in stored.records
        if r.kind == "envelope" and r.peer == person and r.direction == "in"
        for event in r.data["openFloor"]["events"]
        if event["eventType"] == "utterance"
    ]
    assert [de["id"] for de in sent] == [first["id"], whole["id"]]
    assert sent[1]["previousId"] == first["id"]  # the next utterance, as OFP has it
