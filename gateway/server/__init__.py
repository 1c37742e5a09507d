"""The browser edge: the page, the WebSocket protocol, WebRTC, and /metrics, on one port."""

from gateway.server.app import Gateway, GatewaySettings

__all__ = ["Gateway", "GatewaySettings"]
