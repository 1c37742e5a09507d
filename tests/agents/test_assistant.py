"""The assistant agent: its memory, its streaming, and every way its model can fail.

The model here is an OpenAI-compatible stub (gateway/testing/openai_stub.py) for what a real
server cannot be made to do (fail, stall, rant) and to see what each request carried; the
real model (the embedded llama.cpp with SmolLM2) answers in tests/llm/test_embedded_assistant.py.
"""

from __future__ import annotations

import asyncio

import pytest

from gateway.agents.builtin import Assistant, builtin_agents
from gateway.agents.builtin.assistant import APOLOGY, APOLOGY_CUT
from gateway.agents.streaming import ReplyStream, reply_streams
from gateway.llm.settings import LlmSettings
from gateway.ofp import Envelope, Event, EventType, Parameters, To, text_event
from gateway.testing.openai_stub import OK_ANSWER, openai_stub
from tests.agents.helpers import USER, conversant, texts, utterance
from tests.ofp_schemas import assert_valid_envelope

CLOCK = "tag:test.clock,2025:clock"
QUICK = {"first_token_s": 2.0, "token_gap_s": 0.5}


def assistant(url: str, **settings: object) -> Assistant:
    return Assistant(settings=LlmSettings(url=url, **{**QUICK, **settings}))  # type: ignore[arg-type]


def people() -> list:
    return [conversant(USER, "User"), conversant(CLOCK, "Built-in agent")]


async def ask(agent: Assistant, text: str, conv: str = "conv-1") -> Envelope:
    reply = await agent.handle(utterance(text, conversation=conv, conversants=people()))
    assert_valid_envelope(reply.to_wire())
    return reply


async def test_it_answers_with_the_model_s_words_as_one_envelope() -> None:
    with openai_stub("ok") as stub:
        agent = assistant(stub.url)
        reply = await ask(agent, "Hello there?")
        await agent.aclose()
    assert texts(reply) == [OK_ANSWER]
    assert agent.model.failures == {}


@pytest.mark.parametrize("mode", ["401", "500", "stall", "silent", "garbage"])
async def test_a_failing_model_gets_an_apology_counted_and_the_conversation_goes_on(
    mode: str,
) -> None:
    with openai_stub(mode) as stub:
        agent = assistant(stub.url)
        first = await ask(agent, "What should I pack for Lisbon?")
        stub.mode = "ok"
        second = await ask(agent, "And for Porto?")
        await agent.aclose()
    (said,) = texts(first)
    if mode == "stall":  # what it had said stands, then the apology
        assert said == f"I started to say something. {APOLOGY_CUT}"
    else:
        assert said == APOLOGY
    assert sum(agent.model.failures.values()) == 1
    assert texts(second) == [OK_ANSWER]
    # The failed answer is remembered as said: the next request holds it.
    contents = [m["content"] for m in stub.requests[-1]["body"]["messages"]]
    assert any(said in c for c in contents)


async def test_an_unreachable_model_is_an_apology_too() -> None:
    from gateway.testing.processes import free_port

    agent = assistant(f"http://127.0.0.1:{free_port()}/v1")
    assert texts(await ask(agent, "Anyone there?")) == [APOLOGY]
    assert agent.model.failures == {"unreachable": 1}
    await agent.aclose()


async def test_a_huge_answer_is_capped_at_a_sentence_and_counted_as_capped() -> None:
    with openai_stub("huge") as stub:
        agent = assistant(stub.url, max_reply_chars=300, max_sentences=100)
        (said,) = texts(await ask(agent, "Tell me everything."))
        await agent.aclose()
    assert 0 < len(said) <= 300 and said.endswith(".")
    assert agent.model.capped == 1 and agent.model.failures == {}


async def test_its_memory_is_the_conversation_labelled_by_speaker_and_its_invite_history() -> None:
    history = [
        text_event(USER, "My name is Ana."),
        text_event(CLOCK, "It is ten past five."),
    ]
    with openai_stub("ok") as stub:
        agent = assistant(stub.url)
        invite = Envelope(
            conversation={"id": "conv-1", "conversants": people()},
            sender={"speakerUri": USER},
            events=[
                Event(
                    event_type=EventType.INVITE,
                    to=To(service_url=agent.manifest.identification.service_url),
                    parameters=Parameters(dialog_history=history),
                )
            ],
        )
        await agent.handle(invite)
        # Another agent's public utterance, not for the assistant to answer: heard all the same.
        await agent.handle(utterance("The clock strikes.", speaker=CLOCK, conversants=people()))
        await ask(agent, "What time did the clock say?")
        await agent.aclose()
    messages = stub.requests[-1]["body"]["messages"]
    assert messages[0]["role"] == "system" and agent.persona.name in messages[0]["content"]
    said = "\n".join(m["content"] for m in messages[1:])
    for line in (
        "alice: My name is Ana.",
        "clock: It is ten past five.",
        "clock: The clock strikes.",
        "alice: What time did the clock say?",
    ):
        assert line in said
    # Being invited is not being asked (§2.1): the invite's history is remembered, not answered,
    # so the only answer the model was asked for is the question addressed to it.
    assert OK_ANSWER not in said and len(stub.requests) == 1


