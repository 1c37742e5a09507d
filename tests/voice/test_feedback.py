"""The feedback reader with its real model (SmolLM2-135M embeddings on llama.cpp) and the
committed probe.

Clear cases only, each with a wide margin (measured 2026-12-05: feedback ≥ 0.98, requests
≤ 0.01), so that any CPU's numerics pass; where the probe's borderline phrases fall is for
``scripts/train_feedback_probe.py``'s leave-one-set-out figures, not for a test.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from gateway.catalogue import ModelNotAvailable
from gateway.llm.embedded import LlamaSettings, model_path
from gateway.testing.train_feedback import (
    CORPUS_FOLDS,
    EXCLUDED,
    corpus_phrases,
    phrases,
    training_phrases,
)
from gateway.voice.feedback import (
    FEEDBACK_PROBE,
    FeedbackReader,
    FeedbackSettings,
    default_feedback,
)

#: A listener's feedback, as the reader gets it (the words after the backchannel's). Measured:
#: 1.000 (the twenty-ninth set's "Uh-huh, I know the feeling.", trained on), 1.000 and 0.990
#: (phrases of no set).
FEEDBACK = ("i know the feeling", "that is great to hear", "that's lovely")
#: Requests. Measured: 0.007 and 0.007 (the twenty-ninth set's), 0.006 (the tuning set's, which
#: the probe is not fitted on), 0.001 (no set's).
REQUESTS = ("i need a taxi", "where do i park", "what time is it", "skip this")


@pytest.fixture(scope="module")
def reader() -> Iterator[FeedbackReader]:
    feedback = FeedbackReader(replace(FeedbackSettings(), timeout_ms=5000))
    feedback.warm_up()
    yield feedback
    feedback.close()


@pytest.mark.slow
def test_feedback_scores_high_and_requests_low(reader: FeedbackReader) -> None:
    high = {t: reader.score(t.split()) for t in FEEDBACK}
    low = {t: reader.score(t.split()) for t in REQUESTS}
    assert all(p is not None and p > 0.9 for p in high.values()), high
    assert all(p is not None and p < 0.3 for p in low.values()), low
    assert reader.last_ms > 0


@pytest.mark.slow
def test_the_words_are_joined_by_one_space(reader: FeedbackReader) -> None:
    assert reader.score(["oh", "that's", "lovely"]) == reader.score(["oh ", " that's", "lovely"])


@pytest.mark.slow
def test_no_words_or_too_many_give_no_score(reader: FeedbackReader) -> None:
    assert reader.score([]) is None and reader.score(["", " "]) is None
    said = "okay so i was thinking that we could maybe go to the park tomorrow"
    many = said.split()
    assert len(many) > reader.settings.max_words
    assert reader.score(many) is None and reader.last_ms == 0.0
    assert reader.score(many[: reader.settings.max_words]) is not None


@pytest.mark.slow
def test_a_call_while_another_runs_is_not_made(reader: FeedbackReader) -> None:
    skipped = reader.skipped
    with reader._busy:  # another call under way
        t = time.perf_counter()
        assert reader.score(["oh", "that's", "lovely"]) is None
        assert time.perf_counter() - t < 0.05, "answered at once, not queued"
    assert reader.skipped == skipped + 1 and reader.last_ms == 0.0
    assert reader.score(["oh", "that's", "lovely"]) is not None, "free again"


@pytest.mark.slow
def test_a_reader_that_does_not_answer_gives_none_and_logs_once(
    reader: FeedbackReader, caplog: pytest.LogCaptureFixture
) -> None:
    port = reader._llm.port
    failures = reader.failures
    caplog.set_level("INFO", logger="gateway.voice.feedback")
    try:
        reader._llm.port = 9  # discard: nothing listens there on loopback
        assert [reader.score(["oh", "that's", "lovely"]) for _ in range(3)] == [None] * 3
    finally:
        reader._llm.port = port
    assert reader.failures == failures + 3
    assert reader.score(["oh", "that's", "lovely"]) is not None
    said = [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records]
    assert [(level, exc) for level, _, exc in said] == [("WARNING", None), ("INFO", None)], said
    assert "did not answer" in said[0][1] and "answers again" in said[1][1]


@pytest.mark.slow
def test_a_call_past_its_timeout_gives_none(reader: FeedbackReader) -> None:
    assert reader.score(["uh", "huh", "i", "know", "the", "feeling"], timeout_ms=1) is None
    # The server finishes the call given up; the next one is answered.
    assert reader.score(["oh", "that's", "lovely"]) is not None


def test_the_committed_probe_names_the_default_model() -> None:
    probe = json.loads(FEEDBACK_PROBE.read_text())
    gguf = model_path(None)
    assert probe["model"] == {"file": gguf.name, "bytes": gguf.stat().st_size}
    assert len(probe["weights"]) == 576 and probe["pooling"] == "mean" and probe["normalised"]
    assert not set(EXCLUDED) & set(probe["trained_on"])


def _probe_copy(tmp_path: Path, change: dict[str, object]) -> Path:
    probe = json.loads(FEEDBACK_PROBE.read_text())
    probe.update(change)
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(probe))
    return path


def test_a_probe_fitted_on_another_model_is_refused(tmp_path: Path) -> None:
    gguf = model_path(None)
    other = _probe_copy(tmp_path, {"model": {"file": gguf.name, "bytes": 1 + gguf.stat().st_size}})
    with pytest.raises(ModelNotAvailable, match="fitted on the embeddings of"):
        FeedbackReader(probe=other)
    renamed = _probe_copy(tmp_path, {"model": {"file": "other.gguf", "bytes": gguf.stat().st_size}})
    with pytest.raises(ModelNotAvailable, match="train_feedback_probe"):
        FeedbackReader(probe=renamed)


def test_a_missing_or_broken_probe_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelNotAvailable, match="no feedback probe"):
        FeedbackReader(probe=tmp_path / "none.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"model": {"file": ')
    with pytest.raises(ModelNotAvailable, match="cannot be read"):
        FeedbackReader(probe=broken)
    with pytest.raises(ModelNotAvailable, match="cannot be read"):
        FeedbackReader(probe=_probe_copy(tmp_path, {"weights": "none"}))
    with pytest.raises(ModelNotAvailable, match="cannot be read"):
        FeedbackReader(probe=_probe_copy(tmp_path, {"pooling": "last"}))


def test_no_model_means_no_reader(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="gateway.voice.feedback")
    settings = FeedbackSettings(llm=LlamaSettings(model_file="/nonexistent/model.gguf"))
    assert default_feedback(settings) is None
    assert [r.getMessage().startswith("no feedback reader") for r in caplog.records] == [True]


def test_the_probes_phrases_leave_out_the_held_out_sets() -> None:
    items = phrases()
    names = {p.set for p in items}
    assert "TWENTY_NINTH" in names and "HELD_OUT" in names and "THIRTY_SEVENTH" in names
    blind = {"THIRTY_EIGHTH", "THIRTY_NINTH", "FORTIETH", "FORTY_FIRST", "FORTY_SECOND"}
    blind |= {"FORTY_THIRD", "FORTY_FOURTH", "FORTY_FIFTH"}
    blind |= {"FORTY_SIXTH", "FORTY_SEVENTH", "FORTY_EIGHTH"}
    assert not names & blind and set(EXCLUDED) == blind
    assert {p.set for p in phrases(())} >= blind
    known = {p.phrase: p for p in items}
    feeling = known["Uh-huh, I know the feeling."]
    assert (feeling.set, feeling.label, feeling.text) == (
        "TWENTY_NINTH",
        1,
        "i know the feeling",
    )
    assert known["Okay, I need a taxi."].label == 0
    assert all(p.text and p.label in (0, 1) for p in items)


def test_the_probe_is_fitted_on_the_written_corpus_too_unless_told_not(tmp_path: Path) -> None:
    corpus = corpus_phrases()
    assert {p.set for p in corpus} == {f"CORPUS_{k}" for k in range(CORPUS_FOLDS)}
    assert sum(p.label for p in corpus) > 300 and sum(1 - p.label for p in corpus) > 300
    written = {p.phrase: p for p in corpus}
    assert written["Oh, I'm in Scotland, so the rules are different."].label == 0
    sets = {p.phrase for p in phrases()}
    assert not sets & set(written), "no phrase of a set is in the corpus"
    both = training_phrases()
    assert len(both) == len(phrases()) + len(corpus)
    assert training_phrases(corpus=False) == phrases()
    broken = tmp_path / "broken.tsv"
    broken.write_text("backchannel\tOh, nice one.\nfeedback Oh, lovely.\n")
    with pytest.raises(ValueError, match="line 2"):
        corpus_phrases(broken)
