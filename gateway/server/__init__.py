"""The browser edge: the page, the WebSocket protocol, WebRTC, and /metrics, on one port."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.server.app import Gateway
    from gateway.server.settings import GatewaySettings

__all__ = ["Gateway", "GatewaySettings"]


def __getattr__(name: str) -> Any:
    # Imported when asked for, not with the package: importing any module of gateway.server
    # (messages.py for a client) must not load the whole server and its models.
    if name in __all__:
        from gateway.server import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
