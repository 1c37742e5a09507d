"""The records fixtures: a store of each kind (every test taking ``store`` or ``recorder`` runs
against SQLite and PostgreSQL), the recorded conversation, and validators for the official
export schemas. The conversation and the helpers are in ``gateway/testing/records.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft7Validator, Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT7

from gateway.records import Recorder, SQLiteRecorder
from gateway.testing.records import (
    STORE_KINDS,
    Script,
    Store,
    load_json,
    record_conversation,
)
from tests.records.helpers import (
    AGENT_FRAMEWORK_SCHEMAS,
    MPLP_COMMON,
    MPLP_DIR,
    TRACE_BASE_ID,
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture(params=STORE_KINDS)
def store(request: pytest.FixtureRequest, data_dir: Path) -> Store:
    if request.param == "postgresql":
        return Store("postgresql", request.getfixturevalue("postgres_url"))
    return Store("sqlite", str(data_dir))


@pytest.fixture
def recorder(store: Store):
    rec = store.open()
    yield rec
    rec.close()


@pytest.fixture
def sqlite_recorder(data_dir: Path):
    """The SQLite store alone, for what only it has (files on disk)."""
    rec = SQLiteRecorder(data_dir)
    yield rec
    rec.close()


@pytest.fixture
def script(recorder: Recorder) -> Script:
    return record_conversation(recorder, "conv-lisbon-1")


@pytest.fixture(scope="session")
def agent_framework_validators() -> dict[str, Draft202012Validator]:
    """One validator per published variant of the durable agent state schema, checking formats."""
    # Without rfc3339-validator installed jsonschema skips "date-time" silently.
    assert "date-time" in Draft202012Validator.FORMAT_CHECKER.checkers
    validators = {}
    for path in AGENT_FRAMEWORK_SCHEMAS:
        schema = load_json(path)
        Draft202012Validator.check_schema(schema)
        validators[path.name] = Draft202012Validator(
            schema, format_checker=Draft202012Validator.FORMAT_CHECKER
        )
    assert len(validators) == 3
    return validators


@pytest.fixture(scope="session")
def mplp_validator() -> Draft7Validator:
    """The MPLP Dialog schema (draft-07) with its ``common/`` references resolved from disk."""
    resources = [
        (schema["$id"], Resource.from_contents(schema)) for schema in map(load_json, MPLP_COMMON)
    ]
    resources.append((TRACE_BASE_ID, DRAFT7.create_resource({})))
    schema = load_json(MPLP_DIR / "mplp-dialog.schema.json")
    Draft7Validator.check_schema(schema)
    return Draft7Validator(
        schema,
        registry=Registry().with_resources(resources),
        format_checker=Draft7Validator.FORMAT_CHECKER,
    )
