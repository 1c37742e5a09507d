"""What the rendering tests share: the rate they render at, steady voice settings, and the whole
rendering of a text or an SSML document by a synthesizer."""

from __future__ import annotations

import numpy as np

from gateway.render import Synthesizer, VoiceSettings, parse_ssml, render_segments

RATE = 16_000
#: Piper adds random noise to durations and intonation; measurements compare renders made
#: without it, so a difference comes from the setting under test and not from chance.
STEADY = VoiceSettings(noise_scale=0.0, noise_w_scale=0.0)


async def no_fetch(url: str) -> tuple[bytes, str]:
    """A fetcher for SSML ``<audio>`` that refuses: these tests reach nothing."""
    raise ConnectionError(f"fetching {url} is not allowed in this test")


async def speak(
    synth: Synthesizer, text: str, settings: VoiceSettings = STEADY, rate: int = RATE
) -> np.ndarray:
    """The whole rendering of ``text``."""
    chunks = [c async for c in synth.stream(text, settings, rate=rate)]
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)


async def say_ssml(
    synth: Synthesizer, ssml: str, settings: VoiceSettings = STEADY, fetch=no_fetch
) -> np.ndarray:
    """The whole rendering of an SSML document."""
    segments = parse_ssml(ssml)
    chunks = [c async for c in render_segments(segments, synth, settings, fetch, rate=RATE)]
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
