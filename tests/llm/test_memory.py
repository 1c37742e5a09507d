"""The conversation as chat messages within a token budget."""

from __future__ import annotations

from gateway.llm.memory import Transcript, chat_messages, estimate_tokens


def test_speakers_are_labelled_and_the_newest_fit_the_budget() -> None:
    t = Transcript()
    for i in range(30):
        t.add("User", f"question number {i} " + "word " * 20, mine=False)
        t.add("Assistant", f"answer number {i} " + "word " * 20, mine=True)
    t.add("Clock", "It is ten past five.", mine=False)
    messages = chat_messages("Be brief.", t.said, budget=300)
    assert messages[0].role == "system"
    assert sum(estimate_tokens(m.content) for m in messages) <= 300 + 10
    assert messages[-1].role == "user" and "Clock: It is ten past five." in messages[-1].content
    assert "answer number 29" in messages[-2].content  # newest kept
    assert not any("number 0 " in m.content for m in messages)  # oldest dropped
    assert messages[1].role == "user"  # chat templates want the user first


def test_the_question_is_kept_even_over_budget_and_duplicates_are_remembered_once() -> None:
    t = Transcript()
    t.add("User", "x" * 5000, mine=False, event_id="de:1")
    t.add("User", "again", mine=False, event_id="de:1")
    messages = chat_messages("Be brief.", t.said, budget=10)
    assert len(messages) == 2 and len(messages[1].content) <= 2100
