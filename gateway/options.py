"""The options several commands share, and how an option becomes a settings field.

Each command declares its own options beside its code (``gateway/<part>/cli.py``) and builds its
settings with one ``from_args``; :mod:`gateway.cli` only composes the command table. An option's
``dest`` is the name of the settings field it sets (:func:`from_options`), and its argparse
default is ``None``: an option not given means the settings dataclass's default, which lives there
only (help texts read it from there when help is printed: :func:`defaults_shown`).

This module sits below every command's options (it imports none of them), so they can share it
without an import circle.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, TypeVar

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
