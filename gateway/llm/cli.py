"""The assistant's language model on the command line (``serve``, ``talk``, ``agents serve``):
:func:`add_llm_options`, read back with :func:`llm_from_args`."""

from __future__ import annotations

import argparse

from gateway.errors import ConfigError
from gateway.llm.settings import LlmSettings
from gateway.options import given, positive_int


def add_llm_options(p: argparse.ArgumentParser) -> None:
    """The ``--llm-*`` options. The help texts name :class:`~gateway.llm.settings.LlmSettings`'s
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
        type=positive_int,
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
