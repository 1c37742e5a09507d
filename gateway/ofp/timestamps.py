"""The one time format the gateway writes into Open Floor objects (``span.startTime`` …)."""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def rfc3339(at: datetime | None = None) -> str:
    """``at`` (default: now) as RFC 3339 in UTC with milliseconds, e.g.
    ``2025-01-28T15:30:00.123Z``. A naive time is taken as local time, Python's convention."""
    at = datetime.now(UTC) if at is None else at
    return at.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stamp(at: datetime) -> str:
    """``at`` as RFC 3339 in its own zone when it has one (``…+01:00``: the person's, see
    :func:`rfc3339_in`), else in UTC (``…Z``, :func:`rfc3339`)."""
    if at.tzinfo is None or at.tzinfo is UTC:
        return rfc3339(at)
    return rfc3339_in(at.tzinfo, at)


def rfc3339_in(zone: tzinfo | None = None, at: datetime | None = None) -> str:
    """``at`` (default: now) as RFC 3339 with milliseconds in ``zone`` (None: this machine's),
    its UTC offset written out (``2025-01-28T16:30:00.123+01:00``): how the gateway stamps the
    person's utterances, so that agents know the person's time zone (docs/floor.md)."""
    at = datetime.now(UTC) if at is None else at
    return at.astimezone(zone).isoformat(timespec="milliseconds")


def zone_named(name: str | None) -> tzinfo | None:
    """The IANA time zone ``name`` ("Europe/Paris"), or None for one that is absent, unknown or
    not a zone name at all (a page's field: never an error)."""
    if not name or len(name) > 64:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
