"""A continuation in the record (issue 38, item 3): the person went on with a request after its
first part was sent. OFP has no retraction, so both utterances and what answered the first part
stay as sent; a ``heard`` record says which replaced which, and a rejoin after a restart (the
page's history rebuilt from the records) and the exports read it. Against SQLite and PostgreSQL.
"""

from __future__ import annotations

from gateway.ofp import text_event
from gateway.records import Recorder, to_mplp_dialog
from gateway.records.reading import replaced
from gateway.server.messages import AgentUtterance, FinalTranscript
from gateway.server.rooms import page_history
from gateway.testing.records import ALICE, USER, Script, _Writer, run, utterance

PART = "Turn on the lights."
WHOLE = "Turn on the lights. In the kitchen, please."


def _two_parts(recorder: Recorder, *, replaced_record: bool = True) -> dict[str, str]:
    """The person says the first part, Alice answers it, the person goes on (the gateway notes
    the replacement), the whole request goes out and Alice answers that: their ids."""
    script = Script("conv-kitchen", user_wav=b"", clip_only_wav=b"")
    w = _Writer(recorder, script)
    recorder.conversation_started(
        "conv-kitchen", at=w.tick(), title="", user_speaker_uri=USER.speaker_uri
    )
    w.members.append(ALICE)
    w.floor()
    part = text_event(USER.speaker_uri, PART)
    w.send(USER, [utterance(part)], [ALICE])
    early = text_event(ALICE.speaker_uri, "The lights are on.")
    w.send(ALICE, [utterance(early)], [USER])
    whole = text_event(USER.speaker_uri, WHOLE)
    if replaced_record:
        data = {"outcome": "replaced", "utterance": part.id, "by": whole.id, "text": PART}
        recorder.heard("conv-kitchen", data=data, at=w.tick())
    w.send(USER, [utterance(whole)], [ALICE])
    answer = text_event(ALICE.speaker_uri, "The kitchen lights are on.")
    w.send(ALICE, [utterance(answer)], [USER])
    after = text_event(USER.speaker_uri, "Thanks.")
    w.send(USER, [utterance(after)], [ALICE])
    return {"part": part.id, "early": early.id, "whole": whole.id, "answer": answer.id}


def _bubbles(recorder: Recorder) -> list[tuple[str, str]]:
    history = page_history(recorder.get_conversation("conv-kitchen"))
    return [
        ("user" if isinstance(m, FinalTranscript) else "agent", m.text)
        for m in history
        if isinstance(m, FinalTranscript | AgentUtterance)
    ]


def test_a_rejoin_shows_the_whole_request_once_and_only_its_answer(recorder: Recorder):
    ids = _two_parts(recorder)
    assert _bubbles(recorder) == [
        ("user", WHOLE),
        ("agent", "The kitchen lights are on."),
        ("user", "Thanks."),
    ]
    [whole] = [
        m for m in page_history(recorder.get_conversation("conv-kitchen")) if m.text == WHOLE
    ]
    assert isinstance(whole, FinalTranscript) and whole.replaces == ids["part"]
    # The envelopes are kept as sent: OFP has no retraction.
    texts = [
        r.data["openFloor"]["events"][0]["parameters"]["dialogEvent"]["features"]["text"]
        for r in recorder.get_conversation("conv-kitchen").records
        if r.kind == "envelope" and r.direction == "in" and r.peer == USER.speaker_uri
    ]
    assert [t["tokens"][0]["value"] for t in texts] == [PART, WHOLE, "Thanks."]


def test_without_the_replacement_record_both_parts_are_shown(recorder: Recorder):
    # What a store written before continuations were recorded gives back: as it was sent.
    _two_parts(recorder, replaced_record=False)
    assert [who for who, _ in _bubbles(recorder)] == ["user", "agent", "user", "agent", "user"]


def test_the_replacement_is_read_from_the_records(recorder: Recorder):
    ids = _two_parts(recorder)
    gone = replaced(recorder.get_conversation("conv-kitchen").records, USER.speaker_uri)
    assert gone.by == {ids["part"]: ids["whole"]}
    assert gone.answers == {ids["early"]: ids["part"]}
    assert gone.hidden(ids["part"]) and gone.hidden(ids["early"])
    assert not gone.hidden(ids["whole"]) and not gone.hidden(ids["answer"])


def test_the_mplp_export_marks_the_first_part_and_its_answer(recorder: Recorder, mplp_validator):
    ids = _two_parts(recorder)
    dialog = to_mplp_dialog(recorder.get_conversation("conv-kitchen"))
    assert not list(mplp_validator.iter_errors(dialog))
    marks = {
        m["event"]["data"]["dialogEventId"]: (
            m["event"]["data"].get("replacedBy"),
            m["event"]["data"].get("answersReplaced"),
        )
        for m in dialog["messages"]
    }
    assert marks[ids["part"]] == (ids["whole"], None)
    assert marks[ids["early"]] == (None, ids["part"])
    assert marks[ids["whole"]] == marks[ids["answer"]] == (None, None)
    [heard] = [e["data"] for e in dialog["events"] if e["event_type"] == "ofp.gateway.heard"]
    assert heard == {
        "outcome": "replaced",
        "utterance": ids["part"],
        "by": ids["whole"],
        "text": PART,
    }


def test_history_show_says_what_replaced_what(store, capsys):
    recorder = store.open()
    try:
        ids = _two_parts(recorder)
    finally:
        recorder.close()
    assert run("history", "show", "conv-kitchen", "--data", store.target) == 0
    shown = capsys.readouterr().out
    assert f'heard  replaced {ids["part"]} "{PART}" by {ids["whole"]}' in shown
