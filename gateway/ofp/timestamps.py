"""The one time format the gateway writes into Open Floor objects (``span.startTime`` …)."""

from __future__ import annotations

from datetime import UTC, datetime


def rfc3339(at: datetime | None = None) -> str:
    """``at`` (default: now) as RFC 3339 in UTC with milliseconds, e.g.
    ``2025-01-28T15:30:00.123Z``. A naive time is taken as local time, Python's convention."""
    at = datetime.now(UTC) if at is None else at
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
