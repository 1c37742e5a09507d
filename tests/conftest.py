"""Fixtures shared by several test packages: a real PostgreSQL server for the whole session,
``serve`` processes started on demand, a loopback site for agents written inside a test, and one
real Piper synthesizer (the rendering and the playout tests).

Fixtures live in ``conftest.py`` files and are used by name; what a test imports (helpers,
constants, page clients) lives in ``gateway/testing/`` or a package's ``helpers.py``, never in a
conftest module.

``slow`` (declared in ``pyproject.toml``) marks every test that loads a speech model, starts a
process that does (``serve``), or drives a browser, so ``pytest -m "not slow"`` is the quick
run. It is kept consistent here rather than by hand: a test that uses a model fixture is marked
by :func:`pytest_collection_modifyitems`, and an unmarked test that loads a model some other way
fails (:func:`_models_only_in_slow_tests`) with the name of what it loaded.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterator

import pytest

from gateway.cluster.postgres import PostgresUnavailable, TempPostgres
from gateway.render import Synthesizer, VoiceSettings
from gateway.render.tts import load_voice
from gateway.testing import processes
from gateway.testing.loopback import Site
from gateway.testing.processes import Served, start_gateway

#: Fixtures that hold a model, a ``serve`` process (which loads them) or a browser: a test using
#: one, directly or through another fixture, is slow.
SLOW_FIXTURES = frozenset(
    {"synth", "vad", "transcriber", "models", "served_gateway", "browser", "cluster"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test whose fixtures (their whole closure) include a slow one."""
    for item in items:
        if SLOW_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def _model_loaders() -> list[tuple[object, str, str]]:
    """The lowest calls every model load goes through: (owner, attribute, what it loads)."""
    import faster_whisper
    import onnxruntime
    import pymicro_wakeword

    return [
        (onnxruntime.InferenceSession, "__init__", "an ONNX model (Silero VAD, Piper, Smart Turn)"),
        (faster_whisper.WhisperModel, "__init__", "Whisper"),
        (pymicro_wakeword.MicroWakeWord, "from_builtin", "a microWakeWord model"),
    ]


@pytest.fixture(autouse=True)
def _models_only_in_slow_tests(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """In a test not marked ``slow``, note every model load (in any thread) and every ``serve``
    started, and fail the test afterwards if there was one. The load itself goes ahead, so the
    test's own outcome is unchanged; the failure names what to mark."""
    if request.node.get_closest_marker("slow") is not None:
        yield
        return
    loaded: list[str] = []
    lock = threading.Lock()

    def noting(original: object, what: str, static: bool) -> object:
        def load(*args: object, **kwargs: object) -> object:
            with lock:
                loaded.append(what)
            return original(*args, **kwargs)  # type: ignore[operator]

        return staticmethod(load) if static else load

    for owner, name, what in _model_loaders():
        static = isinstance(owner.__dict__[name], staticmethod)  # type: ignore[attr-defined]
        original = getattr(owner, name)
        monkeypatch.setattr(owner, name, noting(original, what, static))
    spawn = processes.spawn

    def spawn_noting(args: list[str], *rest: object, **kwargs: object) -> Served:
        if "serve" in args and "agents" not in args:
            with lock:
                loaded.append("a serve process (it loads the speech models)")
        return spawn(args, *rest, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(processes, "spawn", spawn_noting)
    yield
    if loaded:
        pytest.fail(
            f"{request.node.nodeid} loads {', '.join(sorted(set(loaded)))} but is not marked "
            "slow: add @pytest.mark.slow (or a module's pytestmark)",
            pytrace=False,
        )


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
