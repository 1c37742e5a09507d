"""How long a window the echo guard needs: a voice like the agent's against its echo.

The echo guard (``gateway.audio.echo``) calls the microphone echo when its last ``window_ms``
correlates with what was played at some lag. Two things pull the window's length apart:

- **A person whose voice is like the agent's.** The fortieth to forty-second held-out sets'
  piper clips (``gateway.testing.overlap``) are piper, the agent's own voice, in natural
  renditions, each said over the reply it answers (the agent's piper, from the end of the
  reply's first sentence). Any of their voiced chunks the guard calls echo counts as silence in
  the turn-taker: enough of them and a meant interruption is never heard.
- **The echo itself.** Each reply come back 10-25 dB down after 50-250 ms: as a copy, through
  Opus both ways (as over WebRTC), and in a room (an exponentially decaying reverberant tail,
  RT60 0.3 or 0.6 s, the direct sound 6 dB above it) with Opus. Any of its voiced chunks the
  guard lets through counts towards a barge-in (96 ms of voice in a row interrupts the agent).

Voiced is the session's VAD at its activation. For each window it prints the person's chunks
called echo (and in how many clips), and the share of the echo's chunks called echo, and in how
many echoes a barge-in's 96 ms got through. Synthesis is cached; the run takes a few minutes.

    .venv/bin/python scripts/bench_echo.py

Measured 2026-12-06: see docs/performance.md, "Twenty-eighth pass".
"""

from __future__ import annotations

import fractions

import av
import numpy as np

from gateway.audio.echo import EchoGuard
from gateway.proxy.settings import SessionSettings
from gateway.testing import overlap
from gateway.testing.speech import piper_variant
from gateway.voice.vad import VadStream

RATE = 16000
CHUNK = 512
FRAME = 320  # 20 ms, as the playout releases them
BARGE_CHUNKS = 3  # 96 ms of voice in a row (SessionSettings.barge_in_ms)
SETS = ("FORTIETH", "FORTY_FIRST", "FORTY_SECOND")
WINDOWS_MS = (192, 384)
#: (name, RT60 s or 0 for none, Opus both ways)
PATHS = (
    ("a copy", 0.0, False),
    ("Opus", 0.0, True),
    ("room 0.3 s, Opus", 0.3, True),
    ("room 0.6 s, Opus", 0.6, True),
)


def opus(pcm: np.ndarray) -> np.ndarray:
    """``pcm`` (16 kHz) through Opus at 48 kHz and back, as WebRTC carries it."""
    enc = av.CodecContext.create("libopus", "w")
    enc.sample_rate, enc.layout, enc.format, enc.bit_rate = 48000, "mono", "s16", 32000
    enc.time_base = fractions.Fraction(1, 48000)
    dec = av.CodecContext.create("libopus", "r")
    dec.sample_rate, dec.layout = 48000, "mono"
    up = np.interp(np.arange(len(pcm) * 3) / 3, np.arange(len(pcm)), pcm.astype(np.float64))
    up = np.clip(up, -32768, 32767).astype(np.int16)
    out = []
    for pts, i in enumerate(range(0, len(up) - 959, 960)):
        frame = av.AudioFrame.from_ndarray(up[i : i + 960].reshape(1, -1), "s16", "mono")
        frame.sample_rate, frame.pts = 48000, pts * 960
        for packet in enc.encode(frame):
            out += [d.to_ndarray().reshape(-1) for d in dec.decode(packet)]
    y = np.concatenate(out).astype(np.float64)
    if np.abs(y).max() <= 1.5:
        y *= 32767  # a float decoder
    y = y[: len(y) // 3 * 3].reshape(-1, 3).mean(axis=1)
    return np.pad(y, (0, max(0, len(pcm) - len(y))))[: len(pcm)]


def room(x: np.ndarray, rt60: float, rng: np.random.Generator) -> np.ndarray:
    """``x`` in a room: the direct sound and a decaying tail 6 dB below it."""
    n = int(rt60 * RATE)
    tail = rng.standard_normal(n) * np.exp(-6.9 * np.arange(n) / RATE / rt60)
    tail *= np.sqrt(0.25 / np.sum(tail**2))
    tail[0] = 1.0
    return np.asarray(np.convolve(x, tail)[: len(x)] / np.sqrt(np.sum(tail**2)), np.float64)


def verdicts(played: np.ndarray, mic: np.ndarray, window_ms: int) -> list[bool]:
    """Whether each voiced microphone chunk was called echo; ``played`` released in real
    time from 0, each chunk arriving as its last sample was captured."""
    guard, vad = EchoGuard(RATE, window_ms=window_ms), VadStream()
    activation = SessionSettings().endpoint.activation
    out, released = [], 0
    mic = np.clip(mic, -32768, 32767).astype(np.int16)
    for j in range(len(mic) // CHUNK):
        now = (j + 1) * CHUNK / RATE
        while released + FRAME <= len(played) and (released + FRAME) / RATE <= now:
            guard.played(played[released : released + FRAME], released / RATE)
            released += FRAME
        chunk = mic[j * CHUNK : (j + 1) * CHUNK]
        _, probs = vad.process(chunk)
        voiced = bool(len(probs)) and float(probs[-1]) >= activation
        echo = guard.heard(chunk, now, voiced)
        if voiced:
            out.append(echo)
    return out


def barged(marks: list[bool]) -> bool:
    """Whether BARGE_CHUNKS voiced chunks in a row were let through."""
    run = 0
    for echo in marks:
        run = 0 if echo else run + 1
        if run >= BARGE_CHUNKS:
            return True
    return False


def main() -> None:
    rng = np.random.default_rng(0)
    people, replies = [], {}
    for name in SETS:
        for clip in overlap._named(name):
            if clip.reply is None or not clip.voice.startswith("piper"):
                continue
            first, rest = clip.reply
            if clip.reply not in replies:
                played = piper_variant(f"{first} {rest}")
                replies[clip.reply] = (played, len(piper_variant(first)) + RATE // 5)
            played, onset = replies[clip.reply]
            mic = np.zeros(max(len(played), onset + len(clip.audio)))
            mic[onset : onset + len(clip.audio)] = clip.audio
            people.append((played, mic))
    echoes: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {p[0]: [] for p in PATHS}
    for played, _ in replies.values():
        db, lag = rng.uniform(-25, -10), int(rng.integers(50, 251))
        for label, rt60, codec in PATHS:
            x = played.astype(np.float64)
            x = opus(x) if codec else x
            x = room(x, rt60, rng) if rt60 else x
            x = x * 10 ** (db / 20) + rng.standard_normal(len(x)) * 10  # the room's hiss
            x = opus(x) if codec else x
            echoes[label].append((played, np.concatenate([np.zeros(lag * 16), x])[: len(x)]))
    print(f"{len(people)} piper clips over their replies; {len(replies)} replies as echo")
    print(
        "| window | person's voiced chunks called echo (clips) | "
        + " | ".join(f"echo, {label}: chunks called echo / barged" for label, *_ in PATHS)
        + " |"
    )
    for window in WINDOWS_MS:
        marks = [verdicts(p, m, window) for p, m in people]
        called = sum(sum(m) for m in marks)
        row = [f"{window} ms", f"{called} of {sum(map(len, marks))} ({sum(map(any, marks))})"]
        for label, *_ in PATHS:
            ms = [verdicts(p, m, window) for p, m in echoes[label]]
            share = sum(sum(m) for m in ms) / max(1, sum(map(len, ms)))
            row.append(f"{share:.1%} / {sum(map(barged, ms))} of {len(ms)}")
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