async def test_in_process_the_answer_streams_sentence_by_sentence() -> None:
    streams: list[ReplyStream] = []

    def opener(event_id: str, speaker_uri: str, speaker: str) -> ReplyStream:
        streams.append(ReplyStream(event_id, speaker_uri, speaker))
        return streams[-1]

    with openai_stub("slow") as stub:
        agent = assistant(stub.url)
        token = reply_streams.set(opener)
        try:
            task = asyncio.ensure_future(ask(agent, "Tell me three things."))
            await _opened(streams)
            pieces = []
            async for sentence in streams[0].sentences():
                pieces.append(sentence)
                # The first sentence is here while the model is still writing the rest.
                assert not task.done() or len(pieces) > 1
            reply = await task
        finally:
            reply_streams.reset(token)
        await agent.aclose()
    assert pieces == [
        "The stub model is answering.",
        "Its second sentence follows.",
        "And here is a third one.",
    ]
    (event,) = reply.events[1:] or reply.events  # the utterance (no greeting here)
    assert event.dialog_event.id == streams[0].event_id and texts(reply) == [" ".join(pieces)]


async def test_cancelling_the_stream_stops_the_generation() -> None:
    streams: list[ReplyStream] = []

    def opener(event_id: str, speaker_uri: str, speaker: str) -> ReplyStream:
        streams.append(ReplyStream(event_id, speaker_uri, speaker))
        return streams[-1]

    with openai_stub("slow") as stub:
        agent = assistant(stub.url)
        token = reply_streams.set(opener)
        try:
            task = asyncio.ensure_future(ask(agent, "Tell me three things."))
            async for _ in _first(streams):
                streams[0].cancel()  # a barge-in after the first sentence
            reply = await asyncio.wait_for(task, 5)
        finally:
            reply_streams.reset(token)
        # The server saw its client go: it stopped writing the answer.
        assert await asyncio.to_thread(stub.disconnected.wait, 5)
        await agent.aclose()
    (said,) = texts(reply)
    assert said.startswith("The stub model is answering.") and "third" not in said


async def _opened(streams: list[ReplyStream]) -> None:
    """Wait for the reply's stream to open: 10 s at most, so one that never streams fails."""
    for _ in range(1000):
        if streams:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the answer was not streamed")


async def _first(streams: list[ReplyStream]):
    await _opened(streams)
    async for sentence in streams[0].sentences():
        yield sentence
        return


def test_it_is_a_default_built_in_with_its_persona_s_manifest() -> None:
    agents = builtin_agents(llm=LlmSettings(url="http://127.0.0.1:9/v1"))
    a = agents["assistant"]
    assert isinstance(a, Assistant) and a.manifest.identification.conversational_name == "Assistant"
    # The concierge knows it, and brings it in when asked for by name.
    concierge = agents["concierge"]
    assert a.manifest in concierge.directory  # type: ignore[attr-defined]


def test_a_key_variable_that_is_not_set_is_a_config_error(monkeypatch) -> None:
    from gateway.errors import ConfigError

    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR"):
        Assistant(settings=LlmSettings(url="http://127.0.0.1:9/v1", key_env="NO_SUCH_KEY_VAR"))


async def _memory_after(stop: str) -> tuple[str, list[str]]:
    """Ask for a long answer streaming in process, stop it ``while generating`` (after its
    first sentence) or ``after`` it was all generated (while it would still play), with the
    person having heard "The stub model"; then ask again: what the reply said, and what the
    model was given of the assistant's own words the second time."""
    streams: list[ReplyStream] = []

    def opener(event_id: str, speaker_uri: str, speaker: str) -> ReplyStream:
        streams.append(ReplyStream(event_id, speaker_uri, speaker))
        return streams[-1]

    with openai_stub("slow") as stub:
        agent = assistant(stub.url)
        token = reply_streams.set(opener)
        try:
            task = asyncio.ensure_future(ask(agent, "Tell me three things."))
            if stop == "while generating":
                async for _ in _first(streams):
                    streams[0].cancel(heard="The stub model")
                reply = await asyncio.wait_for(task, 5)
            else:
                await _opened(streams)
                reply = await asyncio.wait_for(task, 10)  # all generated and remembered
                streams[0].cancel(heard="The stub model")  # stopped while it still plays
            streams.clear()
            await ask(agent, "And then?")
        finally:
            reply_streams.reset(token)
        await agent.aclose()
    (said,) = texts(reply)
    messages = stub.requests[-1]["body"]["messages"]
    own = [m["content"] for m in messages[1:] if m["role"] == "assistant"]
    return said, own


@pytest.mark.parametrize("stop", ["while generating", "after"])
async def test_a_stopped_answer_is_remembered_as_far_as_the_person_heard_it(stop: str) -> None:
    said, own = await _memory_after(stop)
    # The floor (and the record) got what was generated; the memory holds what was heard.
    assert said.startswith("The stub model is answering."), said
    assert own == ["The stub model"], own
