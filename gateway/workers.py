"""One priority thread pool for the models that share the process's cores.

Speech recognition (:mod:`gateway.voice.stt`) and speech synthesis (:mod:`gateway.render.tts`)
both run blocking model calls on worker threads fed from one heap. A job's *key* says when it
runs: the smallest key first, ties in arrival order. Recognition keys by priority (final
transcripts before partial ones), synthesis by deadline (the ``time.monotonic()`` instant its
listener runs out of audio: earliest deadline first).

The pool is bounded: at most ``max_pending`` jobs may be admitted (queued or running) at once;
beyond that :meth:`PriorityPool.submit` raises :class:`PoolFull` at once instead of letting a
backlog grow whose answers would come too late to matter. A job submitted ``idle_only`` is
admitted only when a worker is free and nothing waits, so it never delays anyone and does not
count against the bound (a live caption that is simply skipped under load).

Cancelling a queued job's future takes it out of the queue and frees its slot at once; a running
job keeps its slot until it ends, because it still occupies a worker.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, TypeVar

from gateway.errors import Busy, Closed

#: The environment variable that sets how many threads each model inference runs on.
THREADS_ENV = "OFP_GATEWAY_THREADS"


def model_threads(environ: Mapping[str, str] | None = None) -> int:
    """Threads each model inference (Whisper, Piper, the VAD, the turn model) runs on:
    ``$OFP_GATEWAY_THREADS``, else 1. One is what this machine's measurements chose (two
    workers of one thread each beat one of two: see :mod:`gateway.render.tts`); other counts
    change the models' arithmetic order, which is how the tests are shaken for numerics they
    must not depend on (docs/development.md). A value that is not a positive whole number is
    refused with ValueError."""
    text = (os.environ if environ is None else environ).get(THREADS_ENV, "").strip()
    if not text:
        return 1
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"{THREADS_ENV}={text!r}: give a whole number of threads, 1 or more")
    return int(text)

#: OpenBLAS's own variable: how many threads numpy's matrix products may use.
BLAS_ENV = "OPENBLAS_NUM_THREADS"


def blas_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` with numpy's OpenBLAS limited to :func:`model_threads` threads, unless the
    operator set ``$OPENBLAS_NUM_THREADS`` already (their value stays).

    OpenBLAS starts a thread per core, and after each matrix product those threads spin for a
    while waiting for the next one. The gateway's products are small (Whisper's mel filter
    bank, the echo guard's and the pitch tracker's arithmetic), so the spinning was most of
    their cost: at 12 and 20 people (``scripts/profile_load.py``, issue 40) the second
    OpenBLAS thread used 14–15 % of a core, 88–112 CPU-ms per turn, more than the VAD. On the
    calling thread, as every model runs here, the products cost what they compute.
    """
    env = dict(environ)
    if not env.get(BLAS_ENV, "").strip():
        env[BLAS_ENV] = str(model_threads(environ))
    return env


R = TypeVar("R")


class PoolFull(Busy):
    """The job was not admitted: ``max_pending`` jobs are pending, or (``idle_only``) the
    workers are busy. Callers raise their own, domain-specific error from it."""


class PoolClosed(Closed):
    """The pool was closed; it takes no more jobs."""


@dataclass(frozen=True)
class Started:
    """What a worker knows about the job it is running (see :attr:`PriorityPool.current`).

    Attributes:
        key: the job's key.
        waited_s: seconds between admission and the start of the run.
        behind: bounded jobs that were pending (queued or running) when this one was admitted:
            above 0, it queued behind other work rather than only behind itself.
    """

    key: float
    waited_s: float
    behind: int


@dataclass(order=True)
class _Job:
    key: float
    seq: int
    fn: Callable[..., Any] = field(compare=False)
    args: tuple[Any, ...] = field(compare=False)
    future: Future[Any] = field(compare=False)
    queued_at: float = field(compare=False)
    behind: int = field(compare=False)
    idle_only: bool = field(compare=False)


