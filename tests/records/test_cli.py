"""``history`` and ``export`` registered on a bare argparse parser, run in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.records import DATABASE_ENV, to_mplp_dialog
from gateway.records.paths import DATA_ENV
from gateway.testing.records import ALICE, USER, Store, record_conversation, run, schema_errors


@pytest.fixture
def recorded(store: Store) -> str:
    """A store (a data folder, or a PostgreSQL database: each test runs on both) holding the
    conversation of conftest and a second, short one; its ``--data`` value."""
    rec = store.open()
    try:
        record_conversation(rec, "conv-lisbon-1")
        record_conversation(rec, "../../etc/passwd", end_status=None)
    finally:
        rec.close()
    return store.target


def test_history_list_is_readable(recorded: str, capsys):
    assert run("history", "list", "--data", str(recorded)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["ID", "STARTED", "MSGS", "AGENTS", "TITLE", "/", "FIRST", "WORDS"]
    row = next(line for line in lines if line.startswith("conv-lisbon-1"))
    assert "2025-03-01" in row
    assert " 5 " in row
    assert "Alice, Bob" in row
    assert row.endswith("Trip to Lisbon")
    assert len(lines) == 3


def test_history_list_json_and_the_environment_variable(
    recorded: str, store: Store, capsys, monkeypatch
):
    monkeypatch.setenv(DATABASE_ENV if store.kind == "postgresql" else DATA_ENV, recorded)
    assert run("history", "list", "--json") == 0
    listed = {c["id"]: c for c in json.loads(capsys.readouterr().out)}
    assert set(listed) == {"conv-lisbon-1", "../../etc/passwd"}
    lisbon = listed["conv-lisbon-1"]
    assert lisbon["messages"] == 5
    assert lisbon["status"] == "completed"
    assert lisbon["agents"][0] == {"speakerUri": ALICE.speaker_uri, "name": "Alice"}
    assert listed["../../etc/passwd"]["endedAt"] is None


def test_history_list_on_an_empty_folder_says_so(tmp_path: Path, capsys):
    assert run("history", "list", "--data", str(tmp_path)) == 0
    assert "no conversations recorded" in capsys.readouterr().out


def test_history_show_tells_the_story(recorded: str, capsys):
    assert run("history", "show", "conv-lisbon-1", "--data", str(recorded)) == 0
    out = capsys.readouterr().out
    assert "Trip to Lisbon" in out
    assert 'You → floor: "Plan a trip to Lisbon" +audio' in out
    assert 'floor → Bob (from Alice): "Three days is right." +audio+ssml' in out
    assert "(private to You)" in out
    assert "revokeFloor → Alice" in out
    assert "convener: Bob" in out
    assert "(unreadable envelope)" in out


def test_history_show_json_has_every_record(recorded: str, store: Store, capsys):
    assert run("history", "show", "conv-lisbon-1", "--json", "--data", str(recorded)) == 0
    doc = json.loads(capsys.readouterr().out)
    rec = store.open()
    try:
        stored = rec.get_conversation("conv-lisbon-1")
    finally:
        rec.close()
    assert [r["seq"] for r in doc["records"]] == [r.seq for r in stored.records]
    assert [r["data"] for r in doc["records"]] == [r.data for r in stored.records]


def test_export_mplp_to_a_file(recorded: str, store: Store, tmp_path: Path, mplp_validator, capsys):
    out = tmp_path / "dialog.json"
    args = ("export", "conv-lisbon-1", "--format", "mplp-dialog", "-o", str(out))
    assert run(*args, "--data", str(recorded)) == 0
    assert capsys.readouterr().out == ""
    doc = json.loads(out.read_text(encoding="utf-8"))
    assert schema_errors(mplp_validator, doc) == []
    rec = store.open()
    try:
        assert doc == to_mplp_dialog(rec.get_conversation("conv-lisbon-1", with_audio=True))
    finally:
        rec.close()


def test_export_durable_state_needs_an_agent_when_there_are_several(recorded: str, capsys):
    args = ("export", "conv-lisbon-1", "--format", "durable-agent-state", "--data", str(recorded))
    assert run(*args) == 1
    err = capsys.readouterr().err
    assert "--agent" in err and ALICE.speaker_uri in err


@pytest.mark.parametrize("agent", [ALICE.speaker_uri, USER.speaker_uri])
def test_export_durable_state_to_stdout(recorded: str, capsys, agent_framework_validators, agent):
    args = ("export", "conv-lisbon-1", "--format", "durable-agent-state", "--agent", agent)
    assert run(*args, "--data", str(recorded)) == 0
    doc = json.loads(capsys.readouterr().out)
    for validator in agent_framework_validators.values():
        assert schema_errors(validator, doc) == []


def test_hostile_ids_are_just_ids(recorded: str, store: Store, tmp_path: Path, capsys):
    assert run("history", "show", "../../etc/passwd", "--data", str(recorded)) == 0
    assert "Trip to Lisbon" in capsys.readouterr().out
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    assert run("history", "delete", "../../etc/passwd", "--data", str(recorded)) == 0
    after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    gone = set(before) - set(after)
    if store.kind == "sqlite":  # its clips are files; PostgreSQL's are rows, gone with the rest
        assert gone and all(p.parts[:2] == ("data", "audio") for p in gone)
    else:
        assert not gone
    assert run("history", "show", "../../etc/passwd", "--data", str(recorded)) == 1
    assert Path("/etc/passwd").exists()


def test_delete_then_show_and_unknown_ids_fail_helpfully(recorded: str, capsys):
    assert run("history", "delete", "conv-lisbon-1", "--data", str(recorded)) == 0
    assert "deleted conv-lisbon-1" in capsys.readouterr().out
    for argv in (
        ("history", "show", "conv-lisbon-1"),
        ("history", "delete", "conv-lisbon-1"),
        ("export", "conv-lisbon-1", "--format", "mplp-dialog"),
    ):
        assert run(*argv, "--data", str(recorded)) == 1
        err = capsys.readouterr().err
        assert "no conversation 'conv-lisbon-1'" in err and "history list" in err


def test_an_unwritable_data_folder_is_reported_not_raised(tmp_path: Path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert run("history", "list", "--data", str(blocker / "data")) == 1
    assert "OFP_GATEWAY_DATA" in capsys.readouterr().err


def test_an_unreachable_database_is_reported_not_raised(capsys):
    from gateway.cluster.postgres import free_port

    url = f"postgresql://nobody:secret@127.0.0.1:{free_port()}/none"
    assert run("history", "list", "--data", url) == 1
    err = capsys.readouterr().err
    assert "cannot open the record store" in err and "server is running" in err
    assert "secret" not in err  # the password is never printed
