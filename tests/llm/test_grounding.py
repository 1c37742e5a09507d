"""What grounds the assistant's answers (gateway/llm/grounding.py): the date, time and zone where
the person is, the agents on the floor, what the person said about themselves — in the request
the model receives (a recording stub), and on the real SmolLM2 for the clear cases."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from gateway.agents.builtin import Assistant
from gateway.llm.grounding import (
    MAX_GROUNDING_CHARS,
    Facts,
    acknowledgement,
    grounding,
    stated_facts,
)
from gateway.llm.settings import LlmSettings
from gateway.ofp import (
    Conversant,
    Conversation,
    Envelope,
    Event,
    EventType,
    Identification,
    Parameters,
    Sender,
    text_event,
)
from gateway.testing.openai_stub import openai_stub

PERSON = "tag:test,2025:ada"
CLOCK = "tag:test,2025:clock"


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("My name is Ada.", ["Their name is Ada."]),
        ("my name's ada", ["Their name is Ada."]),
        ("Hi, I'm Bob Smith.", ["Their name is Bob Smith."]),
        ("Call me Ishmael.", ["Their name is Ishmael."]),
        ("I am tired", []),
        ("What is my name?", []),
        ("I live in Paris and I like cats", ["They live in Paris."]),
        ("My favourite colour is blue.", ["Their favourite colour is blue."]),
        ("I'm 42 years old", ["They are 42 years old."]),
    ],
)
def test_facts_a_person_states(said: str, facts: list[str]) -> None:
    assert [f for _, f in stated_facts(said)] == facts


def test_the_name_comes_first_and_a_later_statement_replaces_an_earlier_one() -> None:
    facts = Facts()
    for said in ("I live in Oslo.", "My name is Ada.", "I live in Paris.", "Call me Adeline."):
        facts.hear(said)
    assert facts.sentences() == ["Their name is Adeline.", "They live in Paris."]


def test_grounding_says_when_where_and_who_within_its_bound() -> None:
    at = datetime(2026, 11, 27, 18, 5, tzinfo=timezone(timedelta(hours=1)))
    text = grounding(
        at,
        agents=[("Clock", "Tells you the time and the date.")],
        facts=["Their name is Ada."],
        extra=["The person is in Lisbon."],
    )
    assert "Friday, November 27, 2026, 6:05 PM (UTC+01:00)" in text
    assert "Clock (Tells you the time and the date)" in text
    assert "Their name is Ada." in text and "Lisbon" in text
    crowded = grounding(at, agents=[(f"Agent{i}", "x" * 200) for i in range(20)], facts=["y"] * 50)
    assert len(crowded) <= MAX_GROUNDING_CHARS


def _envelope(text: str, *, event_id: str, start_time: str) -> Envelope:
    def who(uri: str, name: str, role: str, synopsis: str) -> Conversant:
        return Conversant(
            identification=Identification(
                speaker_uri=uri,
                service_url=f"https://example.org/{name.lower()}",
                organization="test",
                conversational_name=name,
                role=role,
                synopsis=synopsis,
            )
        )

    de = text_event(PERSON, text, start_time=start_time).model_copy(update={"id": event_id})
    return Envelope(
        conversation=Conversation(
            id="conv-g",
            conversants=[
                who(PERSON, "Ada", "User", "A person."),
                who(CLOCK, "Clock", "Built-in agent", "Tells you the time and the date."),
            ],
        ),
        sender=Sender(speaker_uri=PERSON),
        events=[Event(event_type=EventType.UTTERANCE, parameters=Parameters(dialog_event=de))],
    )


async def test_the_request_carries_the_persons_time_the_agents_here_and_their_name() -> None:
    fixed = datetime(2026, 11, 27, 17, 5, tzinfo=UTC)
    with openai_stub("ok") as stub:
        assistant = Assistant(settings=LlmSettings(url=stub.url), now=lambda: fixed)
        try:
            first = "2026-11-27T18:04:59.000+01:00"  # the person is at UTC+01:00
            await assistant.handle(_envelope("My name is Ada.", event_id="de:1", start_time=first))
            # Another agent's greeting is not given to the model (it took it for its own).
            clock_said = _envelope("x", event_id="de:2", start_time=first)
            clock_de = text_event(CLOCK, "Hello, I'm Clock.").model_copy(update={"id": "de:2"})
            clock_said = clock_said.model_copy(
                update={
                    "sender": Sender(speaker_uri=CLOCK),
                    "events": [
                        Event(event_type=EventType.ACCEPT_INVITE),
                        Event(
                            event_type=EventType.UTTERANCE,
                            parameters=Parameters(dialog_event=clock_de),
                        ),
                    ],
                }
            )
            await assistant.handle(clock_said)
            await assistant.handle(
                _envelope("What should I cook tonight?", event_id="de:3", start_time=first)
            )
        finally:
            await assistant.aclose()
    # "My name is Ada." is an introduction, answered without the model: one request in all.
    assert len(stub.requests) == 1
    messages = stub.requests[-1]["body"]["messages"]
    system = messages[0]["content"]
    assert messages[0]["role"] == "system"
    assert "Friday, November 27, 2026, 6:05 PM (UTC+01:00)" in system
    assert "Clock (Tells you the time and the date)" in system
    assert "Their name is Ada." in system
    said = [m["content"] for m in messages[1:]]
    assert not any("I'm Clock" in s for s in said)
    # The last exchange is there verbatim: the person's words and the answer given.
    assert said == [
        "Ada: My name is Ada.",
        "Nice to meet you, Ada.",
        "Ada: What should I cook tonight?",
    ]
    assert messages[-2]["role"] == "assistant"


def test_statements_are_acknowledged_and_questions_about_them_answered_from_them() -> None:
    facts = Facts()
    for said, ack in (
        ("My name is Ada.", "Nice to meet you, Ada."),
        ("I live in Lisbon.", "I'll remember that you live in Lisbon."),
        ("My favourite colour is green.", "I'll remember that your favourite colour is green."),
    ):
        assert acknowledgement(said) == ack
        facts.hear(said)
    assert acknowledgement("What is my name?") is None
    assert acknowledgement("Why is the sky blue?") is None
    assert facts.recall("Do you remember my name?") == "Your name is Ada."
    assert facts.recall("Where do I live?") == "You live in Lisbon."
    assert facts.recall("What's my favourite colour?") == "Your favourite colour is green."
    assert facts.recall("How old am I?") is None  # never said: the model is asked
    assert facts.recall("What is the capital of France?") is None


@pytest.mark.slow
def test_the_real_small_model_knows_the_name_and_the_clock_tells_the_time(tmp_path: Path) -> None:
    """The default agents on SmolLM2-135M, on the two clear cases only: the person's name,
    stated a turn before (told back from the facts the assistant kept), and the time (routed to
    the clock, which reads it from the machine)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "gateway",
            "talk",
            "--no-record",
            "--json",
            *("--agent", "builtin:parrot", "--agent", "builtin:clock"),
            *("--agent", "builtin:concierge", "--agent", "builtin:assistant"),
            *("--text", "My name is Ada.", "--text", "What is my name?"),
            *("--text", "What time is it?"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    lines = json.loads(done.stdout)["lines"]
    asked = next(i for i, line in enumerate(lines) if line["text"] == "What is my name?")
    answer = lines[asked + 1]
    assert answer["speaker"] == "Assistant" and "Ada" in answer["text"], lines
    timed = next(i for i, line in enumerate(lines) if line["text"] == "What time is it?")
    clock = lines[timed + 1]
    assert clock["speaker"] == "Clock" and clock["text"].startswith("It's "), lines
