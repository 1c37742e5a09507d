"""When a failing agent is told about, kept or removed (gateway/floor/failures.py, sans I/O);
tests/floor/test_host_faults.py drives the same through the host with real failures."""

from __future__ import annotations

from gateway.floor.failures import FailureBounds, Strikes, Verdict

BOUNDS = FailureBounds(max_failures=3, max_timeouts=2)


def _timeout(s: Strikes, turn: int, bounds: FailureBounds = BOUNDS) -> Verdict:
    return s.failed(timed_out=True, refused=False, turn=turn, bounds=bounds)


def _error(s: Strikes, turn: int, bounds: FailureBounds = BOUNDS) -> Verdict:
    return s.failed(timed_out=False, refused=False, turn=turn, bounds=bounds)


def test_one_slow_turn_costs_a_notice_the_second_in_a_row_the_place() -> None:
    s = Strikes()
    assert _timeout(s, turn=1) is Verdict.SLOW
    assert _timeout(s, turn=2) is Verdict.REMOVE


def test_timeouts_in_one_turn_are_one_miss_and_told_once() -> None:
    s = Strikes()
    assert _timeout(s, turn=1) is Verdict.SLOW
    assert _timeout(s, turn=1) is Verdict.QUIET
    assert s.misses == 1


def test_an_answer_wipes_the_slate() -> None:
    s = Strikes()
    assert _timeout(s, turn=1) is Verdict.SLOW
    s.answered()
    assert _timeout(s, turn=2) is Verdict.SLOW
    assert _error(s, turn=3) is Verdict.PROBLEM
    s.answered()
    assert [_error(s, turn=t) for t in (4, 5, 6)] == [
        Verdict.PROBLEM,
        Verdict.PROBLEM,
        Verdict.REMOVE,
    ]


def test_failures_of_any_kind_count_towards_max_failures() -> None:
    s = Strikes()
    assert _error(s, turn=1) is Verdict.PROBLEM
    assert _timeout(s, turn=1) is Verdict.SLOW  # a miss, and the second failure
    assert _error(s, turn=1) is Verdict.REMOVE  # the third failure in a row


def test_a_refused_address_is_removed_at_once() -> None:
    s = Strikes()
    assert s.failed(timed_out=False, refused=True, turn=1, bounds=BOUNDS) is Verdict.REMOVE


def test_the_bounds_are_the_ones_given() -> None:
    patient = FailureBounds(max_failures=5, max_timeouts=4)
    s = Strikes()
    assert [_timeout(s, turn=t, bounds=patient) for t in (1, 2, 3, 4)] == [
        Verdict.SLOW,
        Verdict.SLOW,
        Verdict.SLOW,
        Verdict.REMOVE,
    ]
