"""The speech model's queue of decodes: finals first, partials only when a worker is idle, and
the queue-wait figures the transcriber adapts to (see :mod:`gateway.voice.stt`'s docstring,
"Scheduling")."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from enum import IntEnum
from typing import Any

from gateway.workers import PriorityPool, Started


class Priority(IntEnum):
    """Which decodes go first when the model is busy (lower first)."""

    FINAL = 0  # what a person said: someone waits for the answer
    PARTIAL = 1  # live captions: skipped under load


class DecodeQueue:
    """The model's :class:`~gateway.workers.PriorityPool`, keyed by :class:`Priority`, with the
    queue-wait figures the transcriber adapts to (see the module docstring).

    A job's future resolves to ``(result, seconds it waited)``. Final transcriptions are bounded
    by ``max_pending``; partial ones are submitted ``idle_only``, so they never queue.
    """

    #: How quickly the queue-wait average follows new finals (weight of the newest).
    _SMOOTHING = 0.3
    #: Seconds without a final after which the average no longer describes the queue.
    _STALE_S = 10.0

    def __init__(self, workers: int, max_pending: int) -> None:
        self._lock = threading.Lock()
        self._final_wait_s = 0.0  # moving average of finals' queue waits
        self._final_at = 0.0  # when the last final started (monotonic)
        self._pool = PriorityPool(workers, max_pending, name="stt", on_start=self._started)

    def submit(self, priority: Priority, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Queue ``fn(*args)``; raises :class:`~gateway.workers.PoolFull` when it may not wait
        (a partial while the model is busy, a final past ``max_pending``)."""
        return self._pool.submit(
            priority, self._timed, fn, *args, idle_only=priority is Priority.PARTIAL
        )

    def _timed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        started = self._pool.current
        return fn(*args), started.waited_s if started else 0.0

    def _started(self, job: Started) -> None:
        if job.key == Priority.FINAL:
            with self._lock:
                self._final_wait_s += self._SMOOTHING * (job.waited_s - self._final_wait_s)
                self._final_at = time.monotonic()

    @property
    def pending(self) -> int:
        """Decodes admitted and not finished (finals and partials)."""
        return self._pool.pending

    @property
    def partials_skipped(self) -> int:
        """Partial transcripts refused because the model was busy."""
        return self._pool.skipped

    @property
    def final_wait_s(self) -> float:
        """Moving average of finals' queue waits; 0 once no final started for
        :attr:`_STALE_S` (a quiet model is not behind, whatever its last figures said)."""
        if time.monotonic() - self._final_at > self._STALE_S:
            return 0.0
        return self._final_wait_s

    @property
    def late_start_s(self) -> float:
        """How long the final running on the calling worker thread waited behind other finals
        (0 when it found none ahead: a wait for one person's own partial is not load)."""
        job = self._pool.current
        return job.waited_s if job is not None and job.behind else 0.0

    @property
    def waiting(self) -> int:
        """Decodes queued and not yet started."""
        return self._pool.waiting
