"""How an option becomes a settings field, and the value types several commands' options share.

Each command declares its own options beside its code (``gateway/<part>/cli.py``), and so does
each part that several commands share: the records' ``--data`` (:mod:`gateway.records.cli`), the
conversation's limits and agent addresses (:mod:`gateway.floor.cli`), the assistant's model
(:mod:`gateway.llm.cli`), the speech-to-text language (:mod:`gateway.voice.cli`). Each command
builds its settings with one ``from_args``; :mod:`gateway.cli` only composes the command table. An
option's ``dest`` is the name of the settings field it sets (:func:`from_options`), and its
argparse default is ``None``: an option not given means the settings dataclass's default, which
lives there only (help texts read it from there when help is printed: :func:`defaults_shown`).

This module imports nothing of the gateway, so every part's options can use it without an
import circle.
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
            return text.format(**read()) if text and "{" in text else text

    return Formatter


# ------------------------------------------------------------------------------ value types
def count(text: str) -> int:
    """A count: 0 or more (what 0 means, none or no limit, the option's help says)."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative: give 0 or more")
    return value


def positive_int(text: str) -> int:
    """A whole number, 1 or more."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give 1 or more")
    return value


def seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds")
    return value


def seconds_or_zero(text: str) -> float:
    """A finite number of seconds, or 0 for never."""
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds (0: never)")
    return value