class PriorityPool:
    """``workers`` threads running submitted calls smallest key first (see the module docstring).

    Args:
        workers: threads, started at once (daemons: a process may exit with the pool open).
        max_pending: jobs admitted at once, not counting ``idle_only`` ones.
        name: thread name prefix (``stt`` → ``stt-0``, ``stt-1``…), for profilers and ``ps``.
        thread_setup: called first on each worker thread (e.g. to lower its CPU priority).
        on_start: called on the worker just before each job runs (e.g. to keep statistics).
    """

    def __init__(
        self,
        workers: int,
        max_pending: int,
        *,
        name: str,
        thread_setup: Callable[[], None] | None = None,
        on_start: Callable[[Started], None] | None = None,
    ) -> None:
        if workers < 1 or max_pending < 1:
            raise ValueError(f"need workers ≥ 1 and max_pending ≥ 1, got {workers}, {max_pending}")
        self.workers = workers
        self.max_pending = max_pending
        self.skipped = 0  # idle_only jobs refused because the workers were busy
        self._thread_setup = thread_setup
        self._on_start = on_start
        self._queue: list[_Job] = []
        self._cond = threading.Condition()
        self._seq = itertools.count()
        self._running = 0
        self._bounded = 0  # admitted, not finished, not idle_only
        self._idle_only = 0
        self._closed = False
        self._local = threading.local()
        for i in range(workers):
            threading.Thread(target=self._work, name=f"{name}-{i}", daemon=True).start()

    def submit(
        self, key: float, fn: Callable[..., R], *args: Any, idle_only: bool = False
    ) -> Future[R]:
        """Queue ``fn(*args)`` with ``key``; its future gets the result or the exception.

        Raises :class:`PoolFull` when the job may not wait (see the module docstring) and
        :class:`PoolClosed` after :meth:`close`.
        """
        future: Future[R] = Future()
        with self._cond:
            if self._closed:
                raise PoolClosed("the worker pool is closed")
            behind = self._bounded
            if idle_only:
                if self._queue or self._running >= self.workers:
                    self.skipped += 1
                    raise PoolFull("the workers are busy")
                self._idle_only += 1
            else:
                if self._bounded >= self.max_pending:
                    raise PoolFull(f"{self._bounded} jobs pending (max_pending={self.max_pending})")
                self._bounded += 1
            job = _Job(key, next(self._seq), fn, args, future, time.monotonic(), behind, idle_only)
            heapq.heappush(self._queue, job)
            self._cond.notify()
        future.add_done_callback(lambda f: self._finished(job, f.cancelled()))
        return future

    @property
    def pending(self) -> int:
        """Jobs admitted and not finished (``idle_only`` ones included)."""
        return self._bounded + self._idle_only

    @property
    def waiting(self) -> int:
        """Jobs queued and not yet started."""
        return len(self._queue)

    @property
    def current(self) -> Started | None:
        """The job running on the calling worker thread (None on any other thread)."""
        started: Started | None = getattr(self._local, "started", None)
        return started

    def close(self) -> None:
        """Stop the workers: a running job finishes, queued ones are cancelled, and
        :meth:`submit` raises :class:`PoolClosed` from now on."""
        with self._cond:
            self._closed = True
            dropped, self._queue = self._queue, []
            self._cond.notify_all()
        for job in dropped:
            job.future.cancel()

    def _finished(self, job: _Job, cancelled: bool) -> None:
        with self._cond:
            if job.idle_only:
                self._idle_only -= 1
            else:
                self._bounded -= 1
            if cancelled and job in self._queue:
                self._queue.remove(job)
                heapq.heapify(self._queue)

    def _work(self) -> None:
        if self._thread_setup is not None:
            self._thread_setup()
        while True:
            with self._cond:
                while not self._queue and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                job = heapq.heappop(self._queue)
                self._running += 1
            if not job.future.set_running_or_notify_cancel():
                with self._cond:
                    self._running -= 1
                continue  # cancelled while queued (the caller stopped waiting)
            started = Started(job.key, time.monotonic() - job.queued_at, job.behind)
            self._local.started = started
            try:
                if self._on_start is not None:
                    self._on_start(started)
                result, error = job.fn(*job.args), None
            except BaseException as exc:
                result, error = None, exc
            # The worker is free before its caller hears back, so whatever the caller asks
            # next (a partial transcript) finds it free.
            with self._cond:
                self._running -= 1
            self._local.started = None
            if error is not None:
                job.future.set_exception(error)
            else:
                job.future.set_result(result)
