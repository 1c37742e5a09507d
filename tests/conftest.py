"""Fixtures shared by several test packages: a real PostgreSQL server for the whole session."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest

from gateway.cluster.postgres import PostgresUnavailable, TempPostgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[TempPostgres]:
    """A PostgreSQL server (Debian's ``postgresql``) in a temporary folder, for the session.

    Where PostgreSQL cannot be installed the tests that need it are skipped with the reason in
    the summary and a warning; under CI (``scripts/test`` installs it) they fail instead, so a
    broken install never passes for a skip.
    """
    try:
        server = TempPostgres(fsync=False).start()  # fsync off: the folder dies with the tests
    except PostgresUnavailable as exc:
        reason = f"NO POSTGRESQL HERE, PostgreSQL tests not run: {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_server: TempPostgres, request: pytest.FixtureRequest) -> Iterator[str]:
    """The URL of a new, empty database on the session's server, dropped after the test."""
    import psycopg

    name = f"t{abs(hash(request.node.nodeid)) % 10**12}_{os.getpid()}"
    admin = postgres_server.url
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    yield admin.rsplit("/", 1)[0] + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
