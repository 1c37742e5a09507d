"""Helpers for tests that run a :class:`~gateway.server.app.Gateway` in this process."""

from __future__ import annotations

import asyncio

from gateway.server.app import Gateway


async def admitting(gateway: Gateway, timeout_s: float = 30.0) -> None:
    """Wait until ``gateway`` would admit a new session.

    The Whisper engine is shared by every gateway in a process, and so is its queue-wait
    average: right after another test kept it busy (random order, more model threads than
    cores) a new gateway refuses sessions as "busy" until the average goes stale
    (``_STALE_S``, 10 s). That refusal is right for a real node and is tested on its own
    (tests/load/test_refusal.py); a test about something else waits it out here.
    """
    deadline = asyncio.get_running_loop().time() + timeout_s
    while (why := gateway.refusal()) is not None:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"the gateway still refuses sessions: {why}")
        await asyncio.sleep(0.2)
