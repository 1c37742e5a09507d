"""Parsed SSML spoken: :func:`render_segments` turns the segments of
:func:`gateway.render.ssml.parse_ssml` into audio, speech by the synthesizer, silences as zeros,
``<audio>`` fetched and decoded (its content spoken when that fails)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import numpy as np

from gateway.errors import GatewayError
from gateway.render.decode import AudioDecodeError, Fetch, data_uri_bytes, decode_audio
from gateway.render.ssml import Segment, Silence, Speech
from gateway.render.tts import TextToSpeech, VoiceSettings

log = logging.getLogger(__name__)

#: Silence kept on each side where a phrase is split by a prosody change (a word gap).
JOIN_KEEP_MS = 30


async def render_segments(
    segments: list[Segment] | tuple[Segment, ...],
    synth: TextToSpeech,
    settings: VoiceSettings,
    fetch: Fetch,
    *,
    rate: int,
) -> AsyncIterator[np.ndarray]:
    """Speak parsed SSML: yields mono int16 PCM chunks at ``rate``, in order, as they are made."""
    for i, seg in enumerate(segments):
        if isinstance(seg, Speech):
            # Speech next to speech is one phrase split by a prosody change: Piper's lead-in and
            # lead-out silences at that join would be heard as pauses, so they are trimmed.
            joined_before = i > 0 and isinstance(segments[i - 1], Speech)
            joined_after = i + 1 < len(segments) and isinstance(segments[i + 1], Speech)
            chunks = synth.stream(seg.text, seg.prosody.apply(settings), rate=rate)
            async for chunk in _joined(chunks, rate, joined_before, joined_after):
                yield chunk
        elif isinstance(seg, Silence):
            if seg.ms:
                yield np.zeros(seg.ms * rate // 1000, dtype=np.int16)
        else:
            try:
                pcm = await _play(seg.src, fetch, rate)
            except Exception as exc:
                # The caller's fetch and FFmpeg (PyAV) fail in ways of their own: whatever it is,
                # the fallback is the remedy. Only what is not a GatewayError (not an agent or
                # audio failure the gateway explains) is a bug, logged with its traceback.
                log.warning(
                    "SSML <audio src=%r> failed (%s); speaking its fallback",
                    seg.src,
                    exc,
                    exc_info=not isinstance(exc, GatewayError),
                )
                async for chunk in render_segments(seg.fallback, synth, settings, fetch, rate=rate):
                    yield chunk
            else:
                yield pcm


async def _joined(
    chunks: AsyncIterator[np.ndarray], rate: int, trim_start: bool, trim_end: bool
) -> AsyncIterator[np.ndarray]:
    """Sentence chunks with the silence trimmed at the start of the first and the end of the
    last; the last chunk is held back until it is known to be the last."""
    held: np.ndarray | None = None
    first = True
    async for chunk in chunks:
        if first and trim_start:
            chunk = trim_silence(chunk, rate, start=True, end=False)
        first = False
        if held is not None:
            yield held
        if not trim_end:
            yield chunk
        else:
            held = chunk
    if held is not None:
        yield trim_silence(held, rate, start=False, end=True)


def trim_silence(
    pcm: np.ndarray, rate: int, *, start: bool, end: bool, keep_ms: int = JOIN_KEEP_MS
) -> np.ndarray:
    """Cut leading and/or trailing silence (below 5 % of the peak) down to ``keep_ms``."""
    magnitude = np.abs(pcm.astype(np.int32))
    loud = np.nonzero(magnitude > 0.05 * magnitude.max())[0] if pcm.size else magnitude
    if not loud.size:
        return pcm  # all silent (e.g. volume="silent"): the time it takes is the point
    keep = keep_ms * rate // 1000
    first = max(loud[0] - keep, 0) if start else 0
    last = min(loud[-1] + 1 + keep, len(pcm)) if end else len(pcm)
    return pcm[first:last]


async def _play(src: str, fetch: Fetch, rate: int) -> np.ndarray:
    data = data_uri_bytes(src) if src.startswith("data:") else (await fetch(src))[0]
    pcm = await asyncio.to_thread(decode_audio, data, rate)
    if not pcm.size:
        raise AudioDecodeError("decoded to no samples")
    return pcm
