"""What the assistant's language model is: :class:`LlmSettings`, the one place its defaults live."""

from __future__ import annotations

import os
from dataclasses import dataclass

from gateway.errors import ConfigError


@dataclass(frozen=True)
class LlmSettings:
    """Which chat model the assistant talks to, and the bounds it keeps with it.

    ``url`` is an OpenAI-compatible API base (``http://host:port/v1``: Ollama, llama.cpp's
    server, vLLM, OpenAI); ``None`` runs the embedded llama.cpp (:mod:`gateway.llm.embedded`) on
    ``model_file`` with ``threads`` threads. ``key_env`` names the environment variable holding
    the API key: the key itself is read once, when the client is made, and is kept nowhere
    else (not in these settings, a log, a record or ``talk --json``).
    """

    #: The API base of a remote model; None: the embedded llama.cpp.
    url: str | None = None
    #: The model's name at ``url`` (Ollama, vLLM and OpenAI need it; llama.cpp ignores it).
    model: str | None = None
    #: The environment variable holding the API key (sent as a bearer token).
    key_env: str | None = None
    #: The embedded model: a GGUF file name in ``<models>/llm/`` or a path; None: SmolLM2-135M.
    model_file: str | None = None
    #: Threads of the embedded model. One: with speech-to-text busy beside it, two threads
    #: collapsed to 4–33 tokens/s while one held 41–44 (2 cores, MODELS.md).
    threads: int = 1
    #: A persona file (JSON: name, synopsis, keyphrases, greeting, prompt); None: the default.
    persona_file: str | None = None
    #: Seconds to wait for the first token (a cold remote model loads first; the embedded one
    #: answers in ~0.15 s).
    first_token_s: float = 20.0
    #: Seconds to wait between tokens once the answer streams: a server stalled mid-answer.
    token_gap_s: float = 5.0
    #: Longest answer kept, in characters; the stream is closed there (at a sentence's end).
    max_reply_chars: int = 1200
    #: Tokens asked for at most (``max_tokens``); the character cap above still applies.
    max_tokens: int = 200
    #: Sentences spoken at most: a voice answer longer than this is cut (the model is stopped)
    #: — small models ramble, and a listener cannot skim.
    max_sentences: int = 6
    #: ``frequency_penalty``: small models at temperature 0 repeat themselves (SmolLM2-135M
    #: listed the same item a dozen times without one).
    frequency_penalty: float = 0.5
    #: Longest SSE line read, in bytes: a longer one is not a token delta.
    max_line_bytes: int = 64 * 1024
    #: Tokens of conversation (and invite history) given to the model, newest kept first.
    memory_tokens: int = 1024
    #: Sampling temperature (0: the most likely token, the same answer to the same question).
    temperature: float = 0.0
    #: Sampling seed, for servers that take one (llama.cpp, vLLM, OpenAI).
    seed: int | None = 0

    def api_key(self) -> str | None:
        """The API key from ``key_env``; raises :class:`ConfigError` when the variable is not
        set (a run that would only fail with 401 at the first question)."""
        if not self.key_env:
            return None
        key = os.environ.get(self.key_env, "")
        if not key:
            raise ConfigError(
                f"--llm-key-env names {self.key_env}, which is not set in the environment"
            )
        return key
