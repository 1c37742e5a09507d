"""Command line: ``python -m gateway <command>`` (also installed as ``ofp-gateway``).

Commands: ``serve`` (the browser gateway), ``talk`` (a conversation from the terminal),
``validate`` (check envelopes), ``agents serve`` (the built-in agents over HTTP), ``history`` and
``export`` (conversation records).

This module only composes the command table: each command declares its options beside its code
(``gateway/<part>/cli.py``), as does each part several commands share (``--data`` in
:mod:`gateway.records.cli`, the conversation's options in :mod:`gateway.floor.cli`, ``--llm-*``
in :mod:`gateway.llm.cli`); how an option becomes a settings field is :mod:`gateway.options`,
below them all.
"""

from __future__ import annotations

import argparse
import logging
import sys

from gateway import __version__
from gateway.errors import EXIT_GATEWAY_ERROR, GatewayError, one_line


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    from gateway.agents.cli import add_agents_command
    from gateway.ofp.cli import add_validate_command
    from gateway.records.cli import add_commands as add_records_commands
    from gateway.server.cli import add_serve_command
    from gateway.speech.cli import add_speech_command
    from gateway.talk.cli import add_talk_command

    parser = argparse.ArgumentParser(prog="ofp-gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"ofp-gateway {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="store_true", default=None, help="log what happens"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_validate_command(sub)
    add_talk_command(sub)
    add_agents_command(sub)
    add_records_commands(sub)
    add_serve_command(sub)
    add_speech_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; returns the process exit code: the command's own, or
    :data:`~gateway.errors.EXIT_GATEWAY_ERROR` after a :class:`~gateway.errors.GatewayError`
    (its message on one line of stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # Started from the command line, the process is the command's own: ``serve`` may restart
    # it (under jemalloc). Called with arguments by another program, it is not.
    args.own_process = argv is None
    try:
        return int(args.func(args))
    except GatewayError as exc:
        # A failure the gateway explains (a model not installed, records it cannot open...):
        # its message is the help, a traceback would bury it. Anything else is a bug and keeps
        # its traceback.
        print(f"{parser.prog}: {one_line(exc)}", file=sys.stderr)
        return EXIT_GATEWAY_ERROR
