"""One error tree: every exception class of the gateway derives from ``GatewayError``, the tree
drawn in ``gateway/errors.py`` is the real one, and the command line turns a ``GatewayError`` into
one line on stderr and exit code ``EXIT_GATEWAY_ERROR``, leaving a bug its traceback."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import gateway
import gateway.errors
from gateway import cli
from gateway.agents import cli as agents_cli
from gateway.agents.errors import AgentError, UnknownAgent
from gateway.errors import EXIT_GATEWAY_ERROR, Busy, ConfigError, GatewayError, SpeechError
from gateway.ofp import EnvelopeError
from gateway.records.errors import RecordsError
from gateway.records.sql import SQLRecorder
from gateway.records.store import SQLiteRecorder

#: Modules left out of the walk, and why.
SKIP = {
    "gateway.__main__": "runs the command line when imported",
}


def gateway_exceptions() -> list[type[BaseException]]:
    """Every exception class defined in a module of the ``gateway`` package (all imported)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(gateway.__path__, "gateway."):
        if info.name in SKIP:
            continue
        module = importlib.import_module(info.name)  # a module that cannot import fails here
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return [found[k] for k in sorted(found)]


def test_every_exception_class_derives_from_gateway_error() -> None:
    classes = gateway_exceptions()
    assert len(classes) >= 30  # the walk really reached the subpackages
    outside = [f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, GatewayError)]
    assert outside == [], "a new root: derive it from GatewayError (gateway/errors.py)"


def test_the_tree_in_the_docstring_names_every_class() -> None:
    """The drawing in gateway/errors.py is the documentation: each class is in it, and each
    name in it is a class, under the group it is drawn in."""
    tree = (gateway.errors.__doc__ or "").split("::", 1)[1].split("\n\n")[1]
    drawn = set()
    for line in tree.splitlines():
        text = line.lstrip("│├└─ ")
        if text[:1].isupper():  # a class (or several), then its description after two spaces
            head = re.split(r"\s{2,}", text)[0]
            drawn |= {name.strip() for name in head.split(",") if name.strip()}
    names = {c.__name__ for c in gateway_exceptions()}
    assert names - drawn == set(), "draw the new class in gateway/errors.py"
    assert drawn - names == set(), "the drawing names a class that does not exist"


@pytest.mark.parametrize(
    ("dotted", "group"),
    [
        ("gateway.catalogue.ModelNotAvailable", ConfigError),
        ("gateway.render.voices.VoiceConfigError", ConfigError),
        ("gateway.cluster.postgres.PostgresUnavailable", ConfigError),
        ("gateway.voice.stt.TranscriberBusy", Busy),
        ("gateway.render.tts.SynthesizerBusy", Busy),
        ("gateway.workers.PoolFull", Busy),
        ("gateway.floor.manager.FloorBusy", Busy),
        ("gateway.render.tts.SynthesizerBusy", SpeechError),
        ("gateway.render.decode.AudioDecodeError", SpeechError),
        ("gateway.records.export.ExportRefused", RecordsError),
        ("gateway.agents.policy.RefusedHost", AgentError),
        ("gateway.agents.errors.UnknownAgent", AgentError),
    ],
)
def test_errors_are_caught_by_their_group(dotted: str, group: type[Exception]) -> None:
    module, name = dotted.rsplit(".", 1)
    assert issubclass(getattr(importlib.import_module(module), name), group)


