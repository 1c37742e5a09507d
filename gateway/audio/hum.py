"""Is a short sound a hum? The voice's own sign of a backchannel, without its transcript.

Whisper writes a closed-mouth "mm-hmm" as words ("in a moment", "and it can"), so the overlap's
words alone stopped the agent on every hum (issue 38). The sound says more: a hum is voiced
through the nose with the lips shut, so

* its power sits low: the nasal murmur's one strong resonance is near 250 Hz, and the shut lips
  damp the rest. ``nasal`` is the share of the loud frames with at least 80 % of their power
  (60 Hz–5 kHz) under 400 Hz; an open vowel puts its first formant at 500–900 Hz, so a word
  has such frames only in its nasals and voiced closures ("no", "hold on": 16–30 % on the tuning
  set), a hum in most of it (every synthetic "mm-hmm" and "mmm": 36–42 %, for piper and espeak-ng
  say them with a vowel, "em-em"; a hummed one is nasal through);
* it has no consonant noise: no fricative or burst above 2.5 kHz (``high_share``);
* it has few syllable onsets (``onsets``: rises of the energy envelope by ``ONSET_DB``);
* it is short (``voiced_ms``) and its pitch glides smoothly (``pitch_jumps``: share of voiced
  10 ms steps jumping more than two semitones, from :func:`gateway.voice.prosody.pitch_track`).

:func:`hum_features` measures them over the overlap's audio (numpy only: a few CPU-ms for a
second of audio); :meth:`HumFeatures.hum_like` is the rule, chosen on the tuning set's clips
(docs/performance.md, "A voice-based hum signal").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.voice.prosody import pitch_track

FRAME = 512  # 32 ms
HOP = 160  # 10 ms
#: Frames within this many dB of the loudest count as the sound (its loud part).
LOUD_DB = 20.0
#: Frames within this many dB of the loudest count as voiced time.
VOICED_DB = 30.0
#: A rise of the smoothed energy envelope by this much from its last dip is an onset.
ONSET_DB = 9.0
#: Below this (dBFS) a frame is silence whatever the loudest frame.
FLOOR_DBFS = -60.0
#: A frame is nasal when this share of its power lies under ``NASAL_HZ``.
NASAL_HZ = 400
NASAL_SHARE = 0.8


@dataclass(frozen=True)
class HumFeatures:
    """What a short sound's voice says (see the module)."""

    voiced_ms: int
    nasal: float
    high_share: float
    onsets: int
    pitch_jumps: float
    #: Share of the loud frames with a pitch (a hum is voiced throughout).
    pitched: float

    def hum_like(self) -> bool:
        """A hum: short, nasal, little consonant noise, few onsets, voiced, its pitch smooth.

        Chosen on the tuning set's clips and probes in its voices (docs/performance.md): every
        "mm-hmm" and "mmm" has ``nasal`` 0.36–0.42, every word 0.30 or less when it is this
        short ("Can you repeat that?" in piper reaches 0.54, over 800 ms)."""
        return (
            self.voiced_ms <= 700
            and self.nasal >= 0.35
            and self.high_share <= 0.1
            and self.onsets <= 4
            and self.pitched >= 0.8
            and self.pitch_jumps <= 0.15
        )


def hum_features(audio: np.ndarray) -> HumFeatures | None:
    """The hum features of ``audio`` (16 kHz, int16 or float in [-1, 1]); None without sound."""
    x = audio.astype(np.float64)
    if audio.dtype == np.int16:
        x = x / 32768.0
    if len(x) < FRAME:
        return None
    n = 1 + (len(x) - FRAME) // HOP
    idx = np.arange(FRAME)[None, :] + HOP * np.arange(n)[:, None]
    frames = x[idx] * np.hanning(FRAME)[None, :]
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    hz = np.fft.rfftfreq(FRAME, 1 / SAMPLE_RATE)
    band = power[:, (hz >= 60) & (hz < 5000)].sum(axis=1)
    db = 10 * np.log10(band / FRAME + 1e-12)
    top = float(db.max())
    if top < FLOOR_DBFS:
        return None
    loud = db >= max(top - LOUD_DB, FLOOR_DBFS)
    voiced = db >= max(top - VOICED_DB, FLOOR_DBFS)
    low = power[:, (hz >= 60) & (hz < NASAL_HZ)].sum(axis=1)
    nasal = low[loud] >= NASAL_SHARE * np.maximum(band[loud], 1e-12)
    high = power[loud][:, hz >= 2500].sum()
    total = band[loud].sum() + high
    f0, _ = pitch_track(audio)
    m = min(len(f0), n)
    # The pitch frames (40 ms) and these (32 ms) share the 10 ms hop: close enough to align.
    pitched = f0[:m][loud[:m]] > 0
    semis = 12 * np.log2(np.maximum(f0[:m], 1.0))
    both = (f0[:m][1:] > 0) & (f0[:m][:-1] > 0)
    jumps = np.abs(np.diff(semis))[both] > 2.0
    return HumFeatures(
        voiced_ms=int(voiced.sum()) * 1000 * HOP // SAMPLE_RATE,
        nasal=float(nasal.mean()),
        high_share=float(high / max(total, 1e-12)),
        onsets=_onsets(db, top),
        pitch_jumps=float(jumps.mean()) if len(jumps) else 0.0,
        pitched=float(pitched.mean()) if len(pitched) else 0.0,
    )


def _onsets(db: np.ndarray, top: float) -> int:
    """Rises of the energy envelope (smoothed over 30 ms) by ``ONSET_DB`` from its last dip,
    counting from silence too (the first syllable is an onset); a dip is a fall by as much
    from the last peak."""
    floored = np.pad(np.maximum(db, top - VOICED_DB - 10), 1, mode="edge")
    # Padded with its own ends: zeros would read as a rise from the floor at the edges.
    env = np.convolve(floored, np.ones(3) / 3, "valid")
    count = 0
    low = high = float(top - VOICED_DB - 10)
    in_dip = True
    for v in env.tolist():
        if in_dip:
            low = min(low, v)
            if v - low >= ONSET_DB:
                count, in_dip, high = count + 1, False, v
        else:
            high = max(high, v)
            if high - v >= ONSET_DB:
                in_dip, low = True, v
    return count
