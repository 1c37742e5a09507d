"""Serve the built-in agents over HTTP, so that any Open Floor host can invite them.

Each agent answers ``POST /<name>`` (its serviceUrl is ``http://host:port/<name>``; ``/<name>/``
works too);
``GET /<name>`` returns its manifest and ``GET /`` lists them all. Every answer is JSON: a
1.1.0 envelope (or OVON 0.9 when the request was OVON 0.9), a manifest, or an error object
``{"error": ..., "problems": [{"path", "message", "hint"}]}`` with a 4xx/5xx status.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from aiohttp import web

from gateway.agents.base import Agent
from gateway.agents.builtin import builtin_agents
from gateway.llm.settings import LlmSettings
from gateway.ofp import (
    Conversation,
    Envelope,
    EnvelopeError,
    Problem,
    Sender,
    parse_envelope,
    to_ovon,
)
from gateway.ofp.jsonio import dumps

#: Largest request body accepted (inline audio makes envelopes large).
MAX_REQUEST_BYTES = 2 * 1024 * 1024
#: Where the served agents are kept in the application, by name.
AGENTS_KEY = web.AppKey("agents", dict[str, Agent])

log = logging.getLogger(__name__)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def agents_app(
    agents: Mapping[str, Agent], *, max_request_bytes: int = MAX_REQUEST_BYTES
) -> web.Application:
    """An aiohttp application serving ``agents`` at ``/<name>``; closes them on cleanup."""
    app = web.Application(client_max_size=max_request_bytes, middlewares=[_json_errors])
    app[AGENTS_KEY] = dict(agents)
    app.router.add_get("/", _list)
    app.router.add_get("/{name}", _manifest)
    app.router.add_post("/{name}", _deliver)
    # The same agent with a trailing slash: hosts (and people) write service URLs both ways.
    app.router.add_get("/{name}/", _manifest)
    app.router.add_post("/{name}/", _deliver)
    app.on_cleanup.append(_close_agents)
    return app


async def serve_agents(
    host: str = "127.0.0.1",
    port: int = 0,
    names: Iterable[str] | None = None,
    llm: LlmSettings | None = None,
) -> web.AppRunner:
    """Start serving the built-in agents (all, or ``names``) on ``host:port`` and return the
    running runner; ``runner.app[AGENTS_KEY]`` holds the agents, with their real service URLs.
    Port 0 picks a free port; ``llm`` is the assistant's model. Stop with
    ``await runner.cleanup()``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Bind first: the agents' service URLs must carry the real port, known only once bound.
    sock = socket.create_server((host, port), family=family)
    bound_port = sock.getsockname()[1]
    try:
        agents = builtin_agents(f"http://{_url_host(host)}:{bound_port}/", names, llm=llm)
        runner = web.AppRunner(agents_app(agents))
        await runner.setup()
        await web.SockSite(runner, sock).start()
    except BaseException:
        sock.close()
        raise
    return runner


def run_agents_server(
    host: str = "127.0.0.1",
    port: int = 8081,
    names: Iterable[str] | None = None,
    llm: LlmSettings | None = None,
) -> None:
    """Serve the built-in agents until interrupted (Ctrl-C), printing each one's URL."""

    async def main() -> None:
        runner = await serve_agents(host, port, names, llm)
        try:
            for name, agent in runner.app[AGENTS_KEY].items():
                print(f"{name:<10} {agent.manifest.identification.service_url}", flush=True)
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


def _url_host(host: str) -> str:
    if host in ("", "0.0.0.0", "::"):
        return socket.gethostname()  # bound to every interface: name the machine, not 0.0.0.0
    return f"[{host}]" if ":" in host else host


def _error(status: int, message: str, problems: Iterable[Problem] = ()) -> web.Response:
    body: dict[str, Any] = {"error": message}
    listed = [{"path": p.path, "message": p.message, "hint": p.hint} for p in problems]
    if listed:
        body["problems"] = listed
    return web.json_response(body, status=status, dumps=dumps)


@web.middleware
async def _json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every failure becomes a JSON error object; no traceback ever reaches the client."""
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _error(exc.status, exc.text or exc.reason)
    except Exception:  # the last boundary: an agent's bug is a 500 and a log, never a traceback
        log.exception("agent failed on %s %s", request.method, request.path)
        return _error(500, "the agent failed on this envelope; the server log has the details")


def _agent(request: web.Request) -> tuple[str, Agent]:
    name = request.match_info["name"]
    agents = request.app[AGENTS_KEY]
    if name not in agents:
        raise web.HTTPNotFound(text=f"no agent called {name!r}; GET / lists them")
    return name, agents[name]


async def _list(request: web.Request) -> web.Response:
    agents = request.app[AGENTS_KEY]
    return web.json_response(
        {
            "agents": [
                {
                    "name": name,
                    "serviceUrl": agent.manifest.identification.service_url,
                    "manifest": agent.manifest.to_wire(),
                }
                for name, agent in agents.items()
            ]
        },
        dumps=dumps,
    )


async def _manifest(request: web.Request) -> web.Response:
    _, agent = _agent(request)
    return web.json_response(agent.manifest.to_wire(), dumps=dumps)


async def _deliver(request: web.Request) -> web.Response:
    _, agent = _agent(request)
    body = await request.read()  # refuses bodies over client_max_size with 413
    try:
        envelope = parse_envelope(body)
    except EnvelopeError as err:
        return _error(400, "the request is not an Open Floor envelope", err.problems)
    reply = await agent.handle(envelope)
    if reply is None:  # §2.3: a request that needs a response gets at least an empty envelope
        ident = agent.manifest.identification
        reply = Envelope(
            conversation=Conversation(id=envelope.conversation.id),
            sender=Sender(speaker_uri=ident.speaker_uri, service_url=ident.service_url),
        )
    wire = to_ovon(reply) if envelope.dialect == "ovon" else reply.to_wire()
    return web.json_response(wire, dumps=dumps)


async def _close_agents(app: web.Application) -> None:
    for agent in app[AGENTS_KEY].values():
        await agent.aclose()
