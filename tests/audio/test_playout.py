"""Paced playout: real-time release, no drift, barge-in flush, state, bounds, fast mode."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from gateway.audio.playout import IdleSilence, Playout
from gateway.ofp import text_event
from gateway.render import render_dialog_event
from tests.audio.helpers import VirtualTime, virtual_playout_clock
from tests.render.helpers import STEADY, no_fetch

RATE = 16_000
FRAME = 320


def tone(seconds: float) -> np.ndarray:
    n = int(seconds * RATE)
    return (8000 * np.sin(2 * np.pi * 440 * np.arange(n) / RATE)).astype(np.int16) | 1  # no zeros


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> VirtualTime:
    return virtual_playout_clock(monkeypatch)


async def collect(
    playout: Playout, count: int, now: object = time.monotonic
) -> tuple[list[np.ndarray], list[float]]:
    frames, times = [], []
    for _ in range(count):
        frames.append(await playout.recv())
        times.append(now())  # type: ignore[operator]
    return frames, times


async def test_releases_in_real_time_without_loss_or_drift(clock):
    playout = Playout(RATE, max_ms=5000)
    audio = tone(2.0)
    await playout.put(audio)
    await playout.finish()
    frames, times = await collect(playout, 100, clock.monotonic)
    assert np.array_equal(np.concatenate(frames), audio)
    # Each frame on its slot, 20 ms apart: no drift.
    offsets = np.array(times) - times[0] - np.arange(100) * 0.020
    assert np.abs(offsets).max() < 1e-6


async def test_a_short_stall_is_caught_up_and_a_long_one_resynchronises(clock):
    playout = Playout(RATE, max_ms=5000, max_lag_ms=200)
    await playout.put(tone(2.0))
    _, before = await collect(playout, 10, clock.monotonic)
    clock.advance(0.08)  # the loop is blocked for four frames' time
    _, after = await collect(playout, 20, clock.monotonic)
    # back on the original schedule: frame 29 is due 29 slots after frame 0
    assert after[-1] - before[0] == pytest.approx(29 * 0.020, abs=1e-6)

    clock.advance(0.4)  # beyond max_lag: no burst of 20 frames, a new schedule instead
    _, late = await collect(playout, 10, clock.monotonic)
    gaps = np.diff(late)
    assert (gaps < 0.005).sum() <= 1
    assert late[-1] - late[0] == pytest.approx(9 * 0.020, abs=0.015)


async def test_flush_stops_output_within_one_frame_and_drops_the_queue(clock):
    playout = Playout(RATE, max_ms=2000, fill_silence=True)
    await playout.put(tone(1.5))
    await collect(playout, 10, clock.monotonic)
    flushed_at = clock.monotonic()
    dropped = playout.flush()
    assert dropped == 75 - 10
    frames, times = await collect(playout, 10, clock.monotonic)
    assert not any(f.any() for f in frames)  # nothing queued before the flush comes out after it
    assert times[0] - flushed_at <= 0.020  # the very next frame (silence) is already the stop
    assert not playout.speaking
    assert times[-1] - times[0] == pytest.approx(9 * 0.020, abs=1e-6)  # silence stays paced


async def test_flush_releases_a_producer_blocked_on_a_full_queue_and_drops_its_rest():
    playout = Playout(RATE, max_ms=200)
    producer = asyncio.create_task(playout.put(tone(3.0)))
    await asyncio.sleep(0.05)
    assert not producer.done() and playout.queued_ms == 200  # bounded: the producer waits
    playout.flush()
    await asyncio.wait_for(producer, 0.1)
    assert playout.queued_ms == 0


async def test_speaking_state_follows_playback():
    states: list[bool] = []
    playout = Playout(RATE, on_state=states.append)
    consumer = asyncio.create_task(collect(playout, 1000))
    await playout.put(tone(0.5))
    await playout.finish()
    await asyncio.sleep(0.05)
    assert playout.speaking and states == [True]
    await asyncio.wait_for(playout.wait_idle(), 1.0)
    assert states == [True, False]
    await playout.put(tone(0.1))
    await asyncio.sleep(0.01)
    assert states == [True, False, True]
    consumer.cancel()


async def test_unpaced_mode_runs_as_fast_as_it_is_read(clock):
    playout = Playout(RATE, max_ms=20_000, paced=False)
    audio = tone(10.0)
    await playout.put(audio)
    await playout.finish()
    playout.close()
    start = clock.monotonic()
    frames = [f async for f in playout]
    # Ten seconds of audio released without one paced sleep: the virtual clock did not move.
    assert clock.monotonic() == start
    assert np.array_equal(np.concatenate(frames), audio)


async def test_finish_pads_the_last_partial_frame():
    playout = Playout(RATE, paced=False)
    await playout.put(tone(0.03))  # a frame and a half
    assert playout.queued_ms == 20
    await playout.finish()
    playout.close()
    frames = [f async for f in playout]
    assert [len(f) for f in frames] == [FRAME, FRAME]
    assert not frames[1][FRAME // 2 :].any()


async def test_idle_without_fill_silence_waits_for_audio():
    playout = Playout(RATE)
    waiting = asyncio.create_task(playout.recv())
    await asyncio.sleep(0.1)
    assert not waiting.done()
    await playout.put(tone(0.02))
    frame = await asyncio.wait_for(waiting, 0.1)
    assert frame.any()


async def test_barge_in_on_a_real_reply(synth):
    """A synthesized reply feeding the playout; the user interrupts 0.3 s into playback."""
    playout = Playout(RATE, max_ms=1000)
    reply = text_event("tag:agent", "This reply is long enough to be interrupted. " * 3)

    async def produce():
        async for chunk in render_dialog_event(reply, synth, STEADY, no_fetch, rate=RATE):
            await playout.put(chunk)
        await playout.finish()

    producer = asyncio.create_task(produce())
    released: list[float] = []

    async def consume():
        while True:
            await playout.recv()
            released.append(time.monotonic())

    consumer = asyncio.create_task(consume())
    # Interrupt once the reply is really playing (synthesis may be slow on a busy machine).
    deadline = time.monotonic() + 30
    while not released and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    barge_in = time.monotonic()
    producer.cancel()  # what a session does on barge-in: stop the renderer, drop the queue
    playout.flush()
    await asyncio.sleep(0.3)
    consumer.cancel()
    after = [t - barge_in for t in released if t > barge_in]
    assert released and not after  # nothing more of the reply was released
    assert not playout.speaking


async def test_lead_sends_audio_ahead_then_keeps_real_time(clock):
    playout = Playout(RATE, max_ms=5000, lead_ms=200)
    await playout.put(tone(1.5))
    await playout.finish()
    start = clock.monotonic()
    _, times = await collect(playout, 60, clock.monotonic)
    ahead = [t - start for t in times]
    # The first 200 ms go out at once (the client buffers them)...
    assert ahead[9] < 1e-6
    # ...and after that the pace is real time, 200 ms ahead of the audio's own clock.
    assert ahead[59] == pytest.approx(59 * 0.020 - 0.2, abs=0.021)
    assert np.diff(times[20:]) == pytest.approx(np.full(39, 0.020), abs=1e-6)


async def test_pause_holds_the_queue_and_resume_goes_on_where_it_stopped(clock):
    states: list[bool] = []
    tapped: list[np.ndarray] = []
    playout = Playout(RATE, max_ms=2000, fill_silence=True, on_state=states.append)
    playout.on_frame = tapped.append
    audio = tone(1.0)
    await playout.put(audio)
    before, _ = await collect(playout, 10, clock.monotonic)
    playout.pause()
    held, times = await collect(playout, 25, clock.monotonic)
    assert not any(f.any() for f in held), "paused: silence, at once"
    assert times[-1] - times[0] == pytest.approx(24 * 0.020, abs=1e-6)  # still paced
    assert playout.speaking and states == [True], "a pause is not the end of the reply"
    assert playout.queued_ms == 1000 - 10 * 20, "nothing dropped"
    playout.resume()
    after, _ = await collect(playout, 40, clock.monotonic)
    assert np.array_equal(np.concatenate(before + after), audio), "no frame lost or repeated"
    assert playout.released == 50 and len(tapped) == 50, "silence is not the agent's audio"


async def test_a_paused_playout_without_fill_waits_and_a_flush_ends_the_pause(clock):
    playout = Playout(RATE, max_ms=2000)
    await playout.put(tone(0.5))
    await collect(playout, 2, clock.monotonic)
    playout.pause()
    waiting = asyncio.create_task(playout.recv())
    await asyncio.sleep(0.2)
    assert not waiting.done(), "no frame while paused"
    playout.resume()
    frame = await asyncio.wait_for(waiting, 1)
    assert frame.any()
    playout.pause()
    playout.flush()
    assert not playout.paused and playout.queued_ms == 0


def test_idle_silence_fills_a_tail_then_one_slot_in_every():
    rule = IdleSilence(tail=3, every=4)
    filled = [i for i in range(30) if rule.wait(i) == 0]
    assert filled == [0, 1, 2, 6, 10, 14, 18, 22, 26]
    # From any skipped slot, the wait leads exactly to the next filled one.
    for i in range(3, 20):
        assert rule.wait(i) == 0 or i + rule.wait(i) in filled
    assert all(IdleSilence(tail=0, every=1).wait(i) == 0 for i in range(10))  # every slot
    with pytest.raises(ValueError):
        IdleSilence(every=0)


async def test_an_idle_stream_sends_its_tail_then_keep_alives_stamped_on_the_wall_clock(clock):
    playout = Playout(RATE, max_ms=2000, fill_silence=True, idle=IdleSilence(tail=5, every=20))
    await playout.put(tone(0.1))
    await playout.finish()
    frames, times = await collect(playout, 5 + 5 + 3, clock.monotonic)
    assert all(f.any() for f in frames[:5]) and not any(f.any() for f in frames[5:])
    # The reply and its 5-frame tail in consecutive slots, then one frame per 400 ms.
    assert np.diff(times[:10]) == pytest.approx(np.full(9, 0.020), abs=1e-6)
    assert np.diff(times[9:]) == pytest.approx(np.full(3, 0.400), abs=1e-6)
    # The slots between were skipped time: a stamping transport keeps to the wall clock.
    assert playout.skipped_samples == 3 * 19 * FRAME
    assert playout.released == 5 and not playout.speaking


async def test_audio_put_while_the_stream_idles_goes_out_at_once_not_at_the_keep_alive():
    # The real clock: the consumer waits in an empty slot; a keep-alive is 10 s away.
    playout = Playout(RATE, max_ms=2000, fill_silence=True, idle=IdleSilence(tail=0, every=500))
    first = await playout.recv()
    assert not first.any()  # a silent frame starts the stream
    waiting = asyncio.create_task(playout.recv())
    await asyncio.sleep(0.15)
    assert not waiting.done()
    await playout.put(tone(0.1))
    frame = await asyncio.wait_for(waiting, 5)  # a bound for failure; the keep-alive is at 10 s
    assert frame.any(), "the reply, not a keep-alive's silence"
    # The empty slots it waited through count as skipped, in whole frames.
    assert playout.skipped_samples % FRAME == 0 and playout.skipped_samples >= 5 * FRAME
    playout.close()
