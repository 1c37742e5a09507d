"""Command line: ``python -m gateway <command>`` (also installed as ``ofp-gateway``).

Commands: ``serve`` (the browser gateway), ``talk`` (a conversation from the terminal),
``validate`` (check envelopes), ``agents serve`` (the built-in agents over HTTP), ``history`` and
``export`` (conversation records).

This module is the command table and the options several commands share. Each command declares
its own options beside its code (``gateway/<part>/cli.py``) and builds its settings with one
``from_args``. Every option's argparse default is ``None``: an option not given means the
settings dataclass's default, which lives there only (help texts read it from there).
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from gateway import __version__

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def given(**values: Any) -> dict[str, Any]:
    """Keyword arguments for a settings dataclass from option values, leaving out the options
    not given (``None``) so that those fields keep their dataclass defaults."""
    return {name: value for name, value in values.items() if value is not None}


def override(settings: T, **values: Any) -> T:
    """``settings`` (a dataclass) with the fields whose options were given replaced."""
    return replace(settings, **given(**values))


def repeated(values: list[str] | None) -> tuple[str, ...] | None:
    """A repeatable option's values as a settings tuple, or None when it was not given."""
    return tuple(values) if values else None


def add_data_option(p: argparse.ArgumentParser) -> None:
    """``--data``: where the records are (``serve``, ``talk``, ``history``, ``export``)."""
    from gateway.records.base import DATABASE_ENV
    from gateway.records.paths import DATA_ENV, default_data_dir

    p.add_argument(
        "--data",
        metavar="DIR|URL",
        help="records folder, or a postgresql:// database several nodes can share (default: "
        f"${DATABASE_ENV}, else ${DATA_ENV}, else {default_data_dir()})",
    )


def add_record_options(p: argparse.ArgumentParser) -> None:
    """``--data`` and ``--no-record``, for the commands that hold conversations."""
    add_data_option(p)
    p.add_argument(
        "--no-record", action="store_true", default=None, help="keep no records of conversations"
    )


def add_allow_address_option(p: argparse.ArgumentParser) -> None:
    """``--allow-address``: the agents' address policy (``serve``, ``talk``)."""
    from gateway.agents.policy import ENV_VAR

    p.add_argument(
        "--allow-address",
        action="append",
        metavar="CIDR",
        help="let agents be reached at these addresses although they are loopback/private "
        f"(repeatable; also {ENV_VAR}=cidr,cidr). Example: 127.0.0.0/8",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    from gateway.agents.cli import add_agents_command
    from gateway.ofp.cli import add_validate_command
    from gateway.records.cli import add_commands as add_records_commands
    from gateway.server.cli import add_serve_command
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
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; returns the process exit code."""
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
    return int(args.func(args))
