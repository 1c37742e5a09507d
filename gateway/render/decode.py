"""Audio bytes of any common format to mono int16 PCM at a chosen rate (PyAV / FFmpeg).

Handles what agents put in an ``audio`` feature or an SSML ``<audio src>``: WAV, MP3, Ogg
(Vorbis or Opus), WebM, FLAC, AAC (ADTS) and MP4/M4A. Input is bounded by bytes and by decoded
duration, so a hostile or mistaken file cannot exhaust memory.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import urllib.parse
from collections.abc import Awaitable, Callable

import av
import numpy as np

from gateway.audio import Resampler
from gateway.errors import SpeechError
from gateway.ofp import Feature

#: ``fetch(url) -> (body, content_type)``, supplied by the caller, who enforces the address
#: policy, timeouts and size caps for outbound requests.
Fetch = Callable[[str], Awaitable[tuple[bytes, str]]]

MAX_BYTES = 20 * 1024 * 1024
MAX_SECONDS = 300.0


class AudioDecodeError(SpeechError, ValueError):
    """Audio could not be decoded, or was larger or longer than allowed."""


def decode_audio(
    data: bytes, rate: int, *, max_bytes: int = MAX_BYTES, max_seconds: float = MAX_SECONDS
) -> np.ndarray:
    """Decode one audio file held in memory to mono int16 PCM at ``rate``."""
    if len(data) > max_bytes:
        raise AudioDecodeError(
            f"audio of {len(data)} bytes is over the {max_bytes}-byte limit; send a shorter clip"
        )
    if not data:
        raise AudioDecodeError("audio is empty")
    chunks: list[np.ndarray] = []
    seconds = 0.0
    resampler: Resampler | None = None
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.audio:
                raise AudioDecodeError("the file has no audio stream")
            stream = container.streams.audio[0]
            for frame in container.decode(stream):
                seconds += frame.samples / frame.sample_rate
                if seconds > max_seconds:
                    raise AudioDecodeError(
                        f"audio is longer than the {max_seconds:g} s limit; send a shorter clip"
                    )
                if resampler is None or resampler.in_rate != frame.sample_rate:
                    if resampler is not None:
                        chunks.append(resampler.flush())
                    resampler = Resampler(frame.sample_rate, rate)
                chunks.append(resampler.process(_mono(frame)))
    except (av.FFmpegError, OSError) as exc:
        raise AudioDecodeError(f"cannot decode audio: {exc}") from exc
    if resampler is None:
        raise AudioDecodeError("the audio stream holds no samples")
    chunks.append(resampler.flush())
    return np.concatenate(chunks)


def _mono(frame: av.AudioFrame) -> np.ndarray:
    """One decoded frame as mono int16, whatever its sample format and layout."""
    arr = frame.to_ndarray()
    channels = len(frame.layout.channels)
    # Planar formats come as (channels, n); packed ones as (1, n * channels), interleaved.
    arr = arr.reshape(channels, -1) if frame.format.is_planar else arr.reshape(-1, channels).T
    if arr.dtype.kind == "f":
        audio = arr.astype(np.float32)
    elif arr.dtype.kind == "u":  # u8 is offset binary
        audio = (arr.astype(np.float32) - 128.0) / 128.0
    else:
        # Signed integers: full scale is 2 ** (bits - 1) (np.iinfo(dtype).max + 1).
        audio = arr.astype(np.float32) / float(2 ** (8 * arr.dtype.itemsize - 1))
    # Scaled by 32768 both ways so that 16-bit input comes out bit-exact.
    mono: np.ndarray = audio.mean(axis=0)
    return (mono * 32768.0).round().clip(-32768, 32767).astype(np.int16)


def data_uri_bytes(uri: str) -> bytes:
    """The payload of a ``data:`` URI (base64 or percent-encoded)."""
    header, sep, payload = uri.partition(",")
    if not sep or not header.startswith("data:"):
        raise AudioDecodeError("malformed data: URI (expected data:<type>[;base64],<data>)")
    if header.endswith(";base64"):
        return _b64(payload)
    return urllib.parse.unquote_to_bytes(payload)


def _b64(text: str) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AudioDecodeError(f"audio token is not valid base64: {exc}") from exc


async def decode_feature(
    feature: Feature,
    rate: int,
    fetch: Fetch,
    *,
    max_bytes: int = MAX_BYTES,
    max_seconds: float = MAX_SECONDS,
) -> np.ndarray:
    """Decode an OFP ``audio`` feature: every token in order, concatenated.

    A token carries its audio inline in ``value`` (base64, or a ``data:`` URI) or by reference in
    ``valueUrl`` (a ``data:`` URI, or a URL fetched with ``fetch``). The limits apply to the
    feature as a whole.
    """
    if not feature.tokens:
        raise AudioDecodeError("the audio feature has no tokens")
    parts: list[np.ndarray] = []
    for i, token in enumerate(feature.tokens):
        if isinstance(token.value, str):
            v = token.value.strip()
            data = data_uri_bytes(v) if v.startswith("data:") else _b64(v)
        elif token.value_url:
            if token.value_url.startswith("data:"):
                data = data_uri_bytes(token.value_url)
            else:
                data, _ = await fetch(token.value_url)
        else:
            raise AudioDecodeError(f"audio token {i} has neither a base64 value nor a valueUrl")
        budget = max_seconds - sum(p.size for p in parts) / rate
        pcm = await asyncio.to_thread(
            decode_audio, data, rate, max_bytes=max_bytes, max_seconds=budget
        )
        parts.append(pcm)
    return np.concatenate(parts)
