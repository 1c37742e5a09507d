"""The agent's own voice in the person's microphone: a server-side echo guard.

A client that plays the agent's audio into its own microphone (no echo cancellation) sends that
audio back, 10-25 dB down and some 50-250 ms late, plus whatever its own buffer adds. The
gateway knows exactly what it played: :class:`EchoGuard` keeps the last second of it (the
reference) and tells whether the microphone's last ``window_ms`` is that reference, delayed by
any lag up to ``max_lag_ms`` (the normalised cross-correlation's peak at or above
``threshold``). A person speaking over the echo lowers the peak (their voice is not in the
reference), so their barge-in still counts.

The window is 384 ms, not less, because a voice like the agent's (a person, or the benchmark's
own piper renditions) matches a short stretch of the reply by chance: a vowel at the same pitch
correlates with another. On the fortieth to forty-second sets' 78 piper clips, each said over
the piper reply it answers, 243 of their 3 978 voiced chunks (67 clips) passed for echo at
192 ms; at 384 ms 49 (19 clips). The echo loses
nothing by it: in a room (RT60 0.6 s) through Opus both ways 99.1 % of its chunks were echo at
192 ms (3 of 39 echoes let a barge-in through), 100 % at 384 (none). scripts/bench_echo.py.

Pure but for the times it is handed: the session passes each played frame and each microphone
chunk with its arrival time. Everything runs at 8 kHz (speech's energy is below 4 kHz; half the
work of 16 kHz).
"""

from __future__ import annotations

from collections import deque

import numpy as np

RATE = 8000
#: The least microphone audio compared (64 ms): a microphone that has just begun to send is
#: compared on what it sent (its first voiced chunks were let through without this).
MIN_WINDOW = RATE * 64 // 1000
#: A pause in what was played longer than this is silence at the client.
GAP_S = 0.1


def _to_8k(pcm: np.ndarray, rate: int) -> np.ndarray:
    x = np.asarray(pcm, dtype=np.float32).reshape(-1)
    if rate % RATE == 0:
        k = rate // RATE
        n = len(x) // k * k
        return np.asarray(x[:n].reshape(-1, k).mean(axis=1), np.float32)
    n = len(x) * RATE // rate
    return np.asarray(np.interp(np.arange(n) * (rate / RATE), np.arange(len(x)), x), np.float32)


def similarity(mic: np.ndarray, reference: np.ndarray) -> float:
    """The peak normalised cross-correlation of ``mic`` against every stretch of
    ``reference`` as long as it (1.0: ``mic`` is a scaled copy of one; 0 when either is
    silent or ``reference`` is shorter)."""
    m = mic.astype(np.float64)
    r = reference.astype(np.float64)
    if len(r) < len(m) or not len(m):
        return 0.0
    m = m - m.mean()
    energy_m = float(np.dot(m, m))
    if energy_m <= 0:
        return 0.0
    n = 1 << (len(r) + len(m) - 1).bit_length()
    corr = np.fft.irfft(np.fft.rfft(r, n) * np.conj(np.fft.rfft(m, n)), n)[: len(r) - len(m) + 1]
    cs = np.concatenate([[0.0], np.cumsum(r * r)])
    energy_r = cs[len(m) :] - cs[: len(r) - len(m) + 1]
    ok = energy_r > energy_m * 1e-6  # a silent stretch of reference matches nothing
    if not ok.any():
        return 0.0
    ncc = corr[ok] / np.sqrt(energy_r[ok] * energy_m)
    return float(ncc.max())


class EchoGuard:
    """What the gateway played, to recognise it in the microphone (see the module).

    ``played(frame, now)`` for each frame the playout releases (at ``rate``);
    ``heard(chunk, arrived, check)`` for each 16 kHz microphone chunk: with ``check`` (the
    chunk is voiced), whether the microphone's last ``window_ms`` is the reference's echo.
    """

    def __init__(
        self,
        rate: int,
        *,
        window_ms: int = 384,
        max_lag_ms: int = 800,
        threshold: float = 0.5,
    ) -> None:
        self.rate = rate
        self.window = RATE * window_ms // 1000
        self.max_lag_s = max_lag_ms / 1000
        self.window_s = window_ms / 1000
        self.threshold = threshold
        keep_s = self.max_lag_s + self.window_s + 0.2
        #: (release time, 8 kHz samples) of what was played, the last ``keep_s`` of it.
        self._reference: deque[tuple[float, np.ndarray]] = deque(maxlen=int(keep_s * 100) + 8)
        self._mic: deque[np.ndarray] = deque()
        self._mic_samples = 0
        #: Checks made, and how many said echo (the benchmark reads them).
        self.checks = 0
        self.echoes = 0
        self.last = 0.0  # the last check's similarity

    def played(self, frame: np.ndarray, now: float) -> None:
        """A frame of the agent's audio was released at ``now``."""
        if not self._reference or now - self._reference[-1][0] > GAP_S:
            # Played after a pause (or first): the client was silent before it, so the echo's
            # onset comes after silence — silence the reference must have too, or no lag lines
            # the onset up (the peak was 0.1-0.4 at onsets after a stall without this).
            self._reference.append((now, np.zeros(self.window, np.float32)))
        self._reference.append((now, _to_8k(frame, self.rate)))

    def heard(self, chunk: np.ndarray, arrived: float, check: bool = True) -> bool:
        """A microphone chunk (16 kHz) that arrived at ``arrived``: whether it is echo."""
        mic = _to_8k(chunk, 16000)
        self._mic.append(mic)
        self._mic_samples += len(mic)
        while self._mic and self._mic_samples - len(self._mic[0]) >= self.window:
            self._mic_samples -= len(self._mic.popleft())
        if not check or self._mic_samples < MIN_WINDOW:
            return False
        since = arrived - self.max_lag_s - self.window_s
        recent = [f for t, f in self._reference if since <= t <= arrived]
        if not recent:
            return False  # nothing played lately: nothing to echo
        self.checks += 1
        self.last = similarity(np.concatenate(self._mic)[-self.window :], np.concatenate(recent))
        echo = self.last >= self.threshold
        self.echoes += echo
        return echo
