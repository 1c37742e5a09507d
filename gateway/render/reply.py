"""An agent's utterance (an OFP dialog event) to sound.

Which feature is played, in order of preference:

1. ``audio`` (or any feature with an ``audio/*`` mime type) — the agent's own recording, if it
   decodes. It is decoded in full before playing (it is bounded by the decoder's limits).
2. ``ssml`` (or any ``application/ssml+xml`` feature) — rendered with prosody, breaks and
   say-as, if it parses. Only inline token values are read; SSML by ``valueUrl`` is not fetched.
3. ``text`` (or any ``text/plain`` feature) — synthesized as is.

Synthesized speech starts at once: Piper opens a sentence with up to ~100 ms of silence, which
the listener would hear as latency, so the first chunk of ``ssml`` or ``text`` speech is trimmed
to :data:`LEAD_MS` of it (a reply that *opens* with an SSML ``<break>`` keeps the break). An
agent's own ``audio`` is played as recorded.

``html`` is never spoken: the page shows it. A feature that fails (undecodable audio, malformed
SSML) is logged as a warning and the next one is tried; once audio has started, it is not.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import numpy as np

from gateway.errors import GatewayError
from gateway.ofp import DialogEvent, Feature
from gateway.render.decode import Fetch, decode_feature
from gateway.render.ssml import SSMLError, parse_ssml_tokens
from gateway.render.ssml_audio import render_segments, trim_silence
from gateway.render.tts import TextToSpeech, VoiceSettings

log = logging.getLogger(__name__)

#: Silence kept before the first sound of a synthesized reply, faded in from zero so the cut
#: makes no click. It was 15 ms: over WebRTC, played in real time in 20 ms frames, that pushed
#: the first sound into the next frame (Opus adds 6.5 ms of its own), and the first reply audio
#: reached the client 33 ms after the synthesiser's first chunk, against 8.5 ms with none kept
#: (scripts/load.py, one person, medians of 10 and 8 turns).
LEAD_MS = 3


def _feature(event: DialogEvent, name: str, mime_prefix: str) -> Feature | None:
    feature = event.features.get(name)
    if feature is None:
        feature = next(
            (f for f in event.features.values() if f.mime_type.startswith(mime_prefix)), None
        )
    return feature if feature is not None and feature.tokens else None


async def render_dialog_event(
    event: DialogEvent,
    synth: TextToSpeech,
    settings: VoiceSettings,
    fetch: Fetch,
    *,
    rate: int,
) -> AsyncIterator[np.ndarray]:
    """Yield the sound of ``event`` as mono int16 PCM chunks at ``rate`` (rule in the module
    docstring). Yields nothing for an event with nothing to say."""
    audio = _feature(event, "audio", "audio/")
    if audio is not None:
        try:
            pcm = await decode_feature(audio, rate, fetch)
        except Exception as exc:  # the caller's fetch and FFmpeg may fail in any way: see ssml
            log.warning(
                "%s: audio feature not playable (%s); trying ssml/text",
                event.id,
                exc,
                exc_info=not isinstance(exc, GatewayError),
            )
        else:
            yield pcm
            return

    ssml = _feature(event, "ssml", "application/ssml+xml")
    if ssml is not None:
        try:
            segments = parse_ssml_tokens([str(t.value) for t in ssml.tokens if t.value])
        except SSMLError as exc:
            log.warning("%s: %s; speaking the text feature instead", event.id, exc)
        else:
            if segments:  # inline SSML only; an empty document leaves the text to speak
                chunks = render_segments(segments, synth, settings, fetch, rate=rate)
                async for chunk in _prompt(chunks, rate):
                    yield chunk
                return

    text = event.text()
    if text.strip():
        async for chunk in _prompt(synth.stream(text, settings, rate=rate), rate):
            yield chunk


async def render_sentence(
    text: str, synth: TextToSpeech, settings: VoiceSettings, *, rate: int, first: bool
) -> AsyncIterator[np.ndarray]:
    """The sound of one sentence of a reply that streams (gateway.agents.streaming); the
    first sentence's lead-in silence is trimmed as a whole reply's is."""
    chunks = synth.stream(text, settings, rate=rate)
    async for chunk in _prompt(chunks, rate) if first else chunks:
        yield chunk


async def _prompt(chunks: AsyncIterator[np.ndarray], rate: int) -> AsyncIterator[np.ndarray]:
    """``chunks`` with the silence before the first sound cut to :data:`LEAD_MS` (a chunk that
    is all silence, such as a leading ``<break>``, is left whole)."""
    first = True
    async for chunk in chunks:
        if first:
            chunk = fade_in(trim_silence(chunk, rate, start=True, end=False, keep_ms=LEAD_MS), rate)
            first = False
        yield chunk


def fade_in(pcm: np.ndarray, rate: int) -> np.ndarray:
    """``pcm`` rising from zero over its first :data:`LEAD_MS` (what is left of the lead-in)."""
    n = min(len(pcm), LEAD_MS * rate // 1000)
    if n == 0:
        return pcm
    out = pcm.copy()
    out[:n] = (out[:n].astype(np.float32) * np.linspace(0.0, 1.0, n, endpoint=False)).astype(
        out.dtype
    )
    return out
