"""Fixtures shared by several test packages: a real PostgreSQL server for the whole session,
``serve`` processes started on demand, a loopback site for agents written inside a test, and one
real Piper synthesizer (the rendering and the playout tests).

Fixtures live in ``conftest.py`` files and are used by name; what a test imports (helpers,
constants, page clients) lives in ``tests/support/`` or a package's ``helpers.py``, never in a
conftest module. The ``slow`` marker (models or a browser) is declared in ``pyproject.toml``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from gateway.cluster.postgres import PostgresUnavailable, TempPostgres
from gateway.render import Synthesizer, VoiceSettings
from gateway.render.tts import load_voice
from tests.support.loopback import Site
from tests.support.processes import Served, start_gateway


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


@pytest.fixture(scope="module")
def served_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    """Start ``serve`` with the given arguments: ``served_gateway("name", *args)`` gives a
    running gateway with its records (and ``serve.log``) in a fresh folder named after ``name``.

    Module-scoped, as the gateways it starts usually are (the speech models load once per
    process); every gateway it started is stopped when the module is done.
    """
    started: list[Served] = []

    def start(name: str, *args: str) -> Served:
        served = start_gateway(tmp_path_factory.mktemp(name), *args)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    """An aiohttp server on 127.0.0.1 for agents a test writes (``site.route(name, handler)``)."""
    s = Site()
    await s.start()
    yield s
    await s.stop()


@pytest.fixture(scope="session")
def synth() -> Iterator[Synthesizer]:
    """One real Piper synthesizer for the whole session, its voice loaded before any test's timing."""
    load_voice(VoiceSettings())
    s = Synthesizer()
    yield s
    s.close()
