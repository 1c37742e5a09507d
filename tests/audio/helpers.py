"""The playout's clock made virtual, for tests that check its schedule on any machine."""

from __future__ import annotations

import asyncio

import pytest


class VirtualTime:
    """The playout's clock and ``asyncio.sleep``, made virtual: a sleep moves the clock on by
    exactly its delay, so the schedule is checked to the microsecond on any machine, however
    busy (issue 30: these were real-time checks that failed under load)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """The event loop was blocked this long."""
        self.now += seconds


def virtual_playout_clock(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    """Make ``gateway.audio.playout``'s clock and ``asyncio.sleep`` virtual for this test."""
    import gateway.audio.playout as playout_module

    virtual = VirtualTime()
    real_sleep = asyncio.sleep

    async def sleep(delay: float, result: object = None) -> object:
        virtual.now += max(0.0, delay)
        await real_sleep(0)
        return result

    monkeypatch.setattr(playout_module, "time", virtual)
    monkeypatch.setattr(asyncio, "sleep", sleep)
    return virtual