def test_builtin_bases_callers_catch_are_kept() -> None:
    """Callers catch these builtins: the server answers a bad invite (``ValueError``) as a bad
    request, aiohttp wraps only an ``OSError`` from a resolver."""
    from gateway.agents.policy import RefusedHost
    from gateway.render.decode import AudioDecodeError
    from gateway.render.ssml import SSMLError

    assert issubclass(EnvelopeError, ValueError) and issubclass(UnknownAgent, ValueError)
    assert issubclass(SSMLError, ValueError) and issubclass(AudioDecodeError, ValueError)
    refused = RefusedHost("evil.example", "it resolves to 127.0.0.1")
    assert isinstance(refused, OSError) and str(refused) == "evil.example: it resolves to 127.0.0.1"
    assert refused.errno is None and refused.why == "it resolves to 127.0.0.1"


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_a_records_location_that_cannot_be_used_exits_with_one_line(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("not a folder")
    done = run_cli(
        "serve", "--allocator", "system", "--port", "0", "--data", str(not_a_folder / "records"),
        cwd=tmp_path,
    )
    assert done.returncode == EXIT_GATEWAY_ERROR, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr
    assert lines[0].startswith("ofp-gateway: cannot use ") and "--data DIR" in lines[0]
    assert done.stdout == ""  # never said it was ready


def test_an_unknown_agent_exits_with_one_line(tmp_path: Path) -> None:
    done = run_cli("agents", "serve", "--port", "0", "--name", "weather", cwd=tmp_path)
    assert done.returncode == EXIT_GATEWAY_ERROR, done.stderr
    assert done.stderr == (
        "ofp-gateway: no built-in agent called weather; choose from parrot, clock, concierge, "
        "assistant, convener\n"
    )


def test_a_bug_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a GatewayError is turned into a message: anything else propagates from main()
    (the interpreter prints its traceback and exits 1)."""

    def broken(args: object) -> int:
        raise KeyError("a bug")

    monkeypatch.setattr(agents_cli, "cmd_agents_serve", broken)
    with pytest.raises(KeyError, match="a bug"):
        cli.main(["agents", "serve"])


def test_main_turns_a_gateway_error_into_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuses(args: object) -> int:
        raise RecordsError("cannot open the record store x:\n  the disk is full; free some space")

    monkeypatch.setattr(agents_cli, "cmd_agents_serve", refuses)
    assert cli.main(["agents", "serve"]) == EXIT_GATEWAY_ERROR
    assert capsys.readouterr().err == (
        "ofp-gateway: cannot open the record store x: the disk is full; free some space\n"
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SQLRecorder]:
    """Each record store, empty (PostgreSQL: a new database on the session's server)."""
    if request.param == "sqlite":
        opened: SQLRecorder = SQLiteRecorder(tmp_path / "records")
    else:
        from gateway.records.postgres import PostgresRecorder

        opened = PostgresRecorder(request.getfixturevalue("postgres_url"))
    yield opened
    opened.close()


def test_what_a_store_cannot_keep_is_a_records_error_and_the_store_goes_on(
    store: SQLRecorder,
) -> None:
    """A speaker URI no engine can store (a lone surrogate, which JSON allows) fails as the one
    error the host catches around the records, not as the driver's own."""
    at = datetime.now(UTC)
    hostile = {"speakerUri": "tag:\ud800", "conversationalName": "x"}
    with pytest.raises(RecordsError, match=f"record (store|database) {re.escape(store.location)}"):
        store.envelope("c1", direction="in", peer="tag:\ud800", envelope={}, at=at)
    with pytest.raises(RecordsError):
        store.floor_changed("c1", conversants=[hostile], floor_granted=[], convener=None, at=at)
    store.envelope("c1", direction="in", peer="tag:ok", envelope={}, at=at)
    assert [r.peer for r in store.get_conversation("c1").records] == ["tag:ok"]
    with pytest.raises(ValueError, match="direction"):  # a caller's mistake stays a ValueError
        store.envelope("c1", direction="sideways", peer="tag:ok", envelope={}, at=at)


def test_a_closed_sqlite_store_fails_as_a_records_error(tmp_path: Path) -> None:
    store = SQLiteRecorder(tmp_path / "records")
    store.close()
    for call in (
        lambda: store.list_conversations(),
        lambda: store.holder("c1"),
        lambda: store.hold("c1", node="n1"),
        lambda: store.conversation_ended("c1", at=datetime.now(UTC)),
    ):
        with pytest.raises(RecordsError, match="failed: Cannot operate on a closed database"):
            call()
