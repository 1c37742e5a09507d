"""Paced output: agent audio released one 20 ms frame per 20 ms of wall time.

A producer (the reply renderer) :meth:`~Playout.put`\\ s PCM chunks of any size; a consumer (the
transport) calls :meth:`~Playout.recv` and gets one frame per slot. The queue is bounded, so a
producer that runs ahead of real time waits instead of piling audio up. :meth:`~Playout.flush`
is barge-in: everything queued is dropped at once, and no frame queued before it is ever
released after it. :meth:`~Playout.pause` holds the queue (silence, or nothing, is released)
until :meth:`~Playout.resume` goes on where it stopped: speech over the agent is being decided.

Slots are scheduled on the monotonic clock as ``start + n × 20 ms``, so sleep jitter does not
accumulate. A consumer that fell a little behind catches up by releasing frames back to back; one
that fell more than ``max_lag_ms`` behind (a stalled loop) starts a new schedule instead of
bursting, and counts the time it skipped (:attr:`Playout.skipped_samples`). ``paced=False`` releases frames as fast as they are asked for (offline processing).

A stream that must not stall (``fill_silence``, a WebRTC track) does not need a silent frame in
every idle slot: :class:`IdleSilence` says which slots get one (a short tail after each reply,
then a keep-alive every 400 ms, as Opus DTX sends), and the slots between are skipped time
(:attr:`Playout.skipped_samples`), so the frames' timestamps stay on the wall clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gateway.audio.frames import FRAME_MS, SAMPLE_RATE
from gateway.errors import Closed


class PlayoutClosed(Closed):
    """The playout was closed and everything in it has been played."""


@dataclass(frozen=True)
class IdleSilence:
    """Which idle slots of a continuous stream get a silent frame (sans-I/O: slot counts only).

    aiortc encodes (Opus, on its thread pool), encrypts and sends every frame a track gives it;
    a silent frame in every idle slot cost ~450 CPU-ms per WebRTC person per turn at 20 people
    (docs/performance.md, issue 40), for nothing a listener hears. So after audio stops,
    ``tail`` silent frames go out (the decoder ends the reply on real silence, not on packet
    loss concealment), then one every ``every`` slots, as Opus DTX does (one frame per 400 ms):
    the stream is never silent long enough for a receiver to think it gone, and the frames'
    timestamps skip the slots between. ``every=1`` is a frame in every slot.
    """

    tail: int = 10
    every: int = 20

    def __post_init__(self) -> None:
        if self.tail < 0 or self.every < 1:
            raise ValueError("IdleSilence needs tail >= 0 and every >= 1")

    def wait(self, idle: int) -> int:
        """Slots to skip before the next silent frame, ``idle`` being how many idle slots have
        passed since the last audio (0 for the first): 0 means this slot gets one."""
        if idle < self.tail:
            return 0
        return self.every - 1 - (idle - self.tail) % self.every


#: What a stream with ``fill_silence`` sends while idle unless told otherwise.
KEEP_ALIVE = IdleSilence()


class Playout:
    """A bounded, paced queue of 20 ms mono int16 frames at ``rate``.

    ``max_ms`` bounds the queued audio (default 2 s: enough to ride over synthesis hiccups,
    little enough that a barge-in discards little work). ``lead_ms`` releases audio that much
    ahead of real time, so a client with its own buffer (the page's WebSocket player) rides over
    network jitter; on barge-in the client must drop that lead too (the ``flush`` event).
    With ``fill_silence`` the consumer gets silent frames while nothing is queued (for
    transports that need a continuous stream, such as a WebRTC track), in the slots ``idle``
    picks (the others skipped: :class:`IdleSilence`); without it :meth:`recv` waits for audio. ``on_state(speaking)`` is
    called whenever playback starts or stops. Use from one event loop.
    """

    def __init__(
        self,
        rate: int = SAMPLE_RATE,
        *,
        max_ms: int = 2000,
        paced: bool = True,
        fill_silence: bool = False,
        idle: IdleSilence = KEEP_ALIVE,
        max_lag_ms: int = 200,
        lead_ms: int = 0,
        on_state: Callable[[bool], None] | None = None,
        on_frame: Callable[[np.ndarray], None] | None = None,
    ) -> None:
        self.rate = rate
        self.frame_samples = rate * FRAME_MS // 1000
        self._frame_s = self.frame_samples / rate
        self._max_frames = max(1, max_ms // FRAME_MS)
        self._paced = paced
        self._fill_silence = fill_silence
        self._idle_silence = idle
        self._idle_slots = 0  # idle slots since the last audio frame (filled or skipped)
        self._max_lag_s = max_lag_ms / 1000
        self._lead_s = lead_ms / 1000
        self._on_state = on_state
        #: Called with each frame of audio as it is released (the echo guard's reference).
        self.on_frame = on_frame
        self._paused = False
        self._resumed = asyncio.Event()
        self._resumed.set()
        #: Frames of audio released since the playout began (what was heard, for the record).
        self.released = 0
        #: Frames of audio queued since the playout began: a reply whose first frame was put
        #: when this was ``n`` has had ``consumed - n`` of its frames played (or flushed).
        self.queued = 0
        self._flushed = 0
        self._frames: deque[np.ndarray] = deque()
        self._rest = np.zeros(0, dtype=np.int16)
        self._has_audio = asyncio.Event()
        self._has_room = asyncio.Event()
        self._has_room.set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._next_slot: float | None = None
        #: Wall time (in samples at ``rate``) the schedule skipped when it started anew after a
        #: stall longer than ``max_lag_ms``, and the idle slots :class:`IdleSilence` left
        #: empty: a transport that stamps its frames moves its clock on by it (see
        #: ``gateway.server.webrtc.PlayoutTrack``).
        self.skipped_samples = 0
        self._generation = 0
        self._closed = False

    @property
    def speaking(self) -> bool:
        """True from the first frame released until the queue runs dry or is flushed."""
        return not self._idle.is_set()

    @property
    def queued_ms(self) -> int:
        """Audio waiting to be released."""
        return len(self._frames) * FRAME_MS

    async def put(self, pcm: np.ndarray) -> None:
        """Queue mono int16 PCM at ``rate``; waits while the queue is full.

        A partial frame at the end is kept for the next call (or :meth:`finish`). If
        :meth:`flush` happens while this waits, the rest of ``pcm`` is dropped too.
        """
        if self._closed:
            raise PlayoutClosed("cannot put audio into a closed playout")
        generation = self._generation
        data = np.concatenate([self._rest, np.asarray(pcm, dtype=np.int16).reshape(-1)])
        n = self.frame_samples
        whole = len(data) // n * n
        for start in range(0, whole, n):
            while len(self._frames) >= self._max_frames:
                self._has_room.clear()
                await self._has_room.wait()
                if generation != self._generation:
                    return
            self._frames.append(data[start : start + n])
            self.queued += 1
            self._has_audio.set()
        self._rest = data[whole:]

    async def finish(self) -> None:
        """Queue the partial frame left by :meth:`put`, padded with silence (end of a reply)."""
        if self._rest.size:
            pad = np.zeros(self.frame_samples - self._rest.size, dtype=np.int16)
            await self.put(pad)

    def flush(self) -> int:
        """Barge-in: drop all queued audio now (a pause ends too); returns how many frames were
        dropped."""
        if self._paused:
            self.resume()
        dropped = len(self._frames)
        self._flushed += dropped
        self._frames.clear()
        self._rest = np.zeros(0, dtype=np.int16)
        self._generation += 1
        self._idle_slots = 0
        self._has_audio.clear()
        self._has_room.set()
        self._set_speaking(False)
        return dropped

    @property
    def consumed(self) -> int:
        """Frames released or flushed since the playout began (see :attr:`queued`)."""
        return self.released + self._flushed

    @property
    def paused(self) -> bool:
        """Held by :meth:`pause`: nothing queued is released until :meth:`resume`."""
        return self._paused

    def pause(self) -> None:
        """Hold what is queued: the agent goes quiet at once but keeps its place. Playback
        does not stop (``speaking`` stays True): a pause is not the end of a reply."""
        self._paused = True
        self._resumed.clear()

    def resume(self) -> None:
        """Go on from where :meth:`pause` held the queue."""
        self._paused = False
        self._next_slot = None  # the reply goes on now, not in the past
        self._resumed.set()

    def close(self) -> None:
        """No more audio will come: :meth:`recv` raises :class:`PlayoutClosed` once drained."""
        self._closed = True
        self._has_audio.set()  # wake a consumer waiting for audio so it can see the end

    async def wait_idle(self) -> None:
        """Return once nothing is playing."""
        await self._idle.wait()

    async def recv(self) -> np.ndarray:
        """The next frame, at its slot: queued audio, or silence when idle with
        ``fill_silence``. Raises :class:`PlayoutClosed` after :meth:`close` once drained."""
        while True:
            if self._paused and not self._closed:
                await self._slot()
                if self._paused:
                    if self._fill_silence:
                        self._advance()
                        return np.zeros(self.frame_samples, dtype=np.int16)
                    await self._resumed.wait()
                continue
            if not self._frames:
                await self._slot()  # the frame released last is still playing until then
                if not self._frames:
                    self._set_speaking(False)
                    if self._closed:
                        raise PlayoutClosed("playout closed")
                    if self._fill_silence:
                        if await self._skip_idle_slots():
                            continue  # audio came, or the slot for a keep-alive did
                        self._idle_slots += 1
                        self._advance()
                        return np.zeros(self.frame_samples, dtype=np.int16)
                    await self._has_audio.wait()
                    self._next_slot = None  # a new reply starts now, not in the past
                    continue
            generation = self._generation
            await self._slot()
            if generation != self._generation or not self._frames or self._paused:
                continue  # flushed (or paused) while waiting for the slot
            frame = self._frames.popleft()
            if not self._frames:
                self._has_audio.clear()
            self._has_room.set()
            self._advance()
            self._set_speaking(True)
            self._idle_slots = 0
            self.released += 1
            if self.on_frame is not None:
                self.on_frame(frame)
            return frame

    def __aiter__(self) -> Playout:
        return self

    async def __anext__(self) -> np.ndarray:
        try:
            return await self.recv()
        except PlayoutClosed:
            raise StopAsyncIteration from None

    async def _slot(self) -> None:
        if self._paced and self._next_slot is not None:
            delay = self._next_slot - self._lead_s - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)

    async def _skip_idle_slots(self) -> bool:
        """At an idle slot that :class:`IdleSilence` leaves empty, wait for audio or for the
        slot of the next silent frame, whichever is first; the whole slots that passed are
        skipped time. Returns False when this slot gets its silent frame."""
        skip = self._idle_silence.wait(self._idle_slots)
        if not skip or not self._paced or self._next_slot is None:
            return False
        delay = self._next_slot + skip * self._frame_s - self._lead_s - time.monotonic()
        if delay > 0 and not self._has_audio.is_set():
            audio = asyncio.ensure_future(self._has_audio.wait())
            timer = asyncio.ensure_future(asyncio.sleep(delay))
            try:
                await asyncio.wait((audio, timer), return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in (audio, timer):
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
        # Slots wholly past (the one a frame is released in next has begun, at most one frame
        # ago): timed out, that is ``skip``, and the next slot gets its silent frame.
        behind = time.monotonic() + self._lead_s - self._next_slot
        passed = min(skip, max(0, int(behind / self._frame_s + 1e-9)))
        self._next_slot += passed * self._frame_s
        self.skipped_samples += passed * self.frame_samples
        self._idle_slots += passed
        return True

    def _advance(self) -> None:
        if not self._paced:
            return
        now = time.monotonic()
        if self._next_slot is None or now - self._next_slot > self._max_lag_s:
            if self._next_slot is not None:
                behind = round((now - self._next_slot) / self._frame_s)
                self.skipped_samples += behind * self.frame_samples
            self._next_slot = now
        self._next_slot += self._frame_s

    def _set_speaking(self, speaking: bool) -> None:
        if speaking == self.speaking:
            return
        if speaking:
            self._idle.clear()
        else:
            self._idle.set()
        if self._on_state is not None:
            self._on_state(speaking)
