"""The streaming chat client against an OpenAI-compatible stub: what a good stream gives, and
each way a server can fail (a stub: a real server cannot be made to stall, refuse or rant)."""

from __future__ import annotations

import asyncio

from gateway.llm.client import Capped, ChatClient, ChatMessage
from gateway.llm.errors import LlmBadStream, LlmHTTPError, LlmTimeout, LlmUnreachable
from gateway.llm.settings import LlmSettings
from gateway.testing.openai_stub import OK_ANSWER, openai_stub
from gateway.testing.processes import free_port

QUESTION = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hello?")]
QUICK = LlmSettings(first_token_s=1.0, token_gap_s=0.5)


async def collect(client: ChatClient) -> tuple[list[str], BaseException | None]:
    deltas: list[str] = []
    try:
        async for delta in client.stream(QUESTION):
            deltas.append(delta)
    except Exception as exc:
        return deltas, exc
    finally:
        await client.aclose()
    return deltas, None


def run(url: str, settings: LlmSettings = QUICK, key: str | None = None):
    return asyncio.run(collect(ChatClient(url, settings, key=key)))


def test_a_stream_arrives_delta_by_delta_with_the_request_the_settings_ask_for() -> None:
    with openai_stub("ok") as stub:
        settings = LlmSettings(model="some-model", temperature=0.0, seed=7, max_tokens=99)
        deltas, err = run(stub.url, settings, key="sekrit-key")
    assert err is None
    assert len(deltas) > 5 and "".join(deltas).strip() == OK_ANSWER
    (request,) = stub.requests
    body = request["body"]
    assert body["stream"] is True and body["model"] == "some-model"
    assert (body["seed"], body["max_tokens"], body["temperature"]) == (7, 99, 0.0)
    assert body["messages"][1] == {"role": "user", "content": "Hello?"}
    assert request["headers"]["Authorization"] == "Bearer sekrit-key"


def test_no_model_and_no_key_are_sent_when_none_is_set() -> None:
    with openai_stub("ok") as stub:
        run(stub.url, LlmSettings())
    (request,) = stub.requests
    assert "model" not in request["body"] and "Authorization" not in request["headers"]


def test_a_refused_key_is_an_http_error_that_does_not_repeat_the_server_s_echo_of_it() -> None:
    with openai_stub("401") as stub:
        deltas, err = run(stub.url, key="sk-leaked-key")
    assert isinstance(err, LlmHTTPError) and err.status == 401 and deltas == []
    assert "sk-" not in str(err) and "--llm-key-env" in str(err)


def test_a_server_error_is_an_http_error_with_its_message() -> None:
    with openai_stub("500") as stub:
        _, err = run(stub.url)
    assert isinstance(err, LlmHTTPError) and err.status == 500 and "crashed" in str(err)


def test_a_stream_that_stalls_mid_answer_times_out_after_the_text_it_gave() -> None:
    with openai_stub("stall") as stub:
        deltas, err = run(stub.url)
    # The stub stalls for an hour: only the 0.5 s stall bound can have ended the stream.
    assert isinstance(err, LlmTimeout) and "stalled" in str(err)
    assert "".join(deltas).startswith("I started")


def test_a_server_that_sends_nothing_times_out_on_the_first_token() -> None:
    with openai_stub("silent") as stub:
        deltas, err = run(stub.url)
    assert isinstance(err, LlmTimeout) and "first token" in str(err) and deltas == []


def test_a_ten_megabyte_answer_is_cut_at_the_cap_without_reading_it_all() -> None:
    settings = LlmSettings(max_reply_chars=500, first_token_s=5, token_gap_s=5)
    with openai_stub("huge") as stub:
        deltas, err = run(stub.url, settings)
    assert isinstance(err, Capped)
    assert len("".join(deltas)) == 500


def test_garbage_lines_are_skipped_and_a_stream_of_only_garbage_is_a_bad_stream() -> None:
    with openai_stub("garbage_then_text") as stub:
        deltas, err = run(stub.url)
    assert err is None and "".join(deltas) == "Garbage was skipped and this arrived. "
    with openai_stub("garbage") as stub:
        deltas, err = run(stub.url)
    assert isinstance(err, LlmBadStream) and deltas == []


def test_an_endpoint_nobody_listens_at_is_unreachable() -> None:
    deltas, err = run(f"http://127.0.0.1:{free_port()}/v1")
    assert isinstance(err, LlmUnreachable) and deltas == []


def test_a_line_over_the_limit_ends_the_stream() -> None:
    with openai_stub("long_line") as stub:
        deltas, err = run(stub.url, LlmSettings(max_line_bytes=4096, first_token_s=5))
    assert isinstance(err, LlmBadStream) and "over 4096 bytes" in str(err) and deltas == []
