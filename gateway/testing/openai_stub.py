"""An OpenAI-compatible chat endpoint that misbehaves on purpose, for the error paths a real
model server cannot be made to show (a stall mid-stream, 401, 500, a 10 MB answer, garbage SSE
lines), and for seeing what a request carried (model name, bearer token).

Runs an aiohttp server on loopback in its own thread; ``mode`` picks the behaviour of the next
requests, ``requests`` keeps what each request carried.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

#: What the ``ok`` mode answers, in three sentences streamed word by word.
OK_ANSWER = "The stub model is answering. Its second sentence follows. And here is a third one."


def _chunk(content: str, finish: str | None = None) -> bytes:
    body = {"choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


@dataclass
class Stub:
    """The stub's state: set ``mode``; read ``requests`` (body and headers of each)."""

    url: str = ""
    mode: str = "ok"
    requests: list[dict[str, Any]] = field(default_factory=list)
    #: Set when a streamed answer's client went away before the end (a cancelled generation).
    disconnected: threading.Event = field(default_factory=threading.Event)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append({"body": body, "headers": dict(request.headers)})
        if self.mode == "401":
            return web.json_response(
                {"error": {"message": "Incorrect API key provided: sk-lea***key"}}, status=401
            )
        if self.mode == "500":
            return web.json_response({"error": {"message": "the model crashed"}}, status=500)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        try:
            await self._stream(response)
        except (ConnectionResetError, asyncio.CancelledError):
            self.disconnected.set()
            raise
        return response

    async def _stream(self, response: web.StreamResponse) -> None:
        if self.mode in ("ok", "slow"):
            for word in OK_ANSWER.split(" "):
                await response.write(_chunk(word + " "))
                await asyncio.sleep(0.2 if self.mode == "slow" else 0.005)
            await response.write(b"data: [DONE]\n\n")
        elif self.mode == "stall":
            await response.write(_chunk("I started to say something. And then"))
            await asyncio.sleep(3600)
        elif self.mode == "silent":
            await asyncio.sleep(3600)
        elif self.mode == "huge":
            sentence = "This answer goes on and on. " * 36  # ~1 kB per event
            for _ in range(10 * 1024):  # 10 MB in all, if anyone reads it
                await response.write(_chunk(sentence))
            await response.write(b"data: [DONE]\n\n")
        elif self.mode == "garbage":
            for line in (
                b": keep-alive comment\n\n",
                b"event: ping\n\n",
                b"data: {not json\n\n",
                b"data: [1, 2, 3]\n\n",
                b'data: {"choices": "none"}\n\n',
                b"\xff\xfe binary noise\n\n",
                b'data: {"choices": [{"delta": {"role": "assistant"}}]}\n\n',
            ):
                await response.write(line)
            await response.write(b"data: {truncated")
        elif self.mode == "long_line":
            await response.write(b"data: " + b"x" * 100_000)
            await asyncio.sleep(3600)
        elif self.mode == "garbage_then_text":
            await response.write(b"data: {not json\n\n: comment\n\ngarbage line\n\n")
            await response.write(_chunk("Garbage was skipped and this arrived. "))
            await response.write(b"data: [DONE]\n\n")


@contextmanager
def openai_stub(mode: str = "ok") -> Iterator[Stub]:
    """A running stub on loopback; ``stub.url`` is its API base (``…/v1``)."""
    stub = Stub(mode=mode)
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    runner: list[web.AppRunner] = []

    async def start() -> None:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", stub.handle)
        r = web.AppRunner(app, shutdown_timeout=0.5)
        await r.setup()
        site = web.TCPSite(r, "127.0.0.1", 0)
        await site.start()
        port: int = r.addresses[0][1]  # (host, port) of the one socket
        stub.url = f"http://127.0.0.1:{port}/v1"
        runner.append(r)
        ready.set()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield stub
    finally:
        asyncio.run_coroutine_threadsafe(runner[0].cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
