"""The speech model's queue of decodes, without a model: finals bounded, partials never queued."""

from __future__ import annotations

import threading

import pytest

from gateway.voice import decode_queue
from gateway.voice.decode_queue import BusyShare, DecodeQueue, Priority
from gateway.workers import PoolFull


def test_a_partial_is_refused_while_a_final_runs_and_finals_stop_at_max_pending() -> None:
    queue = DecodeQueue(workers=1, max_pending=2)
    release = threading.Event()
    running = queue.submit(Priority.FINAL, release.wait, 10.0)
    waiting = queue.submit(Priority.FINAL, lambda: "second")
    with pytest.raises(PoolFull):
        queue.submit(Priority.PARTIAL, lambda: "caption")
    with pytest.raises(PoolFull):
        queue.submit(Priority.FINAL, lambda: "third")
    assert queue.pending == 2 and queue.partials_skipped == 1
    release.set()
    assert running.result(timeout=10)[0] is True
    result, waited_s = waiting.result(timeout=10)
    assert result == "second" and waited_s >= 0.0
    assert queue.pending == 0


def test_a_partial_runs_when_the_model_is_idle() -> None:
    queue = DecodeQueue(workers=1, max_pending=1)
    assert queue.submit(Priority.PARTIAL, lambda: "caption").result(timeout=10)[0] == "caption"


def test_busy_share_counts_finals_within_the_window_only() -> None:
    share = BusyShare(window_s=3.0)
    share.begin(0.0)
    share.end(0.0, 1.0)
    share.begin(2.5)
    assert share.share(3.0) == pytest.approx(1.5 / 3.0)  # 1 s done, 0.5 s still running
    share.end(2.5, 3.5)
    assert share.share(5.0) == pytest.approx(1.0 / 3.0)  # the first span has left the window
    assert share.share(10.0) == 0.0
    assert BusyShare(window_s=2.0, workers=2).share(0.0) == 0.0


def one_person_and_twenty(person_s: float, every_s: float) -> float:
    """The busy share after a minute of finals of ``person_s`` every ``every_s`` seconds."""
    share = BusyShare(window_s=DecodeQueue.PARTIAL_WINDOW_S)
    t = 0.0
    while t < 60.0:
        share.begin(t)
        share.end(t, t + person_s)
        t += every_s
    return share.share(t)


def test_one_persons_decodes_keep_their_captions_and_twenty_peoples_do_not() -> None:
    # One person: a speculative decode at a pause and the final, ~0.25 s each, a second apart
    # at the busiest; twenty people: 2.2 turns a second, ~1.5 decodes a turn of ~0.2 s.
    assert one_person_and_twenty(0.25, 1.0) < DecodeQueue.PARTIAL_MAX_BUSY
    assert one_person_and_twenty(0.2, 1 / (2.2 * 1.5)) > DecodeQueue.PARTIAL_MAX_BUSY


def test_partials_are_rationed_while_finals_kept_the_model_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(decode_queue, "time", type("Clock", (), {"monotonic": lambda: clock[0]}))
    queue = DecodeQueue(workers=1, max_pending=4)

    def final(seconds: float) -> None:
        clock[0] += seconds  # the decode takes this long on the queue's clock

    queue.submit(Priority.FINAL, final, 0.5).result(timeout=10)
    # An idle model, finals 0.5 s of the last 3: the caption is made.
    assert queue.submit(Priority.PARTIAL, lambda: "caption").result(timeout=10)[0] == "caption"
    queue.submit(Priority.FINAL, final, 1.5).result(timeout=10)
    # Idle again, but finals used 2 s of the last 3: the caption is rationed, and counted.
    with pytest.raises(PoolFull):
        queue.submit(Priority.PARTIAL, lambda: "caption")
    assert queue.partials_rationed == 1 and queue.partials_skipped == 1
    clock[0] += 2.0  # a quiet while: the busy spans leave the window
    assert queue.submit(Priority.PARTIAL, lambda: "caption").result(timeout=10)[0] == "caption"


def test_busy_share_forgets_old_spans_without_being_asked() -> None:
    share = BusyShare(window_s=1.0)
    for i in range(1000):
        share.begin(float(i))
        share.end(float(i), i + 0.5)
    assert len(share._spans) <= 2  # bounded by the window, not by how many finals ran
