"""The browser edge: the page, the WebSocket protocol, WebRTC, and /metrics, on one port."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gateway.server.app import Gateway, GatewaySettings

__all__ = ["Gateway", "GatewaySettings"]


def __getattr__(name: str) -> Any:
    # Imported when asked for, not with the package: gateway.proxy imports
    # gateway.server.messages, and gateway.server.app imports gateway.proxy.
    if name in __all__:
        from gateway.server import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
