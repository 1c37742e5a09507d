"""What went over the wire to and from agents, for whoever wants to see it (``talk --json``).

A listener is set for a stretch of code with :func:`tapping`; every body an
:class:`~gateway.agents.http.HttpAgent` POSTs, and every reply body it reads, is passed to it
byte for byte, after the dialect and the conversation section were settled, so it is what the
agent really got. A context variable (not an attribute of the agent) carries the listener, because
one agent serves many conversations at once in ``serve``: each conversation's delivery tasks
inherit the listener of the code that started them, and nobody else's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar, Token

#: ``listener(direction, agent_url, body)``: direction is "sent" or "received".
WireListener = Callable[[str, str, bytes], None]

log = logging.getLogger(__name__)

_LISTENER: ContextVar[WireListener | None] = ContextVar("ofp_wire_listener", default=None)


@contextmanager
def tapping(listener: WireListener) -> Iterator[None]:
    """Pass every agent exchange made in this context (and tasks started from it) to
    ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)


def listen(listener: WireListener) -> Token[WireListener | None]:
    """Start passing exchanges in this context to ``listener`` (for code that cannot hold a
    ``with`` block open); hand the token to :func:`stop_listening`."""
    return _LISTENER.set(listener)


def stop_listening(token: Token[WireListener | None]) -> None:
    """Undo :func:`listen`. A token from another context (the caller moved to another task) is
    ignored: that context's listener dies with it."""
    with suppress(ValueError):
        _LISTENER.reset(token)


def tap(direction: str, agent_url: str, body: str | bytes) -> None:
    """Report one body to the current listener, if any. A failing listener is not the agent's
    fault and must not fail the delivery, so its errors are logged, not raised."""
    listener = _LISTENER.get()
    if listener is None:
        return
    data = body.encode("utf-8") if isinstance(body, str) else body
    try:
        listener(direction, agent_url, data)
    except Exception:  # a callback of the caller's: whatever it raises, see the docstring
        log.exception("the wire listener failed on a body %s %s", direction, agent_url)


def listening() -> bool:
    """Whether anyone listens in this context (to skip building bodies nobody will read)."""
    return _LISTENER.get() is not None
