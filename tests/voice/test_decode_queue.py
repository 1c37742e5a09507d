"""The speech model's queue of decodes, without a model: finals bounded, partials never queued."""

from __future__ import annotations

import threading

import pytest

from gateway.voice.decode_queue import DecodeQueue, Priority
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
