"""The process's memory: which allocator it runs on, and handing freed memory back.

glibc's ``malloc`` keeps freed memory for reuse: in one arena per thread (up to eight per core),
in pieces between blocks still in use. A gateway frees a lot in many threads — Whisper and
Piper buffers in their workers, Opus frames and WebRTC state in aiortc's and FFmpeg's threads
(about seven per WebRTC session) — so its resident size kept growing with every session and
turn while its live memory did not: with 16 WebRTC sessions open, one ``malloc_trim(0)`` took
the process from 551 MB to 370 MB, below where it started.

Two remedies:

- **jemalloc** (Debian's ``libjemalloc2``), the default: ``serve`` restarts itself at once with
  the library in ``LD_PRELOAD`` (an allocator can only be chosen before the process starts; see
  :func:`restart_under_jemalloc`). Its size classes keep little memory stranded between live
  blocks, and it hands freed pages back by itself within ~10 s. With 12 people talking
  (``scripts/load.py``, 60 s runs, 1 and 12 people): 3.4–4.3 MB more mean RSS per person
  (glibc with trimming: 5.6–9.1) and 60–100 MB less overall. The price is CPU: pages handed
  back are faulted in again, and Piper, which allocates tens of MB per sentence, synthesises
  ~35 % slower by itself (RTF 0.127 against 0.094 on long text; ~3 % more gateway CPU at 12).
  Keeping freed pages longer (``dirty_decay_ms``) did not buy the speed back without the memory.
- **Trimming** under glibc (:class:`MemoryTrimmer`): ``malloc_trim(0)`` every half minute, in a
  worker thread. Elsewhere (jemalloc, musl, macOS) it does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

log = logging.getLogger(__name__)

#: Seconds between trims by default. A trim of a busy 12-person gateway takes ~20 ms (in a
#: worker thread), but the pages it hands back are faulted in again as work resumes: every 5 s
#: that cost ~5 % CPU and ~0.1 s of first-audio p95 at 12 people (mean RSS 451 MB); every 30 s
#: it costs nothing measurable (mean 486 MB, against ~540 MB never trimmed).
TRIM_INTERVAL_S = 30.0


#: Debian's ``libjemalloc2`` (jemalloc 5): the soname ``find_library("jemalloc")`` reports.
JEMALLOC = "libjemalloc.so.2"
#: Set in the environment of the restarted process, so that a preload the dynamic loader
#: refused (it only prints a warning) cannot restart the gateway over and over.
_RESTARTED = "OFP_GATEWAY_JEMALLOC_TRIED"

Allocator = Literal["jemalloc", "glibc", "other"]


def _symbol(name: str) -> Any:
    """The process's C function ``name`` (a ctypes function pointer), or None."""
    try:
        process = ctypes.CDLL(None)  # the process's own symbols, the allocator's among them
    except OSError:
        return None
    return getattr(process, name, None)


def _find_trim() -> tuple[Allocator, Callable[[], object] | None]:
    """The allocator ``malloc`` resolves to, and how to trim it (None: it needs no trimming)."""
    if _symbol("mallctl") is not None:  # jemalloc's control interface: only jemalloc has it
        return "jemalloc", None  # it purges by itself
    malloc_trim = _symbol("malloc_trim")
    if malloc_trim is not None:
        malloc_trim.argtypes = [ctypes.c_size_t]
        malloc_trim.restype = ctypes.c_int
        return "glibc", lambda: malloc_trim(0)
    return "other", None


ALLOCATOR, _trim = _find_trim()


def jemalloc_environment(
    environ: Mapping[str, str], library: str | None, active: Allocator = ALLOCATOR
) -> dict[str, str] | None:
    """The environment to restart this process in under jemalloc, or None to carry on as is
    (jemalloc already runs, the library is not installed, or a restart was already tried)."""
    if active == "jemalloc" or library is None or environ.get(_RESTARTED):
        return None
    env = dict(environ)
    env["LD_PRELOAD"] = " ".join(p for p in (library, environ.get("LD_PRELOAD", "")) if p)
    env[_RESTARTED] = "1"
    return env


def restart_under_jemalloc() -> None:
    """Replace this process (same pid, same arguments) with one running on jemalloc, if it is
    installed and not already in use; otherwise return and carry on with what there is.

    Only for a process started from the command line: nothing after this call runs."""
    library = ctypes.util.find_library("jemalloc")
    env = jemalloc_environment(os.environ, library)
    if env is None:
        if library is None:
            log.warning(
                "jemalloc is not installed: using the C library's malloc, which holds on to "
                "more memory (apt-get install libjemalloc2; scripts/run does)"
            )
        elif ALLOCATOR != "jemalloc":
            log.warning("could not preload %s; using the C library's malloc", library)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, sys.orig_argv, env)


def resident_bytes() -> int | None:
    """This process's resident set size, or None where ``/proc`` has no ``statm``."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def trim_available() -> bool:
    """Whether this allocator needs (and has) ``malloc_trim``: glibc's."""
    return _trim is not None


def trim_now() -> tuple[int, float]:
    """Trim once (blocking): ``(bytes the resident size fell by, seconds it took)``."""
    if _trim is None:
        return 0, 0.0
    before = resident_bytes() or 0
    start = time.perf_counter()
    _trim()
    took = time.perf_counter() - start
    after = resident_bytes() or before
    return max(0, before - after), took


class MemoryTrimmer:
    """Runs :func:`trim_now` every ``interval_s`` and reports each trim to ``observe``.

    ``observe(released_bytes, seconds)`` is called on the event loop after each trim.
    """

    def __init__(
        self,
        interval_s: float = TRIM_INTERVAL_S,
        observe: Callable[[int, float], None] | None = None,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0 (leave the trimmer out to turn it off)")
        self.interval_s = interval_s
        self._observe = observe

    async def run(self) -> None:
        """Trim forever (cancel the task to stop)."""
        if not trim_available():
            log.info("no trimming: the allocator (%s) has no malloc_trim", ALLOCATOR)
            return
        while True:
            await asyncio.sleep(self.interval_s)
            released, took = await asyncio.to_thread(trim_now)
            if self._observe is not None:
                self._observe(released, took)
