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

from gateway.errors import ConfigError

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from gateway.llm.settings import LlmSettings

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
        "slow_notice": Limits().slow_notice_s,
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
        "--slow-notice",
        dest="slow_notice_s",
        type=_seconds_or_zero,
        metavar="SECONDS",
        help='seconds the person waits for an answer before the floor says "One moment…", '
        "naming the agent it waits on ({slow_notice:g}; 0: never said; docs/floor.md)",
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


def _seconds_or_zero(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds (0: never)")
    return value


def add_llm_options(p: argparse.ArgumentParser) -> None:
    """The assistant's language model (``serve``, ``talk``, ``agents serve``); read back with
    :func:`llm_from_args`. The help texts name :class:`~gateway.llm.settings.LlmSettings`'s
    defaults only in words: those commands' help formatters read their own settings."""
    g = p.add_argument_group("the assistant's language model (see docs/assistant.md)")
    g.add_argument(
        "--llm-url",
        type=_http_url,
        metavar="URL",
        help="an OpenAI-compatible API base, e.g. http://localhost:11434/v1 (Ollama), "
        "http://host:8000/v1 (vLLM), https://api.openai.com/v1. Default: the embedded "
        "llama.cpp (loopback only) with SmolLM2-135M",
    )
    g.add_argument("--llm-model", metavar="NAME", help="the model's name at --llm-url")
    g.add_argument(
        "--llm-key-env",
        metavar="VAR",
        help="the environment variable holding the API key (sent as a bearer token; the key "
        "itself is never logged, recorded or printed)",
    )
    g.add_argument(
        "--llm-model-file",
        metavar="GGUF",
        help="without --llm-url: a GGUF file in the models folder's llm/ (or a path) for the "
        "embedded llama.cpp",
    )
    g.add_argument(
        "--llm-threads",
        type=_positive_int,
        metavar="N",
        help="without --llm-url: the embedded model's threads (1: with speech-to-text beside "
        "it, 2 threads collapsed on 2 cores)",
    )
    g.add_argument(
        "--llm-persona",
        metavar="FILE.json",
        help="the assistant's persona: name, synopsis, keyphrases, greeting, prompt",
    )


def llm_from_args(args: argparse.Namespace) -> LlmSettings:
    """The :class:`~gateway.llm.settings.LlmSettings` the ``--llm-*`` options ask for; an option
    not given keeps the dataclass default. Options that need ``--llm-url`` (or its absence)
    are refused without it (:class:`~gateway.errors.ConfigError`)."""
    from gateway.llm.settings import LlmSettings

    values = given(
        url=getattr(args, "llm_url", None),
        model=getattr(args, "llm_model", None),
        key_env=getattr(args, "llm_key_env", None),
        model_file=getattr(args, "llm_model_file", None),
        threads=getattr(args, "llm_threads", None),
        persona_file=getattr(args, "llm_persona", None),
    )
    remote_only = [f"--llm-{k.replace('_', '-')}" for k in ("model", "key_env") if k in values]
    local_only = [
        o
        for k, o in (("model_file", "--llm-model-file"), ("threads", "--llm-threads"))
        if k in values
    ]
    if "url" not in values and remote_only:
        raise ConfigError(f"{', '.join(remote_only)} only work with --llm-url (a remote model)")
    if "url" in values and local_only:
        raise ConfigError(
            f"{', '.join(local_only)} set the embedded model, which --llm-url replaces: give one"
        )
    return LlmSettings(**values)


def _http_url(text: str) -> str:
    if not text.lower().startswith(("http://", "https://")):
        raise argparse.ArgumentTypeError(f"{text}: give an http:// or https:// API base")
    return text.rstrip("/")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give 1 or more")
    return value


def stt_language(text: str) -> str:
    """``--stt-language``: a language code Whisper knows (checked when the option is given,
    so the speech model's package is imported only then)."""
    from gateway.voice.stt import check_language

    try:
        check_language(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
