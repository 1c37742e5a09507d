"""Where a short sound pauses: the comma between a backchannel's two parts ("Okay, | nice.").

The VAD ends a stretch of voice only after ``STRETCH_GAP_MS`` of silence, and its chunks (32
ms) blur a short comma into the words around it; the energy of 10 ms frames finds it. Measured
on every clip said in two parts on the fifteen interruption sets (docs/performance.md, "Twelfth
pass"): the longest run of frames ``QUIET_DB`` under the loudest, between the first loud frame
and the last, was 80 ms or more in all but a few (espeak-ng's "Oh, exactly." runs its parts
together: 40 ms).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gateway.audio.frames import SAMPLE_RATE

HOP = SAMPLE_RATE // 100  # 10 ms frames
#: Frames this far under the loudest are the pause (a comma's breath and the room).
QUIET_DB = 35.0
#: The shortest pause that parts a sound in two (the dips inside a word are shorter).
MIN_PAUSE_MS = 80
#: The least sound (loud frames) on each side of a pause that parts a sound in two: a stop's
#: closure before its release is no pause between words. piper's "And then what?" closed 80 ms
#: before the "t" of "what", and the 20 ms of sound after it, decoded alone, read "Good.". On
#: the fifteen sets and flite's, the second part of every clip said in two parts had 140 ms or
#: more; only closures had less (10–30 ms).
MIN_PART_MS = 100
#: Audio before the pause's end kept with the part after it: the onset's rise, and the silence
#: Whisper reads a word's beginning from.
LEAD_MS = 100


@dataclass(frozen=True)
class Pause:
    """The longest pause inside a sound, in samples of its audio."""

    start: int
    end: int
    #: Voice before it: from the sound's first loud frame to the pause.
    before_ms: int
    #: Sound after it: its loud frames.
    after_ms: int

    @property
    def ms(self) -> int:
        """How long the pause lasts."""
        return (self.end - self.start) * 1000 // SAMPLE_RATE

    @property
    def second_part(self) -> int:
        """The sample a decode of what follows the pause begins at (``LEAD_MS`` before its
        end)."""
        return max(0, self.end - LEAD_MS * SAMPLE_RATE // 1000)


def longest_pause(audio: np.ndarray) -> Pause | None:
    """The longest pause of ``MIN_PAUSE_MS`` or more between the first and the last loud frame
    of ``audio`` (16 kHz, int16 or float in [-1, 1]) with ``MIN_PART_MS`` of sound on each
    side; None if it has none."""
    x = audio.astype(np.float64)
    if audio.dtype == np.int16:
        x = x / 32768.0
    n = len(x) // HOP
    if n < 3:
        return None
    db = 10 * np.log10(np.mean(x[: n * HOP].reshape(n, HOP) ** 2, axis=1) + 1e-10)
    loud = db > db.max() - QUIET_DB
    where = np.flatnonzero(loud)
    first, last = int(where[0]), int(where[-1])
    counted = np.concatenate([[0], np.cumsum(loud)])  # loud frames before each frame
    best: tuple[int, int] | None = None
    run_start = -1
    for i in range(first, last + 2):
        if i <= last and not loud[i]:
            run_start = i if run_start < 0 else run_start
            continue
        if run_start >= 0 and (i - run_start) * 10 >= MIN_PAUSE_MS:
            before, after = counted[run_start], counted[n] - counted[i]
            parts = min(before, after) * 10 >= MIN_PART_MS
            if parts and (best is None or i - run_start > best[1] - best[0]):
                best = (run_start, i)
        run_start = -1
    if best is None:
        return None
    after_ms = int(counted[n] - counted[best[1]]) * 10
    return Pause(best[0] * HOP, best[1] * HOP, (best[0] - first) * 10, after_ms)
