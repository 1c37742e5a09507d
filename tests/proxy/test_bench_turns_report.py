"""The turn-taking benchmark's report of a paced run (gateway/testing/bench_turns.py, run by
``scripts/bench_turns.py``), on rows made up here."""

from __future__ import annotations

from types import ModuleType

from gateway.testing import bench_turns


def _row(kind: str, pause_ms: int, utterances: int, total: float) -> dict:
    return {
        "kind": kind,
        "voice": "piper",
        "pauseMs": pause_ms,
        "text": "Set an alarm | for seven.",
        "heard": ["Set", "an", "alarm."],
        "utterances": utterances,
        "endpoint": total - 90,
        "total": total,
        "endReason": "finished",
        "waitMs": 200,
        "verdictMs": 250,
        "decode": 190.0,
    }


def test_a_run_of_paused_requests_only_is_reported():
    # --kinds paused: no complete request, so no latency line (this raised IndexError).
    rows = [_row("paused", 350, 2, 400.0), _row("paused", 500, 1, 900.0)]
    out = bench_turns.report_paced("default", rows)
    assert out["cut350"] == "1/1" and out["cut500"] == "0/1" and out["cut700"] == "0/0"
    assert "totalMedian" not in out and out["pausedWaitMedian"] == 810.0


def test_complete_requests_give_the_latency_figures():
    rows = [_row("complete", 0, 1, t) for t in (300.0, 400.0, 500.0)]
    out = bench_turns.report_paced("default", rows)
    assert (out["totalMedian"], out["totalP95"]) == (400.0, 500.0)
    assert out["cutComplete"] == "0/3" and out["endReasons"] == {"finished": 3}


def test_a_request_said_twice_is_split_into_its_sayings_by_when_each_utterance_began():
    bench = bench_turns
    gap = bench.TWICE_GAP_S

    def said(*starts: float) -> dict:
        # 3 s of clip (0.5 s lead): the second saying starts at 3 + gap + 0.5 s.
        return {
            "kind": "paused",
            "voice": "piper",
            "pauseMs": 350,
            "starts": list(starts),
            "speechS": 3.0,
        }

    cut_then_whole = said(0.5, 2.0, 3.5 + gap)
    whole_then_cut = said(0.5, 3.5 + gap, 5.0 + gap)
    both_cut = said(0.5, 2.0, 3.5 + gap, 5.0 + gap)
    assert bench.sayings(cut_then_whole) == (2, 1)
    assert bench.sayings(whole_then_cut) == (1, 2)
    out = bench.report_twice("default", [cut_then_whole, whole_then_cut, both_cut])
    assert out["piper350"] == {"first": 2, "second": 2, "after": 1, "of": 3}


def _clip(bench: ModuleType, kind: str, pause_ms: float, text: str = "Set an alarm.") -> object:
    """A clip whose first pause reads as finished (no audio signal) and lasts ``pause_ms``
    (the silence inserted, 500 ms, as the endpointer measured it): recorded VAD probabilities
    (0.5 s lead, 1 s of speech, the pause, 1 s of speech), recorded verdicts."""
    chunk = 512
    lead, speech, gap = 16, 31, round(pause_ms / 32)
    verdict = bench.Verdict
    pauses = []
    first_end = (lead + speech) * chunk
    if kind == "paused":
        pauses.append(bench.Pause(first_end, pause_ms, False, True, verdict(text, {}), 100.0, None))
        probs = [0.0] * lead + [0.9] * speech + [0.0] * gap + [0.9] * speech + [0.0] * 10
        end = (lead + 2 * speech + gap) * chunk
    else:
        probs = [0.0] * lead + [0.9] * speech + [0.0] * 10
        end = first_end
    pauses.append(bench.Pause(end, float("inf"), True, False, verdict(text, {}), 100.0, None))
    inserted = 500 if kind == "paused" else 0
    return bench.Clip(
        kind, "piper", text, bench.np.zeros(1, "int16"), inserted, first_end, pauses, probs=probs
    )


def test_the_replayed_session_learns_the_pause_it_cut():
    bench = bench_turns
    rule = bench.RULES["default"]
    cut = _clip(bench, "paused", 512.0)
    assert bench.replay(cut, rule)[0], "the finished-looking pause ends the turn"
    assert bench.learned_ms(cut, rule) == 544  # the pause and a chunk
    assert not bench.replay(cut, rule, floor_ms=544)[0]
    assert bench.learned_ms(_clip(bench, "paused", 1216.0), rule) == 0  # a new request
    assert bench.learned_ms(cut, bench.RULES["default-no-learning"]) == 0
    complete = _clip(bench, "complete", 0.0, "Open the door.")
    [row, _] = bench.again([cut, complete], rule)
    assert row["first350"] == "0/0" and row["first500"] == "1/1" and row["again500"] == "0/1"
    assert row["learnedMedian"] == 544 and row["completeWaitMedian"] == 544
