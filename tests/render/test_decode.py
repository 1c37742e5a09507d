"""Decoding every audio format an agent may send, generated here with PyAV's own encoders."""

from __future__ import annotations

import base64
import io

import av
import numpy as np
import pytest

from gateway.ofp import Feature, Token
from gateway.render.decode import AudioDecodeError, decode_audio, decode_feature

RATE = 16_000

# (container, codec, sample rate, layout). PyAV's bundled FFmpeg has encoders for all of these;
# Vorbis is FFmpeg's native (experimental) encoder: libvorbis is not bundled.
FORMATS = [
    ("wav", "pcm_s16le", 22050, "mono"),
    ("mp3", "libmp3lame", 44100, "stereo"),
    ("ogg", "vorbis", 44100, "stereo"),
    ("ogg", "libopus", 48000, "mono"),
    ("opus", "libopus", 48000, "stereo"),
    ("webm", "libopus", 48000, "mono"),
    ("flac", "flac", 16000, "mono"),
    ("adts", "aac", 44100, "stereo"),
    ("mp4", "aac", 44100, "mono"),
    ("ipod", "aac", 24000, "stereo"),  # .m4a
]


def encode(container: str, codec: str, rate: int, layout: str, seconds=1.0, freq=440.0) -> bytes:
    """A sine tone at half of full scale, encoded into a file in memory."""
    buf = io.BytesIO()
    with av.open(buf, mode="w", format=container) as out:
        stream = out.add_stream(codec, rate=rate, layout=layout)
        if codec == "vorbis":
            stream.codec_context.options = {"strict": "experimental"}
        channels = len(av.AudioLayout(layout).channels)
        n = int(rate * seconds)
        tone = (0.5 * np.sin(2 * np.pi * freq * np.arange(n) / rate)).astype(np.float32)
        step = stream.codec_context.frame_size or 1024
        for start in range(0, n, step):
            block = np.tile(tone[start : start + step], (channels, 1))
            frame = av.AudioFrame.from_ndarray(block, format="fltp", layout=layout)
            frame.sample_rate, frame.pts = rate, start
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return buf.getvalue()


def dominant_hz(pcm: np.ndarray, rate: int = RATE) -> float:
    spectrum = np.abs(np.fft.rfft(pcm.astype(np.float64)))
    return float(np.argmax(spectrum) * rate / len(pcm))


@pytest.mark.parametrize(("container", "codec", "rate", "layout"), FORMATS)
def test_each_format_decodes_to_mono_at_the_requested_rate(container, codec, rate, layout):
    pcm = decode_audio(encode(container, codec, rate, layout), RATE)
    assert pcm.dtype == np.int16 and pcm.ndim == 1
    assert len(pcm) / RATE == pytest.approx(1.0, abs=0.06)  # codecs add some priming samples
    assert dominant_hz(pcm) == pytest.approx(440, abs=3)
    rms = np.sqrt(np.mean((pcm / 32768.0) ** 2))
    assert rms == pytest.approx(0.5 / np.sqrt(2), rel=0.15)


def test_stereo_is_mixed_down_not_summed():
    pcm = decode_audio(encode("wav", "pcm_s16le", 16000, "stereo"), RATE)
    assert np.abs(pcm).max() == pytest.approx(0.5 * 32768, rel=0.02)


def test_size_and_duration_limits():
    wav = encode("wav", "pcm_s16le", 16000, "mono", seconds=2.0)
    with pytest.raises(AudioDecodeError, match="byte limit"):
        decode_audio(wav, RATE, max_bytes=1000)
    with pytest.raises(AudioDecodeError, match="longer than the 1 s limit"):
        decode_audio(wav, RATE, max_seconds=1.0)
    assert len(decode_audio(wav, RATE, max_seconds=2.5)) == 2 * RATE


@pytest.mark.parametrize("junk", [b"", b"not audio at all" * 10, b"RIFF\x00\x00"])
def test_garbage_raises_a_decode_error(junk):
    with pytest.raises(AudioDecodeError):
        decode_audio(junk, RATE)


def _feature(*tokens: Token) -> Feature:
    return Feature(mime_type="audio/wav", tokens=list(tokens))


async def test_feature_tokens_are_decoded_in_order_from_every_kind_of_source():
    low = encode("wav", "pcm_s16le", 16000, "mono", seconds=0.5, freq=300)
    mid = encode("flac", "flac", 16000, "mono", seconds=0.5, freq=600)
    high = encode("mp3", "libmp3lame", 44100, "mono", seconds=0.5, freq=1200)
    fetched = []

    async def fetch(url):
        fetched.append(url)
        return high, "audio/mpeg"

    feature = _feature(
        Token(value=base64.b64encode(low).decode()),
        Token(value="data:audio/flac;base64," + base64.b64encode(mid).decode()),
        Token(value_url="https://agent.example/clip.mp3"),
    )
    pcm = await decode_feature(feature, RATE, fetch)
    assert fetched == ["https://agent.example/clip.mp3"]
    half = RATE // 2
    assert dominant_hz(pcm[:half]) == pytest.approx(300, abs=5)
    assert dominant_hz(pcm[half : 2 * half]) == pytest.approx(600, abs=5)
    assert dominant_hz(pcm[2 * half + 1000 :]) == pytest.approx(1200, abs=5)


async def test_feature_duration_limit_covers_all_tokens():
    clip = base64.b64encode(encode("wav", "pcm_s16le", 16000, "mono", seconds=0.6)).decode()

    async def fetch(url):
        raise AssertionError("nothing to fetch")

    feature = _feature(Token(value=clip), Token(value=clip))
    assert len(await decode_feature(feature, RATE, fetch, max_seconds=1.5)) == int(1.2 * RATE)
    with pytest.raises(AudioDecodeError, match="longer"):
        await decode_feature(feature, RATE, fetch, max_seconds=1.0)


async def test_feature_with_bad_base64_raises():
    async def fetch(url):
        raise AssertionError("nothing to fetch")

    with pytest.raises(AudioDecodeError, match="base64"):
        await decode_feature(_feature(Token(value="%%% not base64 %%%")), RATE, fetch)
