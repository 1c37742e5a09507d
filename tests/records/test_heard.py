"""What the person heard, kept in the record (issue 38): a reply stopped part-way with how much
was played, and speech over an agent that was not a turn, as what it was."""

from __future__ import annotations

from datetime import UTC, datetime

from gateway.records import SQLiteRecorder, to_mplp_dialog
from gateway.records.kept import KeptRecords
from gateway.testing.records import run
from tests.records.test_kept import read_only, writable_again

AT = datetime(2026, 11, 27, 18, 0, tzinfo=UTC)
STOPPED = {"outcome": "stopped", "reply": "de:r1", "playedMs": 1240, "said": "You said: Once"}
NOD = {"outcome": "backchannel", "reply": "de:r2", "playedMs": 800, "text": "Yeah."}


def test_heard_records_are_kept_shown_and_exported_in_order(tmp_path, capsys):
    store = SQLiteRecorder(tmp_path)
    store.conversation_started("c1", at=AT, title="t")
    store.heard("c1", data=STOPPED, at=AT)
    store.heard("c1", data=NOD, at=AT)
    records = store.get_conversation("c1").records
    assert [(r.kind, r.data) for r in records if r.kind == "heard"] == [
        ("heard", STOPPED),
        ("heard", NOD),
    ]
    assert run("history", "show", "c1", "--data", str(tmp_path)) == 0
    shown = capsys.readouterr().out
    assert 'heard  stopped de:r1 after 1240 ms; the person heard "You said: Once"' in shown
    assert 'heard  backchannel over the agent, not a turn: "Yeah."' in shown
    events = to_mplp_dialog(store.get_conversation("c1"))["events"]
    assert [e["data"] for e in events if e["event_type"] == "ofp.gateway.heard"] == [STOPPED, NOD]


def test_a_heard_record_waits_while_the_store_fails_and_is_written_after(tmp_path):
    store = SQLiteRecorder(tmp_path)
    records = KeptRecords(store, retry_s=0)
    writable = read_only(store)
    records.heard("c1", data=STOPPED, at=AT)
    assert records.health().state == "failing" and records.health().pending == 1
    writable_again(store, writable)
    assert records.flush()
    assert [r.data for r in store.get_conversation("c1").records if r.kind == "heard"] == [STOPPED]
    store.close()
