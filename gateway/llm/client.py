"""An OpenAI-compatible chat client that streams: ``POST {base}/chat/completions`` with
``stream: true``, read as server-sent events, one content delta at a time.

Every way a server can misbehave is bounded here, so the agent above it only ever sees text or
an :class:`~gateway.llm.errors.LlmError`:

* no first token within ``first_token_s``, or a gap over ``token_gap_s`` between tokens
  (a server stalled mid-stream): :class:`LlmTimeout`;
* an answer over ``max_reply_chars``: the stream is closed there (the caller is told it was
  capped), so a 10 MB answer costs one read of a few kilobytes, not 10 MB;
* lines that are not ``data:`` JSON with a delta (comments, keep-alives, garbage, another
  vendor's extra fields) are skipped; a line longer than ``max_line_bytes`` is not a delta
  and ends the stream (:class:`LlmBadStream`), as does a stream with no content at all;
* an HTTP error status is :class:`LlmHTTPError` with the status, never the body's echo of
  the request (which could hold the key).

The API key is a bearer token in the request headers only; it is never logged or returned.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp

from gateway import __version__
from gateway.llm.errors import LlmBadStream, LlmError, LlmHTTPError, LlmTimeout, LlmUnreachable
from gateway.llm.settings import LlmSettings

#: Bytes read from an error response to find its message (the rest is dropped).
MAX_ERROR_BYTES = 4096


@dataclass(frozen=True)
class ChatMessage:
    """One message of an OpenAI chat: ``role`` is ``system``, ``user`` or ``assistant``."""

    role: str
    content: str

    def wire(self) -> dict[str, str]:
        """As the API takes it."""
        return {"role": self.role, "content": self.content}


class Capped(LlmError):
    """Not a failure of the server's: the answer reached ``max_reply_chars`` and was cut there.
    Raised by :meth:`ChatClient.stream` after the last delta it yields."""

    reason = "capped"


class ChatClient:
    """Streams chat completions from one OpenAI-compatible endpoint.

    ``base_url`` is the API base (``…/v1``); ``key`` the bearer token or None. The HTTP session
    is made on first use, inside the running loop; close it with :meth:`aclose`.
    """

    def __init__(self, base_url: str, settings: LlmSettings, *, key: str | None = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.settings = settings
        self._headers = {"User-Agent": f"ofp-gateway/{__version__}"}
        if key:
            self._headers["Authorization"] = f"Bearer {key}"
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # No total timeout: a long answer may stream for a while; the first-token and
            # inter-token deadlines below bound every wait instead.
            self._session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=None, connect=self.settings.first_token_s),
                headers=self._headers,
            )
        return self._session

    def request_body(self, messages: Sequence[ChatMessage]) -> dict[str, Any]:
        """The JSON body for ``messages`` (what the settings ask of the model)."""
        s = self.settings
        body: dict[str, Any] = {
            "messages": [m.wire() for m in messages],
            "stream": True,
            "max_tokens": s.max_tokens,
            "temperature": s.temperature,
            "frequency_penalty": s.frequency_penalty,
        }
        if s.model:
            body["model"] = s.model
        if s.seed is not None:
            body["seed"] = s.seed
        return body

    async def stream(self, messages: Sequence[ChatMessage]) -> AsyncGenerator[str, None]:
        """Yield the answer's content as it streams; raises :class:`LlmError` (after the text
        already yielded) when the answer fails, and :class:`Capped` when it was cut at
        ``max_reply_chars``. Closing the iterator early closes the connection, which stops a
        llama.cpp or vLLM server generating."""
        s = self.settings
        started = time.monotonic()
        try:
            response = await asyncio.wait_for(
                self._client().post(self.url, json=self.request_body(messages)), s.first_token_s
            )
        except TimeoutError:
            raise LlmTimeout(f"no answer from the model within {s.first_token_s:g} s") from None
        except aiohttp.ClientError as exc:
            raise LlmUnreachable(f"cannot reach the model at {self.url}: {_short(exc)}") from None
        async with response:
            if response.status in (401, 403):
                # Not the body: OpenAI's echoes part of the key it refused.
                raise LlmHTTPError(
                    f"the model refused the API key (HTTP {response.status}): check --llm-key-env",
                    status=response.status,
                )
            if response.status != 200:
                raise LlmHTTPError(
                    f"the model answered HTTP {response.status}: {await _error_text(response)}",
                    status=response.status,
                )
            async for delta in self._deltas(response, started):
                yield delta

    async def _deltas(self, response: aiohttp.ClientResponse, started: float) -> AsyncIterator[str]:
        s = self.settings
        deadline = started + s.first_token_s
        size = 0
        buffer = b""
        seen_content = False
        while True:
            remaining = deadline - time.monotonic()
            try:
                chunk = await asyncio.wait_for(response.content.readany(), max(0.0, remaining))
            except TimeoutError:
                what = "stalled" if seen_content else "sent no first token"
                wait = s.token_gap_s if seen_content else s.first_token_s
                raise LlmTimeout(f"the model {what} for {wait:g} s") from None
            except aiohttp.ClientError as exc:
                raise LlmUnreachable(f"the model's stream broke: {_short(exc)}") from None
            if not chunk:
                break  # the server closed the stream
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            if len(buffer) > s.max_line_bytes:
                raise LlmBadStream(f"a line of the answer is over {s.max_line_bytes} bytes")
            for line in lines:
                if len(line) > s.max_line_bytes:
                    raise LlmBadStream(f"a line of the answer is over {s.max_line_bytes} bytes")
                event = _event(line)
                if event is _LENGTH:
                    if not seen_content:
                        raise LlmBadStream("the model's answer was empty")
                    raise Capped(f"the answer reached max_tokens ({s.max_tokens})")
                if event is _DONE:
                    if not seen_content:
                        raise LlmBadStream("the model's answer was empty")
                    return
                if not isinstance(event, str) or not event:
                    continue  # a comment, keep-alive, role-only delta or garbage
                if size + len(event) > s.max_reply_chars:
                    yield event[: s.max_reply_chars - size]
                    raise Capped(f"the answer was cut at {s.max_reply_chars} characters")
                size += len(event)
                seen_content = True
                deadline = time.monotonic() + s.token_gap_s
                yield event
        if not seen_content:
            raise LlmBadStream("the model's answer held no text")

    async def aclose(self) -> None:
        """Close the HTTP session."""
        if self._session is not None:
            await self._session.close()


_DONE = object()
_LENGTH = object()


def _event(line: bytes) -> object:
    """One SSE line: the content delta it carries (a str), :data:`_DONE`, or None (anything
    else). An ``error`` object in the stream is raised."""
    line = line.strip()
    if not line.startswith(b"data:"):
        return None  # blank separator, ``: comment``, ``event:``, ``id:`` or garbage
    data = line[5:].strip()
    if data == b"[DONE]":
        return _DONE
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(obj, dict):
        return None
    if "error" in obj:
        error = obj["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise LlmBadStream(f"the model reported an error: {str(message)[:200]}")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    delta = choices[0].get("delta")
    content = delta.get("content") if isinstance(delta, dict) else None
    if choices[0].get("finish_reason") == "length" and not content:
        return _LENGTH  # the answer was cut by max_tokens: its last sentence is unfinished
    return content if isinstance(content, str) else None


async def _error_text(response: aiohttp.ClientResponse) -> str:
    """A short reason from an error response: the OpenAI ``error.message`` when there is one."""
    try:
        raw = await asyncio.wait_for(response.content.read(MAX_ERROR_BYTES), 2.0)
    except (TimeoutError, aiohttp.ClientError):
        return response.reason or "no reason given"
    try:
        obj = json.loads(raw)
        error = obj.get("error") if isinstance(obj, dict) else None
        message = error.get("message") if isinstance(error, dict) else error
        if isinstance(message, str) and message:
            return " ".join(message.split())[:200]
    except ValueError:
        pass
    return response.reason or "no reason given"


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__
