"""The ``agents serve`` command: the built-in agents over HTTP."""

from __future__ import annotations

import argparse
import inspect

from gateway.agents.server import run_agents_server


def add_agents_command(sub: argparse._SubParsersAction) -> None:
    """Register ``agents serve`` on the main parser; its defaults are
    :func:`~gateway.agents.server.run_agents_server`'s."""
    default = {k: v.default for k, v in inspect.signature(run_agents_server).parameters.items()}
    p = sub.add_parser("agents", help="the built-in agents")
    asub = p.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    ps = asub.add_parser("serve", help="serve the built-in agents over HTTP")
    ps.add_argument("--host", help=f"address to listen on ({default['host']})")
    ps.add_argument("--port", type=int, help=f"port ({default['port']})")
    ps.add_argument("--name", action="append", help="serve only this agent (repeatable)")
    ps.set_defaults(func=cmd_agents_serve)


def cmd_agents_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from gateway.cli import given

    run_agents_server(**given(host=args.host, port=args.port, names=args.name))
    return 0
