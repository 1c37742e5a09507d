"""Command line: ``python -m gateway <command>`` (also installed as ``ofp-gateway``).

Commands: ``serve`` (the browser gateway), ``talk`` (a conversation from the terminal),
``validate`` (check envelopes), ``agents serve`` (the built-in agents over HTTP), ``history`` and
``export`` (conversation records).

This module is the command table, the options several commands share, and ``agents serve``
(two options). Each other command declares its options beside its code
(``gateway/<part>/cli.py``) and builds its settings with one ``from_args``. An option's ``dest``
is the name of the settings field it sets (:func:`from_options`), and its argparse default is
``None``: an option not given means the settings dataclass's default, which lives there only
(help texts read it from there when help is printed: :func:`defaults_shown`).
"""

from __future__ import annotations

import argparse
import inspect
import logging
import sys
from collections.abc import Callable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, TypeVar

from gateway import __version__
from gateway.errors import EXIT_GATEWAY_ERROR, GatewayError, one_line

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")


def given(**values: Any) -> dict[str, Any]:
    """Keyword arguments for a settings dataclass from option values, leaving out the options
    not given (``None``) so that those fields keep their dataclass defaults."""
    return {name: value for name, value in values.items() if value is not None}


def from_options(settings: T, args: argparse.Namespace) -> T:
    """``settings`` (a dataclass) with the fields whose options were given replaced. An option
    names the field it sets by its ``dest``; one not given (None) leaves the field's default,
    and a repeatable option's list becomes a tuple."""
    values = {f.name: getattr(args, f.name, None) for f in fields(settings) if f.init}
    return replace(
        settings,
        **{k: tuple(v) if isinstance(v, list) else v for k, v in given(**values).items()},
    )


def defaults_shown(read: Callable[[], dict[str, Any]]) -> type[argparse.HelpFormatter]:
    """A help formatter that fills the ``str.format`` fields of help texts (``{g.port}``) from
    ``read()``, called only when help is printed. The settings dataclasses live in the modules
    that use them (the web server, the models): reading their defaults at ``--help`` rather than
    for every command line keeps ``validate`` or ``history`` from importing all of them."""

    class Formatter(argparse.HelpFormatter):
        def _get_help_string(self, action: argparse.Action) -> str | None:
            text = super()._get_help_string(action)
            return text.format(**_shared(), **read()) if text and "{" in text else text

    return Formatter


def _shared() -> dict[str, Any]:
    """What the shared options' help texts name."""
    from gateway.agents.http import HttpSettings
    from gateway.agents.policy import ENV_VAR
    from gateway.floor.host import Limits

    return {
        "allow_env": ENV_VAR,
        "agent_timeout": HttpSettings().timeout,
        "max_exchanges": Limits().max_agent_exchanges,
    }


def add_data_option(p: argparse.ArgumentParser) -> None:
    """``--data``: where the records are (``serve``, ``talk``, ``history``, ``export``)."""
    from gateway.records.open import DATABASE_ENV
    from gateway.records.paths import DATA_ENV, default_data_dir

    p.add_argument(
        "--data",
        metavar="DIR|URL",
        help="records folder, or a postgresql:// database several nodes can share (default: "
        f"${DATABASE_ENV}, else ${DATA_ENV}, else {default_data_dir()})",
    )


def agent_http_settings(timeout_s: float | None) -> Any:
    """The HTTP limits for agents with ``--agent-timeout`` applied (None: the defaults)."""
    from gateway.agents.http import HttpSettings

    if timeout_s is None:
        return None
    # Connecting is quick or the agent is down: never longer than the whole answer may take.
    return HttpSettings(
        timeout=timeout_s, connect_timeout=min(HttpSettings().connect_timeout, timeout_s)
    )


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative: give 0 or more")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds")
    return value


def add_conversation_options(p: argparse.ArgumentParser) -> None:
    """The options of the commands that hold conversations (``serve``, ``talk``; their help
    formatter is :func:`defaults_shown`'s): where they are recorded, and which addresses their
    agents may be reached at."""
    add_data_option(p)
    p.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        default=None,
        help="keep no records of conversations",
    )
    p.add_argument(
        "--allow-address",
        dest="allow_addresses",
        action="append",
        metavar="CIDR",
        help="let agents be reached at these addresses although they are loopback/private "
        "(repeatable; also {allow_env}=cidr,cidr). Example: 127.0.0.0/8",
    )
    p.add_argument(
        "--max-agent-exchanges",
        type=_count,
        metavar="N",
        help="agents answering agents allowed in one turn of the person ({max_exchanges}); "
        "beyond it their replies are dropped and the person told (docs/floor.md)",
    )
    p.add_argument(
        "--agent-timeout",
        dest="agent_timeout_s",
        type=_seconds,
        metavar="SECONDS",
        help="seconds an agent has to answer each envelope ({agent_timeout:g}); a slow agent "
        "is told about, and removed after two slow turns in a row (docs/floor.md)",
    )


# ------------------------------------------------------------------------------- agents serve
def _agents_server_defaults() -> dict[str, Any]:
    from gateway.agents.server import run_agents_server

    return {k: v.default for k, v in inspect.signature(run_agents_server).parameters.items()}


def add_agents_command(sub: argparse._SubParsersAction) -> None:
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
    ps.set_defaults(func=cmd_agents_serve)


def cmd_agents_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; an option not given leaves the server's default."""
    from gateway.agents.server import run_agents_server

    run_agents_server(**given(host=args.host, port=args.port, names=args.name))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
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
