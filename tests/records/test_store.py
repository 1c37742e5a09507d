"""The durable store: what it keeps, across reopening, deletion, retention and hostile ids."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.ofp import Conversation, Envelope, Sender, text_event
from gateway.records import RecordsError, SQLiteRecorder, resolve_data_dir
from gateway.records.paths import DATA_ENV, safe_name
from gateway.records.store import DB_NAME
from gateway.testing.records import (
    ALICE,
    BOB,
    START,
    USER,
    Script,
    Store,
    record_conversation,
    tone_wav,
)

TABLES = ("conversations", "records", "utterances", "conversants")


def _rows(store: Store, conversation_id: str) -> dict[str, int]:
    """Rows per table that belong to the conversation, read with a separate connection
    (PostgreSQL's clips are rows too; SQLite's are files, see :func:`_audio_files`)."""
    if store.kind == "postgresql":
        import psycopg

        with psycopg.connect(store.target) as db:
            counts = {
                "conversations": db.execute(
                    "SELECT count(*) FROM conversations WHERE id = %s", (conversation_id,)
                ).fetchone()[0]
            }
            for table in (*TABLES[1:], "clips"):
                counts[table] = db.execute(
                    f"SELECT count(*) FROM {table} WHERE conversation_id = %s", (conversation_id,)
                ).fetchone()[0]
            return counts
    db = sqlite3.connect(Path(store.target) / DB_NAME)
    try:
        counts = {
            "conversations": db.execute(
                "SELECT count(*) FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()[0]
        }
        for table in TABLES[1:]:
            counts[table] = db.execute(
                f"SELECT count(*) FROM {table} WHERE conversation_id = ?", (conversation_id,)
            ).fetchone()[0]
        return counts
    finally:
        db.close()


def _audio_files(data_dir: Path) -> list[Path]:
    return sorted(p for p in (data_dir / "audio").rglob("*") if p.is_file())


def test_every_envelope_floor_change_and_clip_is_kept_in_order(recorder, script: Script):
    stored = recorder.get_conversation(script.conversation_id, with_audio=True)
    envelopes = [(r.direction, r.peer, r.data) for r in stored.records if r.kind == "envelope"]
    assert envelopes == script.envelopes
    assert sum(r.kind == "floor" for r in stored.records) == script.floor_changes
    clips = [r.audio for r in stored.records if r.kind == "audio"]
    assert clips == [script.user_wav, script.clip_only_wav]
    assert [r.seq for r in stored.records] == sorted(r.seq for r in stored.records)
    assert [r.at for r in stored.records] == sorted(r.at for r in stored.records)


def test_summary_counts_each_utterance_once_and_names_the_agents(recorder, script: Script):
    [info] = recorder.list_conversations()
    assert info.id == script.conversation_id
    assert info.title == "Trip to Lisbon"
    assert info.message_count == len(script.utterances)  # not once per delivery
    assert info.first_words == "Plan a trip to Lisbon"
    assert info.agents == [ALICE.speaker_uri, BOB.speaker_uri]
    assert [info.name_of(a) for a in info.agents] == ["Alice", "Bob"]
    assert info.started_at == START
    assert info.status == "completed"
    assert info.ended_at is not None and info.ended_at > info.started_at


def test_records_survive_close_and_reopen(recorder, script: Script, store: Store):
    before = recorder.get_conversation(script.conversation_id, with_audio=True)
    recorder.close()
    reopened = store.open()
    try:
        assert reopened.get_conversation(script.conversation_id, with_audio=True) == before
        # and it keeps recording where it left off
        reopened.envelope(
            script.conversation_id,
            direction="in",
            peer=USER.speaker_uri,
            envelope={"openFloor": {}},
            at=START + timedelta(hours=1),
        )
        after = reopened.get_conversation(script.conversation_id)
        assert len(after.records) == len(before.records) + 1
        assert after.records[-1].seq > before.records[-1].seq
    finally:
        reopened.close()


def test_list_is_newest_first(recorder):
    recorder.conversation_started("older", at=START)
    recorder.conversation_started("newer", at=START + timedelta(minutes=5))
    assert [i.id for i in recorder.list_conversations()] == ["newer", "older"]


def test_an_envelope_for_an_unannounced_conversation_starts_it(recorder):
    env = Envelope(
        conversation=Conversation(id="c"),
        sender=Sender(speaker_uri=ALICE.speaker_uri),
        events=[],
    )
    recorder.envelope("c", direction="in", peer=ALICE.speaker_uri, envelope=env.to_wire(), at=START)
    [info] = recorder.list_conversations()
    assert (info.id, info.started_at, info.status, info.message_count) == ("c", START, "active", 0)


def test_bad_direction_is_refused_and_nothing_is_written(recorder):
    with pytest.raises(ValueError, match="direction"):
        recorder.envelope("c", direction="sideways", peer="p", envelope={}, at=START)
    assert recorder.list_conversations() == []


def test_delete_removes_rows_and_audio_files_of_that_conversation_only(
    recorder, script: Script, store: Store, data_dir: Path
):
    other = record_conversation(recorder, "conv-kept")
    if store.kind == "sqlite":
        assert len(_audio_files(data_dir)) == 4
    assert recorder.delete_conversation(script.conversation_id) is True
    assert set(_rows(store, script.conversation_id).values()) == {0}
    assert all(_rows(store, other.conversation_id).values())
    if store.kind == "sqlite":
        remaining = _audio_files(data_dir)
        assert len(remaining) == 2
        assert all(p.parent.name == safe_name(other.conversation_id) for p in remaining)
    assert recorder.clip(other.conversation_id, other.utterances[0].id) == other.user_wav
    assert recorder.clip(script.conversation_id, script.utterances[0].id) is None
    with pytest.raises(RecordsError, match="history list"):
        recorder.get_conversation(script.conversation_id)
    assert recorder.delete_conversation(script.conversation_id) is False


def test_retention_purges_idle_conversations_with_their_audio(store: Store, data_dir: Path):
    now = datetime.now(UTC)
    with_retention = store.open(retention_days=30)
    try:
        with_retention.conversation_started("old", at=now - timedelta(days=31))
        with_retention.audio("old", "de:1", tone_wav(), at=now - timedelta(days=31))
        with_retention.conversation_started("recent", at=now - timedelta(days=29))
        # started long ago but still talking: kept
        with_retention.conversation_started("long", at=now - timedelta(days=90))
        with_retention.floor_changed(
            "long", conversants=[], floor_granted=[], convener=None, at=now - timedelta(days=1)
        )
        assert with_retention.purge_expired(now) == ["old"]
        assert {i.id for i in with_retention.list_conversations()} == {"recent", "long"}
        assert set(_rows(store, "old").values()) == {0}
        if store.kind == "sqlite":
            assert _audio_files(data_dir) == []
        assert with_retention.purge_expired(now + timedelta(days=2)) == ["recent"]
    finally:
        with_retention.close()


def test_retention_applies_when_the_store_opens(store: Store):
    keep_all = store.open()
    keep_all.conversation_started("ancient", at=datetime.now(UTC) - timedelta(days=400))
    keep_all.close()
    reopened = store.open(retention_days=365)
    try:
        assert reopened.list_conversations() == []
    finally:
        reopened.close()


def test_retention_must_be_positive(store: Store):
    with pytest.raises(RecordsError, match="positive"):
        store.open(retention_days=0)


HOSTILE_IDS = ["../../escape", "/etc/passwd", "..", "a/../../b", "C:\\Windows\\x", "\x00nul", "é/ü"]


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_ids_from_the_network_cannot_leave_the_audio_folder(tmp_path: Path, hostile: str):
    data_dir = tmp_path / "deep" / "data"
    rec = SQLiteRecorder(data_dir)
    try:
        path = rec.audio(hostile, hostile, b"RIFF", at=START)
        audio_root = (data_dir / "audio").resolve()
        assert path.resolve().is_relative_to(audio_root)
        assert path.resolve().parent.parent == audio_root
        assert path.read_bytes() == b"RIFF"
        sentinel = tmp_path / "escape"
        sentinel.write_text("keep me")
        assert rec.delete_conversation(hostile)
        assert sentinel.read_text() == "keep me"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "escape"]
        assert _audio_files(data_dir) == []
    finally:
        rec.close()


@given(st.text(max_size=300))
def test_safe_names_are_plain_and_distinct(identifier: str):
    name = safe_name(identifier)
    assert name and all(c.isascii() and (c.isalnum() or c in "_-") for c in name)
    assert len(name) <= 57
    assert safe_name(identifier + "x") != name


def test_ids_that_sanitise_alike_get_different_folders():
    assert safe_name("a/b") != safe_name("a_b") != safe_name("a?b")


def test_unreadable_envelope_is_kept_verbatim(recorder):
    garbled = {"openFloor": {"events": [{"eventType": 42}]}, "extra": [1, 2]}
    recorder.envelope("c", direction="in", peer="p", envelope=garbled, at=START)
    [record] = recorder.get_conversation("c").records
    assert record.data == garbled


def test_an_utterance_repeated_across_deliveries_is_indexed_once(recorder):
    de = text_event(ALICE.speaker_uri, "one message, three deliveries")
    env = Envelope(
        conversation=Conversation(id="c"),
        sender=Sender(speaker_uri=ALICE.speaker_uri),
        events=[{"eventType": "utterance", "parameters": {"dialogEvent": de.to_wire()}}],
    ).to_wire()
    recorder.envelope("c", direction="in", peer=ALICE.speaker_uri, envelope=env, at=START)
    for peer in (USER.speaker_uri, BOB.speaker_uri):
        recorder.envelope("c", direction="out", peer=peer, envelope=env, at=START)
    [info] = recorder.list_conversations()
    assert info.message_count == 1


# ---------------------------------------------------------------- data folder
def test_data_folder_flag_beats_environment_beats_default(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv(DATA_ENV, raising=False)
    assert resolve_data_dir(None) == (tmp_path / "xdg" / "ofp-gateway").resolve()
    monkeypatch.setenv(DATA_ENV, str(tmp_path / "env"))
    assert resolve_data_dir(None) == (tmp_path / "env").resolve()
    assert resolve_data_dir(str(tmp_path / "flag")) == (tmp_path / "flag").resolve()
    assert all((tmp_path / d).is_dir() for d in ("xdg/ofp-gateway", "env", "flag"))


def test_without_xdg_the_default_is_under_home(tmp_path: Path, monkeypatch):
    monkeypatch.delenv(DATA_ENV, raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert resolve_data_dir(None) == (tmp_path / ".local" / "share" / "ofp-gateway").resolve()


def test_an_unusable_data_folder_is_a_clear_error(tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(RecordsError, match=r"--data DIR or set OFP_GATEWAY_DATA"):
        resolve_data_dir(str(blocker / "data"))


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path: Path):
    (tmp_path / DB_NAME).write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(RecordsError, match="another --data DIR"):
        SQLiteRecorder(tmp_path)


def test_a_store_from_a_newer_gateway_is_left_alone(tmp_path: Path):
    SQLiteRecorder(tmp_path).close()
    db = sqlite3.connect(tmp_path / DB_NAME)
    db.execute("PRAGMA user_version=99")
    db.close()
    with pytest.raises(RecordsError, match="newer ofp-gateway"):
        SQLiteRecorder(tmp_path)
