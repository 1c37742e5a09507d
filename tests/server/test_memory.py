"""The process's memory (gateway/server/memory.py): serve on jemalloc when it is installed, and
under glibc freed memory handed back to the system on a timer (malloc_trim)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.proxy.models import VoiceModels
from gateway.server.app import Gateway, GatewaySettings
from gateway.server.memory import (
    JEMALLOC,
    MemoryTrimmer,
    jemalloc_environment,
    resident_bytes,
    trim_available,
    trim_now,
)
from gateway.testing.processes import free_port, start_gateway, stop_gateway

# The test process itself runs on glibc (pytest is not restarted under jemalloc).
needs_trim = pytest.mark.skipif(not trim_available(), reason="needs glibc's malloc_trim")


def _fragment_a_thread_arena() -> list[bytearray]:
    """In a new thread (so in its own malloc arena), allocate ~200 MB in 4 KB blocks and free
    all but one in a hundred: freed pages stuck between live blocks, which ``free`` itself
    never hands back."""
    kept: list[bytearray] = []

    def work() -> None:
        blocks = [bytearray(4096) for _ in range(50_000)]
        for i, block in enumerate(blocks):
            block[0] = 1  # touch it, so it is resident
            if i % 100 == 0:
                kept.append(block)
        del blocks

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return kept


@needs_trim
def test_a_trim_hands_back_memory_freed_between_live_blocks() -> None:
    # Memory earlier tests freed is handed back first: past glibc's arena cap a new thread
    # shares an arena, and its blocks reused pages already resident (after the whole suite,
    # only 27 of the 200 MB showed as new).
    trim_now()
    before = resident_bytes()
    assert before is not None
    kept = _fragment_a_thread_arena()
    stuck = resident_bytes() - before  # type: ignore[operator]
    assert stuck > 100 << 20, "the allocator should have kept most of the freed 200 MB"
    released, took = trim_now()
    assert released > 100 << 20
    assert resident_bytes() < before + stuck - (100 << 20)  # type: ignore[operator]
    assert took > 0  # the time it took is reported (how long is the machine's business)
    assert len(kept) == 500 and all(block[0] == 1 for block in kept)  # live data untouched


@needs_trim
async def test_the_trimmer_runs_on_its_interval_off_the_event_loop() -> None:
    seen: list[tuple[int, float, bool]] = []
    loop_thread = threading.get_ident()

    def observe(released: int, took: float) -> None:
        seen.append((released, took, threading.get_ident() == loop_thread))

    task = asyncio.create_task(MemoryTrimmer(0.05, observe).run())
    await asyncio.sleep(0.4)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 3 <= len(seen) <= 8
    assert all(released >= 0 and took > 0 and on_loop for released, took, on_loop in seen)
    with pytest.raises(ValueError, match="interval_s"):
        MemoryTrimmer(0)


@pytest.mark.slow
@needs_trim
@pytest.mark.parametrize("interval", [0.1, 0.0])
async def test_the_gateway_trims_and_says_so_in_its_metrics(interval: float) -> None:
    settings = GatewaySettings(port=free_port(), agents=("builtin:parrot",), trim_memory_s=interval)
    gateway = Gateway(settings, models=VoiceModels(), directory=AgentDirectory(AddressPolicy()))
    await gateway.start()
    try:
        await asyncio.sleep(0.6)
        text = gateway.metrics.render().decode()
    finally:
        await gateway.close()
    count = next(
        float(line.split()[-1])
        for line in text.splitlines()
        if line.startswith("ofp_gateway_memory_trim_seconds_count")
    )
    if interval:
        assert count >= 3
    else:
        assert count == 0  # --trim-memory 0: never


def test_the_restart_environment_preloads_jemalloc_once() -> None:
    env = jemalloc_environment({"PATH": "/bin"}, JEMALLOC, active="glibc")
    assert env is not None
    assert env["LD_PRELOAD"] == JEMALLOC and env["PATH"] == "/bin"
    # Someone else's preload stays; a restart already tried is not tried again (the loader
    # only warns when it cannot preload: the new process would restart forever).
    other = jemalloc_environment({"LD_PRELOAD": "libx.so"}, JEMALLOC, active="glibc")
    assert other is not None and other["LD_PRELOAD"] == f"{JEMALLOC} libx.so"
    assert jemalloc_environment(env, JEMALLOC, active="glibc") is None
    assert jemalloc_environment({}, None, active="glibc") is None  # not installed
    assert jemalloc_environment({}, JEMALLOC, active="jemalloc") is None  # already on it


@pytest.mark.slow
def test_serve_on_the_system_allocator_when_asked(tmp_path: Path) -> None:
    served = start_gateway(tmp_path, "--allocator", "system", "--agent", "builtin:parrot")
    try:
        maps = Path(f"/proc/{served.proc.pid}/maps").read_text()
        body = served.get("/metrics")[1].decode()
    finally:
        stop_gateway(served)
    assert "libjemalloc" not in maps
    assert 'ofp_gateway_memory_info{allocator="glibc"} 1.0' in body
