"""The ``agents serve`` command: where it listens, which agents, and the assistant's model."""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from gateway.llm.cli import add_llm_options, llm_from_args
from gateway.options import defaults_shown, given


def _agents_server_defaults() -> dict[str, Any]:
    from gateway.agents.server import run_agents_server

    return {k: v.default for k, v in inspect.signature(run_agents_server).parameters.items()}


def add_agents_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``agents serve``: its defaults are :func:`~gateway.agents.server.run_agents_server`'s."""
    p = sub.add_parser("agents", help="the built-in agents")
    asub = p.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    ps = asub.add_parser(
        "serve",
        help="serve the built-in agents over HTTP",
        formatter_class=defaults_shown(_agents_server_defaults),
    )
    ps.add_argument("--host", help="address to listen on ({host})")
    ps.add_argument("--port", type=int, help="port ({port})")
    ps.add_argument("--name", action="append", help="serve only this agent (repeatable)")
    add_llm_options(ps)
    ps.set_defaults(func=cmd_agents_serve)


def cmd_agents_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; an option not given leaves the server's default."""
    from gateway.agents.server import run_agents_server

    llm = llm_from_args(args)
    # Only what was given: the server's own defaults apply to the rest (the model's too).
    options: dict[str, Any] = given(host=args.host, port=args.port, names=args.name)
    if llm != type(llm)():
        options["llm"] = llm
    run_agents_server(**options)
    return 0
