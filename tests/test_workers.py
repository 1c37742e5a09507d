"""The priority thread pool shared by speech recognition and synthesis (no models: milliseconds)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import CancelledError

import pytest

from gateway.workers import PoolClosed, PoolFull, PriorityPool, Started


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    """Set at the end of every test, so no worker stays blocked on it."""
    event = threading.Event()
    yield event
    event.set()


def test_the_smallest_key_runs_first_and_ties_in_arrival_order(gate) -> None:
    pool = PriorityPool(1, 8, name="t")
    order: list[str] = []
    try:
        busy = pool.submit(0.0, gate.wait)  # occupies the only worker
        jobs = [
            pool.submit(20.0, order.append, "late"),
            pool.submit(10.0, order.append, "soon-1"),
            pool.submit(5.0, order.append, "cancelled"),
            pool.submit(10.0, order.append, "soon-2"),
            pool.submit(1, order.append, "an int key"),
        ]
        assert jobs[2].cancel()
        gate.set()
        for future in (busy, jobs[0], jobs[1], jobs[3], jobs[4]):
            future.result(timeout=5)
    finally:
        pool.close()
    assert order == ["an int key", "soon-1", "soon-2", "late"]


def test_pending_is_bounded_and_a_cancelled_queued_job_frees_its_slot_at_once(gate) -> None:
    pool = PriorityPool(1, 3, name="t")
    try:
        started = threading.Event()
        running = pool.submit(0, lambda: started.set() or gate.wait())
        assert started.wait(5)
        queued = [pool.submit(0, time.sleep, 0) for _ in range(2)]
        assert pool.pending == 3 and pool.waiting == 2
        with pytest.raises(PoolFull):
            pool.submit(0, time.sleep, 0)
        assert queued[1].cancel()
        assert pool.pending == 2 and pool.waiting == 1
        again = pool.submit(0, time.sleep, 0)  # the freed slot is usable before anything ran
        assert not running.cancel()  # a running job keeps its slot
        gate.set()
        for future in (running, queued[0], again):
            future.result(timeout=5)
        assert pool.pending == 0 and pool.waiting == 0
    finally:
        pool.close()


def test_idle_only_jobs_run_when_idle_are_refused_when_busy_and_do_not_count(gate) -> None:
    pool = PriorityPool(1, 1, name="t")
    try:
        assert pool.submit(1, lambda: "caption", idle_only=True).result(timeout=5) == "caption"
        running = pool.submit(0, gate.wait)
        with pytest.raises(PoolFull):  # the only worker is busy
            pool.submit(1, time.sleep, 0, idle_only=True)
        assert pool.skipped == 1 and pool.pending == 1
        gate.set()
        running.result(timeout=5)
    finally:
        pool.close()


def test_an_exception_reaches_the_caller_and_the_worker_carries_on() -> None:
    pool = PriorityPool(1, 4, name="t")
    try:
        failed = pool.submit(0, int, "not a number")
        with pytest.raises(ValueError, match="not a number"):
            failed.result(timeout=5)
        assert pool.submit(0, int, "7").result(timeout=5) == 7
        assert pool.pending == 0
    finally:
        pool.close()


def test_workers_report_the_job_they_run_and_its_wait(gate) -> None:
    seen: list[Started] = []
    pool = PriorityPool(1, 4, name="t", on_start=seen.append)
    try:
        first = pool.submit(0, gate.wait)
        second = pool.submit(0, lambda: pool.current)
        time.sleep(0.02)
        gate.set()
        first.result(timeout=5)
        current = second.result(timeout=5)
    finally:
        pool.close()
    assert pool.current is None  # not a worker thread
    assert current == seen[1] and current.behind == 1 and current.waited_s >= 0.02
    assert seen[0].behind == 0


def test_thread_setup_runs_on_each_named_worker() -> None:
    names: list[str] = []
    lock = threading.Lock()

    def setup() -> None:
        with lock:
            names.append(threading.current_thread().name)

    pool = PriorityPool(2, 4, name="piper", thread_setup=setup)
    try:
        for _ in range(100):
            if len(names) == 2:
                break
            time.sleep(0.01)
    finally:
        pool.close()
    assert sorted(names) == ["piper-0", "piper-1"]


def test_close_cancels_queued_jobs_lets_the_running_one_finish_and_refuses_more(gate) -> None:
    pool = PriorityPool(1, 4, name="t")
    started = threading.Event()
    running = pool.submit(0, lambda: started.set() or (gate.wait(5) and "done"))
    assert started.wait(5)
    queued = pool.submit(0, time.sleep, 0)
    pool.close()
    with pytest.raises(CancelledError):
        queued.result(timeout=1)
    with pytest.raises(PoolClosed):
        pool.submit(0, time.sleep, 0)
    gate.set()
    assert running.result(timeout=5) == "done"
    assert pool.pending == 0


async def test_cancelling_the_awaiting_task_takes_the_job_out_of_the_queue(gate) -> None:
    pool = PriorityPool(1, 4, name="t")
    ran: list[str] = []
    try:
        started = threading.Event()
        running = pool.submit(0, lambda: started.set() or gate.wait())
        assert started.wait(5)
        task = asyncio.ensure_future(asyncio.wrap_future(pool.submit(0, ran.append, "x")))
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.sleep(0)
        assert pool.pending == 1 and pool.waiting == 0
        gate.set()
        running.result(timeout=5)
    finally:
        pool.close()
    assert ran == []


def test_model_threads_come_from_the_environment(monkeypatch) -> None:
    from gateway.render.tts import Synthesizer
    from gateway.voice.stt import SttSettings
    from gateway.workers import THREADS_ENV, model_threads

    assert model_threads({}) == 1
    assert model_threads({THREADS_ENV: " 4 "}) == 4
    for bad in ("0", "-1", "two", "1.5"):
        with pytest.raises(ValueError, match=THREADS_ENV):
            model_threads({THREADS_ENV: bad})
    monkeypatch.setenv(THREADS_ENV, "3")
    assert SttSettings().cpu_threads == 3
    synth = Synthesizer()
    try:
        assert synth._threads == 3
    finally:
        synth.close()


def test_numpys_blas_gets_the_model_threads_unless_the_operator_chose() -> None:
    from gateway.workers import BLAS_ENV, THREADS_ENV, blas_environment

    assert blas_environment({})[BLAS_ENV] == "1"
    assert blas_environment({THREADS_ENV: "2"})[BLAS_ENV] == "2"
    assert blas_environment({BLAS_ENV: "4", THREADS_ENV: "2"})[BLAS_ENV] == "4"
    assert blas_environment({BLAS_ENV: " "})[BLAS_ENV] == "1"  # set but empty: not a choice
    assert blas_environment({"PATH": "/bin"})["PATH"] == "/bin"  # the rest unchanged


def blas_threads_started(*env: str) -> int:
    """Threads a ``python -m gateway``-like process has after a matrix product: it imports
    the entry point as ``python -m gateway`` does, then numpy (OpenBLAS starts its own threads
    at its first product)."""
    code = (
        "import os\n"
        "import gateway.__main__\n"
        "import numpy as np; np.ones((300, 300)) @ np.ones((300, 300))\n"
        "print(len(os.listdir('/proc/self/task')))"
    )
    environ = {k: v for k, v in os.environ.items() if k not in (BLAS, "OFP_GATEWAY_THREADS")}
    environ.update(e.split("=", 1) for e in env)
    done = subprocess.run(
        [sys.executable, "-c", code], env=environ, capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


BLAS = "OPENBLAS_NUM_THREADS"


@pytest.mark.skipif(os.cpu_count() == 1, reason="OpenBLAS starts no threads on one core")
def test_the_gateway_process_runs_numpy_on_one_thread() -> None:
    """Issue 40: the OpenBLAS threads that spun after every small product are not started."""
    assert blas_threads_started() == 1
    assert blas_threads_started(f"{BLAS}=2") == 2  # the operator's own choice stays


@pytest.mark.slow
def test_the_vad_session_runs_on_the_threads_asked_for(monkeypatch) -> None:
    from gateway.voice.vad import SileroVad
    from gateway.workers import THREADS_ENV

    monkeypatch.setenv(THREADS_ENV, "4")
    options = SileroVad()._session.get_session_options()
    assert options.intra_op_num_threads == 4
