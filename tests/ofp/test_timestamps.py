"""The one timestamp format written into Open Floor objects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from rfc3339_validator import validate_rfc3339

from gateway.ofp.timestamps import rfc3339


def test_utc_with_milliseconds_and_z_whatever_the_zone() -> None:
    at = datetime(2025, 1, 28, 16, 30, 0, 123456, tzinfo=timezone(timedelta(hours=1)))
    assert rfc3339(at) == "2025-01-28T15:30:00.123Z"
    assert rfc3339(datetime(2025, 1, 28, 15, 30, tzinfo=UTC)) == "2025-01-28T15:30:00.000Z"


def test_now_by_default() -> None:
    before = datetime.now(UTC) - timedelta(milliseconds=1)
    stamp = rfc3339()
    assert validate_rfc3339(stamp) and stamp.endswith("Z")
    assert before <= datetime.fromisoformat(stamp) <= datetime.now(UTC)
