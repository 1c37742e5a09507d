"""The turn rule (gateway/proxy/turn_rule.py): how the end-of-turn signals' verdict at one
pause becomes the silence to wait, and why. Verdicts are built by hand (fake scores: the
semantic signal's P(finished) is one more input), so no model runs and every decision is
checked exactly; the turn-taker applying the rule is tests/proxy/test_turn_taker.py.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gateway.proxy.sentences import looks_final
from gateway.proxy.settings import SessionSettings
from gateway.proxy.turn_rule import Decision, TurnRule, Verdict

PATIENT = TurnRule(
    signals=("prosody",),
    doubt_ms=1500,
    unfinished_ms=900,
    max_wait_ms=2000,
    confident=0.7,
    doubtful=0.3,
)

#: The patient rule with the semantic signal consulted.
SEMANTIC = replace(PATIENT, semantic_low=0.01, semantic_high=0.1, semantic_wait_ms=2000)


def test_rule_wait_grows_with_doubt():
    final = "Turn on the lights."
    assert PATIENT.wait_ms(Verdict(final, {"prosody": 0.9})) == 200
    assert PATIENT.wait_ms(Verdict(final, {"prosody": 0.1})) == 1500
    assert PATIENT.wait_ms(Verdict(final, {"prosody": 0.5})) == 850  # halfway
    assert PATIENT.wait_ms(Verdict(final, {})) == 200  # no signal could judge
    assert PATIENT.wait_ms(Verdict("Turn on the", {"prosody": 0.9})) == 900
    # A rising pitch is how a question ends: prosody is not asked about one.
    assert PATIENT.wait_ms(Verdict("Is it raining?", {"prosody": 0.1})) == 200
    # Signals the rule does not consult do not count.
    assert PATIENT.wait_ms(Verdict(final, {"smart_turn": 0.0, "prosody": 0.9})) == 200


def test_rule_settings_are_checked():
    with pytest.raises(ValueError):
        TurnRule(doubt_ms=3000, max_wait_ms=2000)
    with pytest.raises(ValueError):
        TurnRule(confident=0.2, doubtful=0.6)


def test_rule_decisions_name_their_reason():
    rule = SessionSettings().turn_rule
    assert rule.decide(Verdict("Turn on the lights.", {"prosody": 0.9})).reason == "finished"
    assert rule.decide(Verdict("Turn on the lights.", {"prosody": 0.55})).reason == "doubt"
    assert rule.decide(Verdict("Turn on the", {"prosody": 0.9})).reason == "unfinished"
    assert rule.decide(Verdict("Yes.", {"prosody": 0.9})).reason == "one word"


def test_one_word_heard_twice_is_still_one_word():
    rule = SessionSettings().turn_rule
    assert not looks_final("No. No.", min_words=2) and looks_final("No. No.")
    assert rule.decide(Verdict("No. No.", {"prosody": 0.2})) == rule.decide(
        Verdict("No.", {"prosody": 0.2})
    )
    assert rule.decide(Verdict("Thanks. Thanks.", {"prosody": 0.9})).reason == "one word"
    assert looks_final("Go home.", min_words=2), "two different words are a sentence"


@pytest.mark.parametrize(
    ("text", "prosody", "reason"),
    [
        ("Open the garage door", 0.65, "unpunctuated"),  # Whisper left the period off
        ("Open the garage door", 0.3, "unfinished"),  # ... and the voice doubts it
        ("turn on the light", 0.14, "unfinished"),
        ("Book a table for", 0.9, "unfinished"),  # a sentence does not end on "for"
        ("Turn on the lights,", 0.9, "unfinished"),
        ("Turn on the lights -", 0.9, "unfinished"),
        ("Open", 0.9, "unfinished"),  # one word needs its punctuation
    ],
)
def test_words_without_their_final_mark(text, prosody, reason):
    default = SessionSettings().turn_rule
    rule = replace(default, unpunctuated_ms=400)
    decision = rule.decide(Verdict(text, {"prosody": prosody}))
    assert decision.reason == reason
    assert decision.wait_ms == (400 if reason == "unpunctuated" else 900)
    assert default.decide(Verdict(text, {"prosody": prosody})).reason == "unfinished", "off"
    assert replace(TurnRule(), unpunctuated_ms=400).decide(Verdict(text)).reason == "unfinished"


def test_clearly_unfinished_words_wait_longer_whatever_the_punctuation_and_the_voice():
    # Whisper punctuated the fragment and the voice sounds finished: the old rule ends at 200.
    verdict = Verdict("I would like to go to the shop.", {"prosody": 0.9, "semantic": 0.001})
    assert PATIENT.decide(verdict).wait_ms == 200, "without the semantic signal"
    assert SEMANTIC.decide(verdict) == Decision(2000, "semantic unfinished")
    assert SEMANTIC.decide(Verdict("Go to the", {"semantic": 0.0})) == Decision(
        2000, "semantic unfinished"
    )
    # Already waited for longer by the transcript rule: that wait stands, and its reason.
    # One word is left to the one-word rule: the model expects more after "stop".
    assert SEMANTIC.decide(Verdict("Stop.", {"semantic": 0.0})) == Decision(900, "unfinished")
    rule = replace(SEMANTIC, semantic_wait_ms=800)
    assert rule.decide(Verdict("Go to the", {"semantic": 0.0})) == Decision(900, "unfinished")


def test_clearly_finished_words_stand_in_for_the_transcript_rule():
    # The transcript rule distrusts a last "at"; sure words and Whisper's "?" outweigh it.
    at = Verdict("What are you looking at?", {"prosody": 0.9, "semantic": 0.8})
    assert PATIENT.decide(at) == Decision(900, "unfinished")
    assert SEMANTIC.decide(at) == Decision(200, "semantic finished")
    # Between the thresholds the semantic signal says nothing: the older rule decides.
    unsure = Verdict("What are you looking at?", {"prosody": 0.9, "semantic": 0.05})
    assert SEMANTIC.decide(unsure) == Decision(900, "unfinished")
    # Whisper left the final mark off: a sign it heard no ending, which sure words do not undo
    # ("turn on the light | in the kitchen please" came back so, and sounded finished)...
    bare = Verdict("turn on the light", {"prosody": 0.7, "semantic": 0.8})
    assert SEMANTIC.decide(bare) == Decision(900, "unfinished")
    # ...unless the voice is very sure too: then a wait between the two.
    sure = Verdict("turn on the light", {"prosody": 0.99, "semantic": 0.8})
    assert SEMANTIC.semantic_unpunctuated_ms == 400
    assert SEMANTIC.decide(sure) == Decision(400, "semantic finished")
    assert replace(SEMANTIC, semantic_unpunctuated_ms=None).decide(sure) == Decision(
        900, "unfinished"
    )
    # Not for unsure words, nor for words that end on "the" or a comma.
    assert SEMANTIC.decide(
        Verdict("turn on the light", {"prosody": 0.99, "semantic": 0.05})
    ) == Decision(900, "unfinished")
    for cut in ("turn on the", "turn on the light,"):
        assert SEMANTIC.decide(Verdict(cut, {"prosody": 0.99, "semantic": 0.8})).wait_ms == 900


def test_unsure_words_end_the_turn_only_with_a_very_sure_voice():
    # "Text Maria that I am running | ten minutes late" came back "…running." at the pause,
    # scored between the thresholds, and sounded finished enough for the older rule.
    rule = replace(SEMANTIC, semantic_unsure_ms=900, semantic_voice=0.9)
    running = Verdict("Text Maria that I am running.", {"prosody": 0.72, "semantic": 0.05})
    assert SEMANTIC.decide(running) == Decision(200, "finished"), "off: the older rule"
    assert rule.decide(running) == Decision(900, "semantic unsure")
    # A very sure voice ends it as before; so do sure words and clearly unfinished ones decide
    # as before.
    sure_voice = Verdict("Set the temperature to 20 degrees.", {"prosody": 0.95, "semantic": 0.05})
    assert rule.decide(sure_voice) == Decision(200, "finished")
    assert rule.decide(Verdict(running.text, {"prosody": 0.72, "semantic": 0.5})) == Decision(
        200, "finished"
    )
    assert rule.decide(Verdict(running.text, {"prosody": 0.72, "semantic": 0.001})) == Decision(
        2000, "semantic unfinished"
    )
    # No audio signal to be sure: the unsure words wait.
    assert replace(rule, signals=()).decide(Verdict(running.text, {"semantic": 0.05})) == (
        Decision(900, "semantic unsure")
    )
    # Never shorter than what the older rule already waits, and one word is the one-word rule's.
    doubt = Verdict(running.text, {"prosody": 0.1, "semantic": 0.05})
    assert rule.decide(doubt) == Decision(1500, "doubt")
    assert rule.decide(Verdict("Thanks.", {"prosody": 0.7, "semantic": 0.05})).reason != (
        "semantic unsure"
    )
    with pytest.raises(ValueError, match="semantic_unsure_ms"):
        replace(rule, semantic_unsure_ms=5000)


def test_the_default_rule_makes_unsure_words_wait_as_unfinished_ones():
    rule = SessionSettings().turn_rule
    assert rule.semantic_low is not None and rule.semantic_unsure_ms == rule.unfinished_ms
    between = (rule.semantic_low + rule.semantic_high) / 2
    running = Verdict("Text Maria that I am running.", {"prosody": 0.72, "semantic": between})
    assert rule.decide(running) == Decision(rule.unfinished_ms, "semantic unsure")


def test_a_doubting_voice_still_waits_unless_the_words_may_overrule_it():
    # "Turn on the light" is complete to any reader; a voice that goes on says otherwise.
    verdict = Verdict("Turn on the light.", {"prosody": 0.1, "semantic": 0.8})
    assert SEMANTIC.decide(verdict) == Decision(1500, "doubt")
    # Never longer than the older rule's wait, either.
    at = Verdict("What are you looking at?", {"prosody": 0.1, "semantic": 0.8})
    assert SEMANTIC.decide(at) == Decision(200, "semantic finished"), "a question: no prosody"
    said = Verdict("Turn the radio on.", {"prosody": 0.1, "semantic": 0.8})
    assert SEMANTIC.decide(said) == Decision(900, "unfinished")
    # A rule whose words overrule the voice ends both at the short pause.
    overruling = replace(SEMANTIC, semantic_over_voice=True)
    assert overruling.decide(verdict) == Decision(200, "semantic finished")
    assert overruling.decide(said) == Decision(200, "semantic finished")


def test_a_question_the_words_doubt_keeps_the_voice():
    # A rising pitch ends a question, so a question's prosody is not asked... unless the words
    # are not clearly finished: Whisper dropped a dangling "in" ("Can you find me a cheap
    # hotel in | Rome") and the voice, which went on, decides.
    rule = replace(SEMANTIC, semantic_high=0.02, semantic_question=0.1)
    dropped = Verdict("Can you find me a cheap hotel?", {"prosody": 0.1, "semantic": 0.03})
    assert rule.decide(dropped) == Decision(1500, "doubt")
    whole = Verdict("Can you find me a cheap hotel?", {"prosody": 0.1, "semantic": 0.5})
    assert rule.decide(whole) == Decision(200, "finished")
    # Without a score (the model did not answer) or without the signal: as before.
    assert rule.decide(Verdict(dropped.text, {"prosody": 0.1})) == Decision(200, "finished")
    assert PATIENT.decide(dropped) == Decision(200, "finished")


def test_sure_words_do_not_end_a_transcript_that_does_not_read_as_finished():
    # "… to the" and one word alone are not shortened, however sure the model is.
    assert SEMANTIC.decide(Verdict("Turn on the", {"semantic": 0.9})).reason == "unfinished"
    assert SEMANTIC.decide(Verdict("Yes.", {"semantic": 0.9})).reason == "unfinished"
    # And when everything already says "finished", the reason stays the transcript's.
    quick = Verdict("Turn on the lights.", {"prosody": 0.9, "semantic": 0.9})
    assert SEMANTIC.decide(quick) == Decision(200, "finished")


def test_a_missing_semantic_score_leaves_the_old_decision():
    verdict = Verdict("Turn on the lights.", {"prosody": 0.1})
    assert SEMANTIC.decide(verdict) == PATIENT.decide(verdict)
    # A rule that does not consult the signal ignores its score.
    assert PATIENT.decide(Verdict("Turn on the lights.", {"prosody": 0.9, "semantic": 0.0})) == (
        Decision(200, "finished")
    )
    assert not PATIENT.semantic and SEMANTIC.semantic


def test_semantic_settings_that_cannot_work_are_refused():
    with pytest.raises(ValueError, match="semantic_low"):
        replace(PATIENT, semantic_low=0.5, semantic_high=0.1)
    with pytest.raises(ValueError, match="semantic_wait_ms"):
        replace(PATIENT, semantic_low=0.01, semantic_wait_ms=5000)
