"""Issue 40: the parrot's "You said:" is synthesized once per gateway, then spoken from the
synthesizer's cache (``/metrics``: ``ofp_gateway_tts_cache_hits``); ``--tts-cache 0`` turns it
off. Both ways the person hears every reply."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from gateway.testing.page import Page
from gateway.testing.processes import Served

pytestmark = pytest.mark.slow  # real serve processes


async def played(page: Page, since: int) -> None:
    """Until the reply's audio (sent in real time) has come and then stopped coming for a second
    (``since``: the audio bytes before it; a loaded machine can be silent for a second before
    the reply starts)."""
    last, quiet = -1, 0
    for _ in range(200):  # 20 s at most
        await asyncio.sleep(0.1)
        quiet = quiet + 1 if page.audio_bytes == last else 0
        last = page.audio_bytes
        if quiet >= 10 and last > since:
            return


async def two_spoken_replies(gateway: Served) -> tuple[float, list[int]]:
    """Two typed requests to the parrot, each reply heard whole: the cache hits it counted, and
    the audio bytes each reply brought."""
    page = await Page.open(gateway.ws, transport="ws")
    heard = []
    try:
        greeting = await page.wait_for(
            lambda e: e["type"] == "state" and e["state"] == "speaking"
        )
        await page.wait_for(
            lambda e: e["type"] == "state" and e["state"] != "speaking",
            since=page.events.index(greeting),
        )
        before = gateway.metrics()["ofp_gateway_tts_cache_hits"]
        for said in ("Turn the volume down a little.", "Play some relaxing music."):
            audio = page.audio_bytes
            await page.say(said)
            await played(page, audio)
            heard.append(page.audio_bytes - audio)
    finally:
        await page.close()
    return gateway.metrics()["ofp_gateway_tts_cache_hits"] - before, heard


async def test_the_parrots_prefix_comes_from_the_cache(
    served_gateway: Callable[..., Served],
) -> None:
    hits, heard = await two_spoken_replies(
        served_gateway("cache", "--agent", "builtin:parrot")
    )
    # "You said:" once from the cache at least (the greeting's run may have kept it already:
    # then twice); the requests themselves are longer than the cache keeps.
    assert 1 <= hits <= 2
    assert all(n > 16_000 for n in heard), heard  # over half a second of reply audio each


async def test_no_cache_synthesizes_every_time(served_gateway: Callable[..., Served]) -> None:
    hits, heard = await two_spoken_replies(
        served_gateway("nocache", "--agent", "builtin:parrot", "--tts-cache", "0")
    )
    assert hits == 0
    assert all(n > 16_000 for n in heard), heard
