"""What goes wrong talking to a language model: :class:`LlmError` and its kinds.

Each kind has a short ``reason`` (``unreachable``, ``http``, ``timeout``, ``bad_stream``,
``capped``) under which ``/metrics`` counts it. Messages never carry the API key.
"""

from __future__ import annotations

from gateway.errors import GatewayError


class LlmError(GatewayError):
    """The language model did not give an answer that could be used."""

    reason = "error"


class LlmUnreachable(LlmError):
    """The endpoint could not be reached (refused, DNS, connection reset)."""

    reason = "unreachable"


class LlmHTTPError(LlmError):
    """The endpoint answered with an HTTP error (401 wrong key, 404 unknown model, 500…)."""

    reason = "http"

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class LlmTimeout(LlmError):
    """No first token in time, or the stream stalled between tokens."""

    reason = "timeout"


class LlmBadStream(LlmError):
    """The answer was not a stream of chat deltas (no content at all, a line over the limit,
    an error object in the stream)."""

    reason = "bad_stream"
