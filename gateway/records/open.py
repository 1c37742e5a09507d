"""Which record store ``--data`` names, opened.

``--data postgresql://…`` or ``$OFP_GATEWAY_DATABASE_URL`` selects PostgreSQL
(:mod:`gateway.records.postgres`); anything else is a folder for SQLite
(:mod:`gateway.records.store`). Apart from :mod:`gateway.records.base`, the interface both stores
import, so that the interface does not import its implementations.
"""

from __future__ import annotations

import os
from pathlib import Path

from gateway.records.base import Recorder

#: Environment variable naming a PostgreSQL database when ``--data`` is not given.
DATABASE_ENV = "OFP_GATEWAY_DATABASE_URL"
_URL_SCHEMES = ("postgresql://", "postgres://")


def is_database_url(value: str | None) -> bool:
    """Whether ``value`` names a PostgreSQL database rather than a folder."""
    return bool(value) and str(value).startswith(_URL_SCHEMES)


def open_recorder(data: str | Path | None, *, retention_days: float | None = None) -> Recorder:
    """The store ``--data`` names: a ``postgresql://`` URL, else a folder (see
    :func:`gateway.records.paths.resolve_data_dir`). With no ``--data``,
    ``$OFP_GATEWAY_DATABASE_URL`` wins over ``$OFP_GATEWAY_DATA``."""
    chosen = str(data) if data else os.environ.get(DATABASE_ENV) or None
    if is_database_url(chosen):
        # Imported here: psycopg and its pool load only for a PostgreSQL node.
        from gateway.records.postgres import PostgresRecorder

        return PostgresRecorder(str(chosen), retention_days=retention_days)
    from gateway.records.paths import resolve_data_dir
    from gateway.records.store import SQLiteRecorder

    return SQLiteRecorder(
        resolve_data_dir(str(data) if data else None), retention_days=retention_days
    )
