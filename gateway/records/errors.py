"""The one exception of :mod:`gateway.records`."""

from __future__ import annotations

from gateway.errors import GatewayError


class RecordsError(GatewayError):
    """A record cannot be stored, found or exported; the message says what to do about it."""
