"""The speech model's queue of decodes: finals first, partials only when a worker is idle and
finals have not kept the model busy lately, and the queue-wait figures the transcriber adapts to
(see :mod:`gateway.voice.stt`'s docstring, "Scheduling")."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from enum import IntEnum
from typing import Any

from gateway.workers import PoolFull, PriorityPool, Started


class Priority(IntEnum):
    """Which decodes go first when the model is busy (lower first)."""

    FINAL = 0  # what a person said: someone waits for the answer
    PARTIAL = 1  # live captions: skipped under load


class BusyShare:
    """The share of the last ``window_s`` seconds that ``workers`` spent on final decodes
    (sans-I/O: every time is passed in). Spans older than the window are forgotten."""

    def __init__(self, window_s: float, workers: int = 1) -> None:
        self.window_s = window_s
        self.workers = workers
        self._spans: deque[tuple[float, float]] = deque()  # finished decodes: (start, end)
        self._running: list[float] = []  # starts of decodes still running

    def begin(self, at: float) -> None:
        """A final decode started ``at``."""
        self._running.append(at)

    def end(self, started: float, at: float) -> None:
        """The final decode that :meth:`begin` started at ``started`` ended ``at``."""
        self._running.remove(started)
        self._spans.append((started, at))
        self._forget(at - self.window_s)  # bounded even if nobody asks for the share

    def share(self, now: float) -> float:
        """Busy seconds within ``[now - window_s, now]`` over the window's worker-seconds."""
        since = now - self.window_s
        self._forget(since)
        busy = sum(end - max(start, since) for start, end in self._spans if end > since)
        busy += sum(now - max(start, since) for start in self._running)
        return busy / (self.window_s * self.workers)

    def _forget(self, since: float) -> None:
        while self._spans and self._spans[0][1] <= since:
            self._spans.popleft()


class DecodeQueue:
    """The model's :class:`~gateway.workers.PriorityPool`, keyed by :class:`Priority`, with the
    queue-wait figures the transcriber adapts to (see the module docstring).

    A job's future resolves to ``(result, seconds it waited)``. Final transcriptions are bounded
    by ``max_pending``; partial ones are submitted ``idle_only``, so they never queue, and are
    refused while finals kept the model busy more than :attr:`PARTIAL_MAX_BUSY` of the last
    :attr:`PARTIAL_WINDOW_S` (rationed, counted in :attr:`partials_skipped`).
    """

    #: Partials are refused while finals used more than this share of the model lately. An idle
    #: worker at that moment is only a gap between finals: at 20 people (docs/performance.md,
    #: issue 40) partials still took 36 CPU-ms a turn from the 2 cores in such gaps, and a final
    #: arriving behind a running partial waited for it. One person's own decodes (a speculative
    #: one at a pause, the final, ~0.2 s each) use a few tenths of this, so their captions stay.
    PARTIAL_MAX_BUSY = 0.5
    #: The window that share is taken over: a few finals' worth at 20 people.
    PARTIAL_WINDOW_S = 3.0

    #: How quickly the queue-wait average follows new finals (weight of the newest).
    _SMOOTHING = 0.3
    #: Seconds without a final after which the average no longer describes the queue.
    _STALE_S = 10.0

    def __init__(self, workers: int, max_pending: int) -> None:
        self._lock = threading.Lock()
        self._final_wait_s = 0.0  # moving average of finals' queue waits
        self._final_at = 0.0  # when the last final started (monotonic)
        self._pool = PriorityPool(workers, max_pending, name="stt", on_start=self._started)
        self._finals = BusyShare(self.PARTIAL_WINDOW_S, workers)
        self._rationed = 0

    def submit(self, priority: Priority, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        """Queue ``fn(*args)``; raises :class:`~gateway.workers.PoolFull` when it may not wait
        (a partial while the model is busy or finals kept it busy lately, a final past
        ``max_pending``)."""
        if priority is Priority.PARTIAL:
            with self._lock:
                rationed = self._finals.share(time.monotonic()) > self.PARTIAL_MAX_BUSY
                self._rationed += rationed
            if rationed:
                raise PoolFull("finals kept the model busy lately; partial transcript rationed")
        return self._pool.submit(
            priority, self._timed, fn, *args, idle_only=priority is Priority.PARTIAL
        )

    def _timed(self, fn: Callable[..., Any], *args: Any) -> tuple[Any, float]:
        started = self._pool.current
        if started is None or started.key != Priority.FINAL:
            return fn(*args), started.waited_s if started else 0.0
        began = time.monotonic()
        with self._lock:
            self._finals.begin(began)
        try:
            return fn(*args), started.waited_s
        finally:
            with self._lock:
                self._finals.end(began, time.monotonic())

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
        """Partial transcripts refused because the model was busy (or rationed: see
        :attr:`partials_rationed`)."""
        return self._pool.skipped + self._rationed

    @property
    def partials_rationed(self) -> int:
        """Partial transcripts refused because finals kept the model busy lately."""
        return self._rationed

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
