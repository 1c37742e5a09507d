"""How the shared Whisper model is scheduled when many people speak at once (real tiny.en)."""

from __future__ import annotations

import asyncio
import threading
import time

import numpy as np
import pytest

from gateway.testing.speech import SENTENCES, piper_16k
from gateway.voice.decode_queue import DecodeQueue
from gateway.voice.stt import SttSettings, Transcriber, TranscriberBusy


@pytest.fixture(scope="module")
def transcriber() -> Transcriber:
    return Transcriber(SttSettings(max_pending=8))


@pytest.fixture(scope="module")
def clips() -> list:
    return [piper_16k(text) for text in SENTENCES[1:5]]


@pytest.fixture(autouse=True)
async def idle_model(transcriber) -> None:
    """The model is shared per process: decodes left by earlier tests' sessions finish first."""
    for _ in range(200):
        if transcriber.pending == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{transcriber.pending} decodes still pending after 10 s")


async def test_finals_queue_in_arrival_order_and_report_their_wait(transcriber, clips) -> None:
    results = await asyncio.gather(*(transcriber.transcribe(c) for c in clips))
    waits = [r.queued_s for r in results]
    assert waits[0] < 0.05
    assert waits == sorted(waits) and waits[-1] > waits[1] > 0
    assert all(r.text for r in results)
    assert transcriber.pending == 0


async def test_partials_are_skipped_while_finals_wait_and_run_when_idle(transcriber, clips) -> None:
    skipped = transcriber.partials_skipped
    finals = [asyncio.create_task(transcriber.transcribe(c)) for c in clips[:3]]
    await asyncio.sleep(0)  # the finals are admitted; two of them wait
    with pytest.raises(TranscriberBusy):
        await transcriber.transcribe_partial(clips[3])
    assert transcriber.partials_skipped == skipped + 1
    await asyncio.gather(*finals)
    # Idle: once the finals' rationing window has passed (decode_queue.BusyShare), it runs.
    await asyncio.sleep(DecodeQueue.PARTIAL_WINDOW_S)
    assert (await transcriber.transcribe_partial(clips[3])).text.strip()


async def test_a_cancelled_queued_decode_leaves_the_queue_at_once(transcriber, clips) -> None:
    tasks = [asyncio.create_task(transcriber.transcribe(c)) for c in clips[:3]]
    await asyncio.sleep(0)
    assert transcriber.pending == 3
    tasks[2].cancel()  # a speculation overtaken by more speech
    await asyncio.sleep(0.01)
    assert transcriber.pending == 2  # its slot is free before the others finish
    done = await asyncio.gather(*tasks[:2])
    assert all(r.text for r in done)
    assert tasks[2].cancelled() and transcriber.pending == 0


async def test_a_final_that_waited_is_decoded_greedy_to_catch_up(transcriber, clips) -> None:
    first = asyncio.create_task(transcriber.transcribe(clips[0]))
    await asyncio.sleep(0.02)  # it started alone: nobody waiting, the full beam
    second, last = (asyncio.create_task(transcriber.transcribe(c)) for c in clips[1:3])
    results = [await first, await second, await last]
    assert results[0].queued_s < 0.05 and results[0].beam == transcriber.settings.beam_size == 3
    # The last one had nobody behind it when it started, but it had waited: greedy.
    assert results[2].queued_s > 0.05 and results[2].beam == transcriber.settings.busy_beam_size
    assert all(r.text for r in results)


def test_synthesis_workers_run_below_the_rest_of_the_process() -> None:
    """Per-thread nice (Linux): under contention Whisper and the event loop go first."""
    from pathlib import Path

    from gateway.render.tts import SYNTHESIS_NICE, Synthesizer

    def nice_by_thread() -> dict[int, int]:
        out = {}
        for task in Path("/proc/self/task").iterdir():
            stat = (task / "stat").read_text()
            out[int(task.name)] = int(stat.rsplit(")", 1)[1].split()[16])
        return out

    before = nice_by_thread()
    synth = Synthesizer(workers=2)
    try:
        for _ in range(100):
            new = {t: n for t, n in nice_by_thread().items() if t not in before}
            if len(new) >= 2:
                break
            time.sleep(0.01)
    finally:
        synth.close()
    assert sorted(new.values())[-2:] == [SYNTHESIS_NICE] * 2
    assert before[threading.get_native_id()] == 0  # the caller (the event loop) is untouched


async def test_a_cancelled_running_decode_stops_at_its_next_stage(transcriber, clips) -> None:
    long_clip = np.concatenate(clips)  # ~10 s: its encoder pass alone takes a while
    abandoned = transcriber.abandoned
    task = asyncio.create_task(transcriber.transcribe(long_clip))
    for _ in range(100):  # until the worker has taken it
        await asyncio.sleep(0.005)
        if transcriber.pending == 1 and transcriber._engine.queue.waiting == 0:
            break
    task.cancel()  # speech resumed: nobody wants this transcript now
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(200):
        if transcriber.pending == 0:
            break
        await asyncio.sleep(0.01)
    assert transcriber.pending == 0
    # It stopped after a stage instead of running on to the beam search and word alignment.
    assert transcriber.abandoned == abandoned + 1
    # The worker is fine for the next one.
    assert (await transcriber.transcribe(clips[0])).text
