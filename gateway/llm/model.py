"""The assistant's language model: a remote OpenAI-compatible endpoint, or the embedded
llama.cpp started on first use and shared by everything in the process that asks for the same
weights and threads."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from collections.abc import AsyncGenerator, Sequence

from gateway.errors import one_line
from gateway.llm.client import ChatClient, ChatMessage
from gateway.llm.embedded import EmbeddedLlama, LlamaSettings
from gateway.llm.errors import LlmError, LlmUnreachable
from gateway.llm.settings import LlmSettings

log = logging.getLogger(__name__)

_shared: dict[LlamaSettings, tuple[EmbeddedLlama, int]] = {}
_shared_lock = threading.Lock()


def acquire_embedded(settings: LlamaSettings) -> EmbeddedLlama:
    """The process's embedded server for ``settings``, started (blocking: call it in a thread);
    one per distinct settings, counted, so that it is freed with the last :func:`release`."""
    with _shared_lock:
        llama, users = _shared.get(settings, (None, 0))
        if llama is None:
            llama = EmbeddedLlama(settings).start()
        _shared[settings] = (llama, users + 1)
        return llama


def release_embedded(settings: LlamaSettings) -> None:
    """One user of :func:`acquire_embedded`'s server is done; the last one stops it."""
    with _shared_lock:
        llama, users = _shared.get(settings, (None, 0))
        if llama is None:
            return
        if users <= 1:
            del _shared[settings]
            llama.close()
        else:
            _shared[settings] = (llama, users - 1)


class LanguageModel:
    """Streams chat answers from the model ``settings`` name.

    Making one is cheap and touches nothing but the API key's variable (a missing variable is a
    :class:`~gateway.errors.ConfigError` at once); the embedded model loads on the first
    question or :meth:`warm_up`. :attr:`failures` counts answers that failed, by
    :attr:`LlmError.reason <gateway.llm.errors.LlmError.reason>`, and :attr:`capped` those cut
    at a bound (both for ``/metrics``).
    """

    def __init__(self, settings: LlmSettings | None = None) -> None:
        self.settings = s = settings or LlmSettings()
        self.failures: Counter[str] = Counter()
        #: Answers cut at a bound (not failures: the person heard the answer's beginning).
        self.capped = 0
        self._client: ChatClient | None = None
        self._llama: LlamaSettings | None = None
        self._start: asyncio.Lock | None = None
        if s.url:
            self._client = ChatClient(s.url, s, key=s.api_key())

    @property
    def embedded(self) -> bool:
        """Whether this runs on the embedded llama.cpp (no ``url``)."""
        return not self.settings.url

    async def client(self) -> ChatClient:
        """The chat client, starting the embedded server first if it is not yet running."""
        if self._client is not None:
            return self._client
        if self._start is None:
            self._start = asyncio.Lock()
        async with self._start:
            if self._client is None:
                llama = LlamaSettings(
                    model_file=self.settings.model_file, threads=self.settings.threads
                )
                server = await asyncio.to_thread(acquire_embedded, llama)
                self._llama = llama
                self._client = ChatClient(server.base_url, self.settings)
        return self._client

    async def stream(self, messages: Sequence[ChatMessage]) -> AsyncGenerator[str, None]:
        """The answer to ``messages``, as it streams (see :meth:`ChatClient.stream`)."""
        try:
            client = await self.client()
        except LlmError:
            raise  # already says what is wrong
        except Exception as exc:  # ModelNotAvailable, the C++ loader: no model to ask
            raise LlmUnreachable(f"the language model could not start: {one_line(exc)}") from exc
        async for delta in client.stream(messages):
            yield delta

    def failed(self, err: LlmError) -> None:
        """Count a failed answer and log it (the message never holds the key)."""
        self.failures[err.reason] += 1
        log.warning("the language model failed (%s): %s", err.reason, one_line(err))

    async def warm_up(self) -> None:
        """Start the embedded model now (about 0.4 s) instead of at the first question; a
        failure is logged, not raised: the assistant apologises when asked."""
        if not self.embedded:
            return
        try:
            await self.client()
        except Exception as exc:
            log.warning("the embedded language model did not start: %s", one_line(exc))

    async def aclose(self) -> None:
        """Close the client and let go of the embedded server."""
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()
        if self._llama is not None:
            await asyncio.to_thread(release_embedded, self._llama)
            self._llama = None
        if self.settings.url:  # a remote client is made again if asked after closing
            self._client = ChatClient(self.settings.url, self.settings, key=self.settings.api_key())
