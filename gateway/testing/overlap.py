"""Speech over an agent, played into a real ``serve`` over the WebSocket (tests and
``scripts/bench_interruptions.py``).

:func:`talk_over` is one trial: a page (``transport: ws``) asks the parrot to repeat a long text,
and while the reply plays, a microphone sends 20 ms frames in real time — silence, the clip at
``at_s`` into the reply, silence again — optionally with the agent's own audio coming back into
it (``echo_db`` down, ``echo_lag_ms`` late, as a client without echo cancellation would). The
client "plays" the agent's audio as the page does (a 60 ms prebuffer, held while paused, dropped
on ``flush``), so the echo it makes is the echo a speaker would make. What came back is an
:class:`OverlapTrial`: the ``playback`` messages, the flush, the transcript, and when each came
relative to the clip's speech onset.

:data:`CLIPS` is the set the benchmark plays, written before it ran: backchannels, noises and
interruptions in three voices (piper, espeak-ng en-us, espeak-ng en-gb), and the echo case.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.testing.page import PARROT, Page
from gateway.testing.speech import espeak_wav, festival_wav, flite_wav, piper_variant, trim

#: What the parrot is asked to repeat: long enough to talk over (~14 s spoken).
LONG_TEXT = (
    "Once upon a time there was a little lighthouse keeper who counted every wave that reached "
    "the rocks below his tower, and every evening he wrote the number in a big blue book, "
    "until one stormy night the waves were too many to count and he fell asleep at his desk."
)
FRAME = SAMPLE_RATE // 50  # 20 ms at 16 kHz

BACKCHANNELS = ("Mm-hmm.", "Yeah.", "Right.", "Okay.", "I see.", "Sure.", "Uh-huh.")
INTERRUPTIONS = (
    "Wait, stop.",
    "Hold on.",
    "No, that's wrong.",
    "Stop.",
    "What time is it?",
    "Actually, tell me about the weather.",
    "Can you repeat that?",
)
NOISES = ("cough", "clap", "typing", "door")
VOICES = ("piper", "en-us", "en-gb")


@dataclass(frozen=True)
class Clip:
    """One thing said (or sounded) over the agent: ``kind`` is what it should be decided as
    (``backchannel``, ``noise``, ``interruption``, ``echo``)."""

    name: str
    kind: str
    voice: str
    audio: np.ndarray = field(repr=False)
    #: What the agent says when it is said: (the sentence the person has just heard, the
    #: rest it talks on with); the clip begins as the first ends. None: :data:`LONG_TEXT`,
    #: 1.5 s in (:func:`talk_over`'s ``at_s``).
    reply: tuple[str, str] | None = None

    def heard_before(self) -> str:
        """The agent's words the person had heard when the clip began (offline, for
        :func:`gateway.proxy.overlap.read_back`): the reply's first sentence, or
        :data:`LONG_TEXT`'s first 1.5 s at piper's pace; and a second more of it, as the
        session's estimate has (``gateway.proxy.speaking.HEARD_AHEAD_MS``)."""
        from gateway.proxy.speaking import HEARD_AHEAD_MS, WORDS_PER_S

        ahead = round(HEARD_AHEAD_MS / 1000 * WORDS_PER_S)
        if self.reply is None:
            return " ".join(LONG_TEXT.split()[: round(1.5 * WORDS_PER_S) + ahead])
        first, rest = self.reply
        return " ".join([first, *rest.split()[:ahead]])


def speech(text: str, voice: str) -> np.ndarray:
    """``text`` at 16 kHz in ``voice`` (``piper``, one of :data:`PIPER_VARIANTS`, ``flite-``
    or ``festival-`` and one of their voices, or an espeak-ng voice), its silent ends
    trimmed."""
    if voice.startswith("festival-"):
        pcm = festival_wav(text, voice.removeprefix("festival-"))
    elif voice.startswith("flite-"):
        pcm = flite_wav(text, voice.removeprefix("flite-"))
    elif voice == "piper":
        pcm = piper_variant(text)
    elif voice in PIPER_VARIANTS:
        length_scale, draw = PIPER_VARIANTS[voice]
        pcm = piper_variant(text, length_scale=length_scale, draw=draw)
    else:
        pcm = espeak_wav(text, voice=voice)
    return trim(pcm)


#: Piper in one of its natural renditions (``draw``), ``length_scale`` times slower.
PIPER_VARIANTS = {
    "piper-slow": (1.15, 3),
    "piper-fast": (0.9, 5),
    "piper-alt": (1.05, 7),
    "piper-low": (1.1, 11),
    "piper-brisk": (0.95, 13),
    "piper-even": (1.0, 17),
    "piper-soft": (1.08, 19),
    "piper-crisp": (0.93, 23),
    "piper-calm": (1.12, 29),
    "piper-light": (0.97, 31),
    "piper-warm": (1.04, 37),
    "piper-dawn": (0.98, 41),
    "piper-dusk": (1.06, 43),
    "piper-dew": (1.02, 47),
    "piper-mist": (0.96, 53),
    "piper-haze": (1.03, 59),
    "piper-gust": (0.94, 61),
    "piper-ray": (1.07, 67),
    "piper-glow": (0.99, 71),
    "piper-tide": (1.01, 73),
    "piper-frost": (0.92, 79),
    "piper-brook": (1.09, 83),
    "piper-flint": (0.91, 89),
    "piper-vale": (1.11, 97),
    "piper-ember": (0.89, 101),
    "piper-cove": (1.13, 103),
    "piper-peak": (0.88, 107),
    "piper-reef": (1.14, 109),
    "piper-fern": (0.87, 113),
    "piper-moss": (1.16, 127),
    "piper-sand": (0.86, 131),
    "piper-pine": (1.17, 137),
    "piper-clay": (0.85, 139),
    "piper-oak": (1.18, 149),
    "piper-ash": (0.84, 151),
    "piper-elm": (1.19, 157),
    "piper-birch": (0.83, 163),
    "piper-maple": (1.2, 167),
    "piper-willow": (0.82, 173),
    "piper-cedar": (1.21, 179),
    "piper-aspen": (0.81, 181),
    "piper-hazel": (1.22, 191),
    "piper-rowan": (0.8, 193),
    "piper-linden": (1.23, 197),
    "piper-yew": (0.79, 199),
    "piper-spruce": (1.24, 211),
    "piper-alder": (0.78, 223),
    "piper-juniper": (1.25, 227),
    "piper-poplar": (0.77, 229),
    "piper-larch": (1.26, 233),
    "piper-holly": (0.76, 239),
    "piper-laurel": (1.27, 241),
    "piper-myrtle": (0.75, 251),
    "piper-sorrel": (1.28, 257),
    "piper-acacia": (0.74, 263),
    "piper-briar": (1.125, 269),
    "piper-heather": (0.875, 271),
    "piper-thorn": (1.105, 277),
    "piper-bramble": (0.895, 281),
    "piper-sage": (1.135, 283),
    "piper-fennel": (0.865, 293),
    "piper-clover": (1.085, 307),
    "piper-ivy": (0.915, 311),
    "piper-dill": (1.145, 313),
    "piper-basil": (0.855, 317),
    "piper-tansy": (1.075, 331),
    "piper-yarrow": (0.925, 337),
    "piper-chervil": (1.155, 347),
    "piper-lovage": (0.845, 349),
    "piper-borage": (1.065, 353),
    "piper-caraway": (0.935, 359),
    "piper-chicory": (1.165, 367),
    "piper-chive": (0.835, 373),
    "piper-anise": (1.055, 379),
    "piper-cumin": (0.945, 383),
    "piper-savory": (1.175, 389),
    "piper-hyssop": (0.825, 397),
    "piper-mace": (0.955, 401),
    "piper-nutmeg": (1.115, 409),
    "piper-clove": (1.045, 419),
    "piper-saffron": (0.905, 421),
    "piper-marjoram": (1.185, 431),
    "piper-angelica": (0.985, 433),
    "piper-tarragon": (1.035, 439),
    "piper-pimento": (0.965, 443),
    "piper-sumac": (1.095, 449),
    "piper-galangal": (0.975, 457),
    "piper-sassafras": (1.015, 461),
    "piper-fenugreek": (0.995, 463),
}


def spoken(
    backchannels: tuple[str, ...], interruptions: tuple[str, ...], voices: tuple[str, ...]
) -> list[Clip]:
    """Each backchannel and interruption in each voice, backchannels first."""
    return [
        Clip(text, kind, voice, speech(text, voice))
        for kind, texts in (("backchannel", backchannels), ("interruption", interruptions))
        for text in texts
        for voice in voices
    ]


def sound(name: str, seed: int = 0) -> np.ndarray:
    """A noise with no words, made here (no recordings): a cough (a 250 ms burst of shaped
    noise), a clap (two sharp bursts), typing (ten clicks), a door (a low thump and a knock)."""
    rng = np.random.default_rng(seed)
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE

    def burst(ms: int, level: float, smooth: int) -> np.ndarray:
        n = SAMPLE_RATE * ms // 1000
        x = np.convolve(rng.standard_normal(n), np.ones(smooth) / smooth, "same")
        env = np.exp(-np.linspace(0, 6, n)) * np.minimum(1, np.linspace(0, 20, n))
        return np.asarray(level * x * env / (np.abs(x).max() + 1e-9), np.float64)

    gap = np.zeros(SAMPLE_RATE // 10)
    if name == "cough":
        out = np.concatenate([burst(250, 12000, 3), gap, burst(180, 9000, 3)])
    elif name == "clap":
        out = np.concatenate([burst(40, 20000, 1), gap, gap, burst(40, 20000, 1)])
    elif name == "typing":
        click = np.concatenate([burst(8, 9000, 1), np.zeros(SAMPLE_RATE * 110 // 1000)])
        out = np.concatenate([click] * 10)
    elif name == "door":
        thump = 15000 * np.sin(2 * np.pi * 70 * t[:4000]) * np.exp(-np.linspace(0, 8, 4000))
        out = np.concatenate([thump, gap, burst(60, 12000, 2)])
    else:
        raise ValueError(f"no sound {name!r}")
    return np.asarray(np.clip(out, -32768, 32767), np.int16)


def noises(*seeds: int) -> list[Clip]:
    """The four noises in each of these renditions."""
    return [Clip(n, "noise", f"seed {seed}", sound(n, seed)) for n in NOISES for seed in seeds]


def echoes(levels_db: tuple[float, ...]) -> list[Clip]:
    """The echo case (the agent's own audio back, no clip) at each of these levels."""
    return [Clip("echo", "echo", f"{db} dB", np.zeros(0, np.int16)) for db in levels_db]


def clips() -> list[Clip]:
    """The benchmark's set: every backchannel and interruption in every voice (42), the four
    noises twice (8), and the echo case in each voice's place (3): 53 trials."""
    out = spoken(BACKCHANNELS, INTERRUPTIONS, VOICES)
    out += noises(0, 1)
    out += echoes((-10, -18, -25))
    return out


#: The held-out set (issue 38, item 3), written on 2026-11-27 before anything ran on it and
#: before any rule was looked at against it: sentences and voices that the tuning set above
#: does not use (piper slower in a natural rendition, espeak-ng's Scottish and female US
#: voices), and the noises' other renditions.
HELD_OUT_BACKCHANNELS = ("Yep.", "Got it.", "Oh, okay.", "Mhm.", "Uh-huh, right.", "Ah, I see.")
HELD_OUT_INTERRUPTIONS = (
    "Sorry, one second.",
    "Stop talking.",
    "Hang on a moment.",
    "No no no.",
    "Pause please.",
    "Turn the volume down.",
    "What did you just say?",
)
HELD_OUT_VOICES = ("piper-slow", "en-gb-scotland", "en-us+f3")


def held_out_clips() -> list[Clip]:
    """The held-out set: each backchannel (6) and interruption (7) in each voice (3), the four
    noises in two renditions not in the tuning set (8): 47 trials."""
    out = spoken(HELD_OUT_BACKCHANNELS, HELD_OUT_INTERRUPTIONS, HELD_OUT_VOICES)
    out += noises(2, 3)
    return out


#: The second held-out set (issue 38, after the voice-based hum signal), written and committed
#: on 2026-11-27 before anything ran on it and before the hum rule was final: hums and
#: backchannels the other sets do not hold, the shortest meant interruptions (one word, two of
#: them nasal or hum-like in sound: "No.", "Mm, no."), voices no set uses (piper 10 % faster in a
#: natural rendition, espeak-ng's Caribbean and a female Received Pronunciation voice), and the
#: noises in a rendition not used before. The old held-out set was looked at while the hum rule
#: was built, so it is held out no longer; this one is, and runs once, with the rule final.
NEW_BACKCHANNELS = ("Hmm.", "Mm.", "Mhm, yes.", "Uh-huh.", "Mm-hmm, sure.", "Yeah, yeah.")
NEW_INTERRUPTIONS = (
    "No.",
    "Wait.",
    "Stop.",
    "Mm, no.",
    "Hold on, please.",
    "Excuse me.",
    "That is not what I asked.",
    "Tell me a joke instead.",
)
NEW_VOICES = ("piper-fast", "en-029", "en-gb-x-rp+f4")


def new_held_out_clips() -> list[Clip]:
    """The second held-out set: each backchannel (6) and interruption (8) in each voice (3),
    and the four noises in one rendition not used before: 46 trials."""
    out = spoken(NEW_BACKCHANNELS, NEW_INTERRUPTIONS, NEW_VOICES)
    out += noises(4)
    return out


#: The third held-out set (issue 38, third pass), written and committed on 2026-11-28 before
#: anything ran on it, with the join rule (``OverlapSettings.join_ms``) already in place: the two
#: sets before were looked at while the rules were built, so neither is held out any more. Its
#: sentences, voices, noise rendition and echo levels are in no other set
#: (tests/proxy/test_overlap_sets.py): backchannels in two parts ("Mhm, okay.", "Yeah, sure.")
#: and one-word ones; interruptions that are one word but no stop word ("Enough."), that begin
#: like a backchannel ("Okay, but …") or with a stop word after a greeting ("Hey, stop."); piper
#: 5 % slower in a third natural rendition, espeak-ng's Lancaster and New York voices; the echo
#: case at levels between the tuning set's. It runs once per transport, with the rules final.
THIRD_BACKCHANNELS = ("Mhm, okay.", "Oh, right.", "Yeah, sure.", "Ooh.", "Uh-hm, yeah.", "Cool.")
THIRD_INTERRUPTIONS = (
    "Hey, stop.",
    "No, wait.",
    "Enough.",
    "Hold it.",
    "Can you speak slower?",
    "I have a question.",
    "Okay, but what about tomorrow?",
)
THIRD_VOICES = ("piper-alt", "en-gb-x-gbclan", "en-us-nyc")
THIRD_NOISE_SEED = 5
THIRD_ECHO_DB = (-13, -16, -22)


def held_out(
    backchannels: tuple[str, ...],
    interruptions: tuple[str, ...],
    voices: tuple[str, ...],
    noise_seed: int | tuple[int, ...],
    echo_db: tuple[float, ...],
) -> list[Clip]:
    """A held-out set from the third on: each backchannel and interruption in each voice, the
    four noises in rendition ``noise_seed`` (or each of several), and the echo case at each of
    ``echo_db`` (six backchannels, seven interruptions and three voices: 46 trials)."""
    seeds = (noise_seed,) if isinstance(noise_seed, int) else noise_seed
    return spoken(backchannels, interruptions, voices) + noises(*seeds) + echoes(echo_db)


def _named(name: str) -> list[Clip]:
    """The held-out set (:func:`held_out`) whose parts are this module's ``{name}_BACKCHANNELS``,
    ``{name}_INTERRUPTIONS``, ``{name}_VOICES``, ``{name}_NOISE_SEED`` (or ``_SEEDS``) and
    ``{name}_ECHO_DB``: each set's function says which it is, its constants what it holds. A set
    with ``{name}_REPLIES`` says each phrase over the agent's reply it answers
    (:attr:`Clip.reply`)."""
    parts = globals()
    seeds = parts.get(f"{name}_NOISE_SEEDS") or parts[f"{name}_NOISE_SEED"]
    out = held_out(
        parts[f"{name}_BACKCHANNELS"],
        parts[f"{name}_INTERRUPTIONS"],
        parts[f"{name}_VOICES"],
        seeds,
        parts[f"{name}_ECHO_DB"],
    )
    replies: dict[str, tuple[str, str]] = parts.get(f"{name}_REPLIES", {})
    return [dataclasses.replace(c, reply=replies[c.name]) if c.name in replies else c for c in out]


def third_held_out_clips() -> list[Clip]:
    """The third held-out set (:func:`held_out`)."""
    return _named("THIRD")


#: The fourth held-out set (issue 38, fourth pass), written and committed on 2026-11-28 before
#: anything ran on it, with the backchannel prompt (``OverlapSettings.prompt``) and the loop rule
#: already in place: the third set was looked at while they were built (its offline decodes),
#: so it is held out no longer. Nothing in it is in another set (tests/proxy/test_overlap_sets.py):
#: backchannels said twice or in two parts ("Right, right.", "Hmm, okay.", "I see, yeah.") and a
#: laugh; interruptions with a stop word after other words ("Okay, stop there.", "Stop,
#: please."), one word that is no stop word ("Quiet."), and questions; piper 10 % slower in a
#: fourth natural rendition, espeak-ng's West Midlands voice and a US variant no set uses; the
#: noises and the echo in renditions and at levels not used before. It runs once per transport.
FOURTH_BACKCHANNELS = (
    "Right, right.",
    "Hmm, okay.",
    "Yes.",
    "I see, yeah.",
    "Uh-huh, sure.",
    "Ha ha.",
)
FOURTH_INTERRUPTIONS = (
    "Stop, please.",
    "Wait a second.",
    "No, not that.",
    "Quiet.",
    "Let me ask something.",
    "Okay, stop there.",
    "Why is that?",
)
FOURTH_VOICES = ("piper-low", "en-gb-x-gbcwmd", "en-us+m3")
FOURTH_NOISE_SEED = 6
FOURTH_ECHO_DB = (-12, -20, -24)


def fourth_held_out_clips() -> list[Clip]:
    """The fourth held-out set (:func:`held_out`)."""
    return _named("FOURTH")


#: The fifth held-out set (issue 38, fifth pass), written and committed on 2026-11-28 before
#: anything ran on it and with the rules unchanged since the fourth set ran: the fourth set was
#: looked at afterwards (its misses replayed), so it is held out no longer. Nothing in it is in
#: another set (tests/proxy/test_overlap_sets.py): backchannels said twice or in two parts, a
#: one-word one ("Nice.") and an exclamation ("Oh, wow."); interruptions of one word that is no
#: stop word ("Pause."), two short ones ("Skip it.", "Hey, listen."), one ending on a
#: backchannel word ("That's not right."), and questions; piper 5 % faster in a fifth natural rendition, espeak-ng's British voice and a US
#: one with female variants no set uses; the noises and the echo in renditions and at levels not
#: used before. It runs once per transport.
FIFTH_BACKCHANNELS = (
    "Okay, okay.",
    "Mm, right.",
    "Yeah, I see.",
    "Nice.",
    "Oh, wow.",
    "Uh-huh, yep.",
)
FIFTH_INTERRUPTIONS = (
    "Pause.",
    "Hey, listen.",
    "Sorry, what?",
    "That's not right.",
    "Go back a bit.",
    "Skip it.",
    "How long will it take?",
)
FIFTH_VOICES = ("piper-brisk", "en-gb+f2", "en-us+f4")
FIFTH_NOISE_SEED = 7
FIFTH_ECHO_DB = (-11, -15, -21)


def fifth_held_out_clips() -> list[Clip]:
    """The fifth held-out set (:func:`held_out`)."""
    return _named("FIFTH")


#: The sixth held-out set (issue 38, fifth pass), written and committed on 2026-11-28 before
#: anything ran on it, with the agent going on before the decision (``OverlapSettings.go_on``)
#: already in place: the fifth set's silences were looked at while it was built. Nothing in it
#: is in another set (tests/proxy/test_overlap_sets.py): backchannels in two parts and one word
#: ("Exactly."); interruptions of one or two words that are no stop words ("Next.", "Slow
#: down.", "Never mind."), one with a stop word and a question, and questions; piper in a sixth
#: natural rendition at its own pace, espeak-ng's received pronunciation and a Caribbean voice
#: with a female variant; the noises and the echo in renditions and at levels not used before.
#: It runs once per transport.
SIXTH_BACKCHANNELS = (
    "Mm-hmm, yeah.",
    "Right, okay.",
    "Sure, sure.",
    "Yeah, totally.",
    "Exactly.",
    "Oh, I see.",
)
SIXTH_INTERRUPTIONS = (
    "Slow down.",
    "What do you mean?",
    "Next.",
    "Never mind.",
    "Wait, what?",
    "That's wrong.",
    "Tell me something else.",
)
SIXTH_VOICES = ("piper-even", "en-gb-x-rp", "en-029+f3")
SIXTH_NOISE_SEED = 8
SIXTH_ECHO_DB = (-14, -17, -23)


def sixth_held_out_clips() -> list[Clip]:
    """The sixth held-out set (:func:`held_out`)."""
    return _named("SIXTH")


#: The seventh held-out set (issue 38, sixth pass), written and committed on 2026-11-28 before
#: anything ran on it, with this pass's rules in place (the length bound's slow backchannel, the
#: hum rule's sure words, a backchannel before its tail, "I" as an onset, each stretch decoded
#: alone, the overlap's beam): all six sets before were replayed while they were built, so none
#: is held out any more. Nothing in it is in another set (tests/proxy/test_overlap_sets.py):
#: backchannels in two parts and one said twice; interruptions of two words with no stop word
#: ("Hang on.", "Louder, please."), one with a stop word ("Stop for a second."), one that begins
#: with a stop word before a request ("No, go back."), and questions; piper 8 % slower in a
#: seventh natural rendition, espeak-ng's Scottish and New York accents in female variants no
#: set uses; the noises in a tenth rendition; the echo at the one whole level between −10 and
#: −25 dB no set uses and two half-way levels. It runs once per transport.
SEVENTH_BACKCHANNELS = (
    "Uh-huh, okay.",
    "Oh, nice.",
    "Mm, yeah.",
    "Right, sure.",
    "Yep, yep.",
    "Ah, okay.",
)
SEVENTH_INTERRUPTIONS = (
    "Stop for a second.",
    "Hang on.",
    "Louder, please.",
    "What was that?",
    "No, go back.",
    "Can I ask you something?",
    "Tell me the time.",
)
SEVENTH_VOICES = ("piper-soft", "en-gb-scotland+f4", "en-us-nyc+f1")
SEVENTH_NOISE_SEED = 9
SEVENTH_ECHO_DB = (-19.0, -12.5, -22.5)


def seventh_held_out_clips() -> list[Clip]:
    """The seventh held-out set (:func:`held_out`)."""
    return _named("SEVENTH")


#: The eighth held-out set (issue 38, seventh pass), written and committed on 2026-11-28 before
#: anything ran on it, with this pass's rules in place ("amen" a backchannel, a second half of
#: no words after one): the seventh set was replayed while they were built, so it is held out no
#: longer. Twice the size of the sets before it, in the same proportions (six voices, two noise
#: renditions, six echo levels: 92 trials), so that one clip is 2 % of its false stops, not 4 %.
#: Nothing in it is in another set (tests/proxy/test_overlap_sets.py): backchannels in two parts
#: and of one word ("Great.", "Alright."); interruptions with a stop word after other words
#: ("Actually, no.") or before one ("Stop it."), two words with none ("Be quiet.", "Repeat
#: that."), one that begins with a backchannel word ("Yeah, but why?"), a request and a
#: question; piper in two natural renditions, 7 % faster and 12 % slower, and espeak-ng's
#: Lancaster, US, Caribbean and West Midlands voices in variants no set uses; the noises in two
#: renditions and the echo at six half-way levels between −10 and −25 dB no set uses.
EIGHTH_BACKCHANNELS = (
    "Yeah, okay.",
    "Mhm, right.",
    "Uh-huh, I see.",
    "Great.",
    "Okay, yep.",
    "Alright.",
)
EIGHTH_INTERRUPTIONS = (
    "Stop it.",
    "Actually, no.",
    "Be quiet.",
    "Repeat that.",
    "Yeah, but why?",
    "I need help.",
    "Is it going to rain?",
)
EIGHTH_VOICES = (
    "piper-crisp",
    "piper-calm",
    "en-gb-x-gbclan+f2",
    "en-us+m5",
    "en-029+m2",
    "en-gb-x-gbcwmd+f3",
)
EIGHTH_NOISE_SEEDS = (10, 11)
EIGHTH_ECHO_DB = (-10.5, -14.5, -16.5, -18.5, -20.5, -24.5)


def eighth_held_out_clips() -> list[Clip]:
    """The eighth held-out set: each backchannel and interruption in each of six voices, the
    four noises in two renditions and the echo case at six levels (92 trials)."""
    return _named("EIGHTH")


#: The ninth held-out set (issue 38, seventh pass), written and committed on 2026-11-28 before
#: anything ran on it, with "all right" a backchannel: the eighth set ran once over the
#: WebSocket, and Whisper's "All right." for its "Alright." (all six voices) was looked at, so it
#: is held out no longer. The eighth's size and proportions (92 trials). Nothing in it is in
#: another set (tests/proxy/test_overlap_sets.py): backchannels in two parts and of one word
#: ("Good."); interruptions with a stop word said twice ("Stop, stop.") or after another word
#: ("Sorry, wait."), of one or two words with none ("Again.", "Say again."), one that begins
#: with a backchannel word ("Okay, and then?"), a request and a question; piper in two natural
#: renditions, 3 % faster and 4 % slower, and espeak-ng's received pronunciation, New York,
#: Scottish and US voices in variants no set uses; the noises in two renditions and the echo at
#: six half-way levels between −10 and −25 dB no set uses.
NINTH_BACKCHANNELS = (
    "Uh-huh, yeah.",
    "Okay, great.",
    "Hmm, right.",
    "Good.",
    "Yeah, exactly.",
    "Oh, sure.",
)
NINTH_INTERRUPTIONS = (
    "Stop, stop.",
    "Sorry, wait.",
    "Say again.",
    "Okay, and then?",
    "Turn it up.",
    "Where is that?",
    "Again.",
)
NINTH_VOICES = (
    "piper-light",
    "piper-warm",
    "en-gb-x-rp+f1",
    "en-us-nyc+m4",
    "en-gb-scotland+m2",
    "en-us+f2",
)
NINTH_NOISE_SEEDS = (12, 13)
NINTH_ECHO_DB = (-11.5, -13.5, -15.5, -17.5, -21.5, -23.5)


def ninth_held_out_clips() -> list[Clip]:
    """The ninth held-out set: the eighth's shape (:func:`eighth_held_out_clips`), 92 trials."""
    return _named("NINTH")


#: The tenth held-out set (issue 38, eighth pass), written and committed on 2026-11-28 before
#: anything ran on it, with this pass's rules in place (the hum rule's first word, the length
#: bound counting a joined overlap's new voice and waiting for a decode on its way), chosen on
#: the nine sets and flite's voices. The ninth's shape (92 trials), nothing in it in another
#: set: backchannels of one word ("Wow.") and in two parts; interruptions of one word with no
#: stop word ("Cancel."), beginning with a backchannel ("Yeah, one question.") or a hum ("Mm,
#: hang on."), a stop word in a question ("Can you stop?"), a request; piper in two new
#: renditions, Festival's ked (a fourth synthesizer: diphones) and espeak-ng West Midlands,
#: Caribbean and Scottish variants no set uses; noises and echo levels no set uses.
TENTH_BACKCHANNELS = (
    "Uh-huh, got it.",
    "Mm, okay.",
    "Yes, yes.",
    "Oh, cool.",
    "Right, I see.",
    "Wow.",
)
TENTH_INTERRUPTIONS = (
    "Hold on a sec.",
    "Cancel.",
    "One more time.",
    "Yeah, one question.",
    "Mm, hang on.",
    "Tell me more about it.",
    "Can you stop?",
)
TENTH_VOICES = (
    "piper-dawn",
    "piper-dusk",
    "festival-ked",
    "en-gb-x-gbcwmd+m1",
    "en-029+f5",
    "en-gb-scotland+f1",
)
TENTH_NOISE_SEEDS = (14, 15)
TENTH_ECHO_DB = (-10.75, -12.75, -14.75, -16.75, -19.75, -22.75)


def tenth_held_out_clips() -> list[Clip]:
    """The tenth held-out set: the ninth's shape (:func:`ninth_held_out_clips`), 92 trials."""
    return _named("TENTH")


#: The eleventh held-out set (issue 38, ninth pass), written and committed on 2026-12-01 before
#: anything ran on it, with this pass's rule in place (a decode whose reading in backchannels'
#: words is nearly as likely: ``OverlapSettings.near_gap``), chosen on the ten sets and flite's
#: voices. The tenth's shape (92 trials), nothing in it in another set: backchannels of one word
#: ("Totally.") and in two parts; interruptions of one word with no stop word ("Louder."),
#: beginning with a backchannel ("Okay, next question.") or a hum ("Hmm, not quite."), a stop
#: phrase in a question ("Could you hang on?") and after another word ("Hey, hold on."), a
#: request and a question; piper in two new renditions, Festival's kal (a second diphone voice,
#: Debian's ``festvox-kallpc16k``) and espeak-ng received pronunciation, New York and Caribbean
#: variants no set uses; noises and echo levels no set uses.
ELEVENTH_BACKCHANNELS = (
    "Mhm, sure.",
    "Ah, right.",
    "Oh, great.",
    "Okay, sure.",
    "Totally.",
    "Uh-huh, cool.",
)
ELEVENTH_INTERRUPTIONS = (
    "Hey, hold on.",
    "Louder.",
    "Could you hang on?",
    "Okay, next question.",
    "Hmm, not quite.",
    "Play some music.",
    "Who are you?",
)
ELEVENTH_VOICES = (
    "piper-dew",
    "piper-mist",
    "festival-kal",
    "en-gb-x-rp+m3",
    "en-us-nyc+f3",
    "en-029+f4",
)
ELEVENTH_NOISE_SEEDS = (16, 17)
ELEVENTH_ECHO_DB = (-11.25, -13.25, -15.25, -17.25, -20.25, -23.25)


def eleventh_held_out_clips() -> list[Clip]:
    """The eleventh held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92 trials."""
    return _named("ELEVENTH")


TWELFTH_BACKCHANNELS = (
    "Mhm, yep.",
    "Oh, true.",
    "Yeah, right.",
    "Hmm, I see.",
    "Fine.",
    "Uh-huh, great.",
)
#: Short questions among them: the eleventh set's "Who are you?" was the commoner miss.
TWELFTH_INTERRUPTIONS = (
    "Wait, start over.",
    "Softer.",
    "Who's speaking?",
    "Okay, what else?",
    "Hmm, try again.",
    "Read me the news.",
    "Why not?",
)
TWELFTH_VOICES = (
    "piper-haze",
    "piper-gust",
    "festival-slt-hts",
    "en-us+m6",
    "en-gb-x-gbclan+m4",
    "en-gb-scotland+m7",
)
TWELFTH_NOISE_SEEDS = (18, 19)
TWELFTH_ECHO_DB = (-10.25, -12.25, -14.25, -16.25, -19.25, -21.25)


def twelfth_held_out_clips() -> list[Clip]:
    """The twelfth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92 trials;
    its short questions and Festival's HTS voice (a statistical synthesizer) are new."""
    return _named("TWELFTH")


THIRTEENTH_BACKCHANNELS = (
    "Yup, yup.",
    "Mm, sure.",
    "Oh, yeah.",
    "Right, cool.",
    "Uh-huh, true.",
    "Okay, good.",
)
THIRTEENTH_INTERRUPTIONS = (
    "Wait a minute.",
    "Quieter, please.",
    "Where are we?",
    "Okay, and now?",
    "Mm, skip this.",
    "Give me the forecast.",
    "How so?",
)
THIRTEENTH_VOICES = (
    "piper-ray",
    "piper-glow",
    "en-us+m7",
    "en-gb-x-rp+m5",
    "en-029+m6",
    "en-gb+m1",
)
THIRTEENTH_NOISE_SEEDS = (20, 21)
THIRTEENTH_ECHO_DB = (-11.75, -13.75, -15.75, -18.25, -20.75, -24.75)


def thirteenth_held_out_clips() -> list[Clip]:
    """The thirteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twelfth was looked at."""
    return _named("THIRTEENTH")


#: The fourteenth held-out set, written before anything ran on it, after the thirteenth was
#: looked at (its misses were short questions: "How so?", "Okay, and now?"): short questions
#: again, one that begins with a backchannel word ("Okay, and why?").
FOURTEENTH_BACKCHANNELS = (
    "Mhm, cool.",
    "Yeah, got it.",
    "Oh, exactly.",
    "Right, yep.",
    "Uh-huh, nice.",
    "Okay, true.",
)
FOURTEENTH_INTERRUPTIONS = (
    "Since when?",
    "Okay, and why?",
    "What's next?",
    "Hmm, not that one.",
    "Turn it down, please.",
    "Hold up.",
    "Tell me about Rome.",
)
FOURTEENTH_VOICES = (
    "piper-tide",
    "piper-frost",
    "en-us-nyc+m2",
    "en-gb-x-gbcwmd+f4",
    "en-gb-x-gbclan+m3",
    "en-029+m1",
)
FOURTEENTH_NOISE_SEEDS = (22, 23)
FOURTEENTH_ECHO_DB = (-10.125, -13.875, -17.75, -18.75, -21.75, -24.25)


def fourteenth_held_out_clips() -> list[Clip]:
    """The fourteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the thirteenth was looked at."""
    return _named("FOURTEENTH")


#: The fifteenth held-out set, written after the fourteenth was looked at and before anything
#: ran on it, with the rules for a person going on ("Okay, so what?") and a question's rise.
FIFTEENTH_BACKCHANNELS = (
    "Mm, great.",
    "Yeah, cool.",
    "Oh, got it.",
    "Okay, nice.",
    "Uh-huh, exactly.",
    "Right, true.",
)
FIFTEENTH_INTERRUPTIONS = (
    "Who said that?",
    "Okay, so what?",
    "And then what?",
    "Speak up.",
    "Set a timer.",
    "Hmm, what for?",
    "Play the next song.",
)
FIFTEENTH_VOICES = (
    "piper-brook",
    "piper-flint",
    "en-us+m1",
    "en-gb-x-rp+m2",
    "en-gb-scotland+m3",
    "en-029+m3",
)
FIFTEENTH_NOISE_SEEDS = (24, 25)
FIFTEENTH_ECHO_DB = (-10.625, -12.875, -15.125, -19.5, -22.25, -24.875)


def fifteenth_held_out_clips() -> list[Clip]:
    """The fifteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the fourteenth was looked at."""
    return _named("FIFTEENTH")


#: The sixteenth held-out set, written after the fifteenth was looked at and before anything ran
#: on it, with the decode of a second part after a pause in the voice (``Overlap._after_a_pause``):
#: backchannels in two parts again, and requests that begin with a backchannel's word and a
#: comma ("Okay, the other one."), which that decode must not hear as backchannels.
SIXTEENTH_BACKCHANNELS = (
    "Mhm, nice.",
    "Yeah, true.",
    "Okay, cool.",
    "Right, got it.",
    "Oh, fine.",
    "Mm, exactly.",
)
SIXTEENTH_INTERRUPTIONS = (
    "Who is that?",
    "Okay, the other one.",
    "Yeah, skip that.",
    "Mute it.",
    "Hmm, which one?",
    "Read it again.",
    "Tell me the weather.",
)
SIXTEENTH_VOICES = (
    "piper-vale",
    "piper-ember",
    "en-us+f1",
    "en-gb-x-gbcwmd+m2",
    "en-gb+m3",
    "en-029+f1",
)
SIXTEENTH_NOISE_SEEDS = (26, 27)
SIXTEENTH_ECHO_DB = (-10.375, -12.625, -14.875, -17.375, -20.875, -23.625)


def sixteenth_held_out_clips() -> list[Clip]:
    """The sixteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the fifteenth was looked at."""
    return _named("SIXTEENTH")


#: The seventeenth held-out set, written after the sixteenth was looked at and before anything
#: ran on it, with the length bound waiting for a backchannel's slow second part
#: (``Overlap._parted_so_far``): backchannels in two parts, slow ones among them, and short
#: requests that begin with a nasal ("Mute that.", "Make it shorter.") or with a backchannel's
#: word and a comma, which must still stop the agent.
SEVENTEENTH_BACKCHANNELS = (
    "Mhm, good.",
    "Right, exactly.",
    "Okay, fine.",
    "Uh-huh, wow.",
    "Oh, really?",
    "Ah, true.",
)
SEVENTEENTH_INTERRUPTIONS = (
    "Mute that.",
    "Next one, please.",
    "Okay, go back.",
    "Yeah, slower please.",
    "Hmm, say that again.",
    "Make it shorter.",
    "What did you say?",
)
SEVENTEENTH_VOICES = (
    "piper-cove",
    "piper-peak",
    "en-us+m4",
    "en-gb-x-rp+f3",
    "en-gb-scotland+f2",
    "en-029+m4",
)
SEVENTEENTH_NOISE_SEEDS = (28, 29)
SEVENTEENTH_ECHO_DB = (-10.875, -13.125, -15.375, -17.625, -21.125, -23.875)


def seventeenth_held_out_clips() -> list[Clip]:
    """The seventeenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the sixteenth was looked at."""
    return _named("SEVENTEENTH")


#: The eighteenth held-out set, written after the seventeenth was looked at and before anything
#: ran on it: backchannels in two parts, and requests that begin with a hum, a filler or a
#: backchannel's word and a comma ("Mm, why?", "Okay, start over."), which must stop the agent.
EIGHTEENTH_BACKCHANNELS = (
    "Mhm, I know.",
    "Uh-huh, yes.",
    "Yeah, fine.",
    "Oh, good.",
    "Okay, right.",
    "Mm, true.",
)
EIGHTEENTH_INTERRUPTIONS = (
    "Hang on, please.",
    "Not that one.",
    "Mm, why?",
    "Okay, start over.",
    "Make it louder.",
    "Uh, who said that?",
    "Yeah, what time is it?",
)
EIGHTEENTH_VOICES = (
    "piper-reef",
    "piper-fern",
    "en-us+f5",
    "en-gb+m4",
    "en-gb-x-gbclan+f1",
    "en-029+m5",
)
EIGHTEENTH_NOISE_SEEDS = (30, 31)
EIGHTEENTH_ECHO_DB = (-11.125, -13.375, -15.625, -17.875, -20.625, -24.125)


def eighteenth_held_out_clips() -> list[Clip]:
    """The eighteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the seventeenth was looked at."""
    return _named("EIGHTEENTH")


#: The nineteenth held-out set, written after the eighteenth was looked at and before anything
#: ran on it: backchannels heard in conversation that the backchannels' lexicon may not hold
#: ("Makes sense", "gotcha", "of course"), and requests that begin with a backchannel's word, a
#: hum or a filler ("Right, but how?", "Mm, not now."), which must stop the agent.
NINETEENTH_BACKCHANNELS = (
    "That's right.",
    "Yeah, I know.",
    "Oh, all right.",
    "Mhm, makes sense.",
    "Uh-huh, of course.",
    "Okay, gotcha.",
)
NINETEENTH_INTERRUPTIONS = (
    "Wait, go back.",
    "Hmm, what was that?",
    "Okay, skip ahead.",
    "Mm, not now.",
    "Right, but how?",
    "Stop for now.",
    "Can you pause?",
)
NINETEENTH_VOICES = (
    "piper-moss",
    "piper-sand",
    "en-us+m2",
    "en-gb+f3",
    "en-gb-scotland+m5",
    "en-029+f2",
)
NINETEENTH_NOISE_SEEDS = (32, 33)
NINETEENTH_ECHO_DB = (-11.375, -13.625, -15.875, -18.125, -21.375, -24.375)


def nineteenth_held_out_clips() -> list[Clip]:
    """The nineteenth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the eighteenth was looked at."""
    return _named("NINETEENTH")


#: The twentieth held-out set, written after the nineteenth was looked at (and the
#: backchannels' lexicon grown on it) and before anything ran on it: conversation's
#: acknowledgements and assessments, and requests that begin with one or with a
#: backchannel's word ("Perfect, now the next one.", "Sure, but when?"), which must stop the
#: agent.
TWENTIETH_BACKCHANNELS = (
    "That's true.",
    "Yeah, for sure.",
    "Oh, interesting.",
    "Mhm, sounds good.",
    "Uh-huh, perfect.",
    "Oh my gosh.",
)
TWENTIETH_INTERRUPTIONS = (
    "Perfect, now the next one.",
    "Sure, but when?",
    "Uh, can you repeat?",
    "Hmm, skip that part.",
    "Okay, that's enough.",
    "Mhm, now tell me more.",
    "Sorry, I missed that.",
)
TWENTIETH_VOICES = (
    "piper-pine",
    "piper-clay",
    "en-us-nyc+f2",
    "en-gb-x-gbcwmd+f1",
    "en-gb+m5",
    "en-029+m7",
)
TWENTIETH_NOISE_SEEDS = (34, 35)
TWENTIETH_ECHO_DB = (-11.625, -14.125, -16.125, -18.375, -21.625, -24.625)


def twentieth_held_out_clips() -> list[Clip]:
    """The twentieth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the nineteenth was looked at."""
    return _named("TWENTIETH")


#: The twenty-first held-out set, written after the twentieth was looked at (and the second
#: reader, ``OverlapSettings.second_sure``, chosen on all twenty) and before anything ran on it:
#: assents and acknowledgements a listener says ("Yeah, definitely.", "Mm, fair enough.",
#: "Oh, I get it."), and requests that begin with a backchannel's word or a hum, or hold no
#: stop word ("Hold that thought.", "Mm, I disagree."), which must stop the agent.
TWENTY_FIRST_BACKCHANNELS = (
    "Uh-huh, absolutely.",
    "Oh, I get it.",
    "Mm, fair enough.",
    "Yeah, definitely.",
    "Ah, gotcha.",
    "Right, of course.",
)
TWENTY_FIRST_INTERRUPTIONS = (
    "Hold that thought.",
    "Okay, what's the price?",
    "Mm, I disagree.",
    "Sorry, go slower.",
    "Yeah, but how much?",
    "Can we change topics?",
    "Wait, say the last part.",
)
TWENTY_FIRST_VOICES = (
    "piper-oak",
    "piper-ash",
    "en-us-nyc+m3",
    "en-gb-x-gbclan+m2",
    "en-gb-x-rp+f2",
    "en-029+m8",
)
TWENTY_FIRST_NOISE_SEEDS = (36, 37)
TWENTY_FIRST_ECHO_DB = (-11.875, -14.625, -16.875, -19.125, -22.125, -23.125)


def twenty_first_held_out_clips() -> list[Clip]:
    """The twenty-first held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twentieth was looked at."""
    return _named("TWENTY_FIRST")


#: The twenty-second held-out set, written after the twenty-first was looked at (and a short
#: overlap's stop word was made to be read again by the second reader) and before anything ran
#: on it: assents a listener says ("Sure thing.", "Right, makes sense.", "Okay, perfect."), and
#: requests that begin with a backchannel's word or a hum, or hold no stop word ("Okay, I'm
#: confused.", "Mm, that's too long."), which must stop the agent.
TWENTY_SECOND_BACKCHANNELS = (
    "Sure thing.",
    "Yeah, absolutely.",
    "Ah, nice.",
    "Right, makes sense.",
    "Okay, perfect.",
    "Mhm, true.",
)
TWENTY_SECOND_INTERRUPTIONS = (
    "Okay, I'm confused.",
    "Mm, that's too long.",
    "Sorry, say it again.",
    "Actually, skip it.",
    "Could you summarise?",
    "Yeah, what about Friday?",
    "Right, how much is it?",
)
TWENTY_SECOND_VOICES = (
    "piper-elm",
    "piper-birch",
    "en-gb+m2",
    "en-us-nyc+f4",
    "en-gb-x-gbcwmd+f2",
    "en-gb-scotland+m1",
)
TWENTY_SECOND_NOISE_SEEDS = (38, 39)
TWENTY_SECOND_ECHO_DB = (-12.125, -12.375, -16.625, -18.875, -20.375, -23.75)


def twenty_second_held_out_clips() -> list[Clip]:
    """The twenty-second held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-first was looked at."""
    return _named("TWENTY_SECOND")


#: The twenty-third held-out set, written after the twenty-second was looked at (and the common
#: list of backchannels written down, and two readers that agree made to interrupt) and before
#: anything ran on it: acknowledgements and continuers a listener says ("Okay, got it.",
#: "Uh-huh, go on.", "Mm, interesting."), and requests that begin with a backchannel's word or a
#: hum, or hold no stop word ("Hmm, that's not it.", "Sorry, I don't follow."), which must stop
#: the agent.
TWENTY_THIRD_BACKCHANNELS = (
    "Okay, got it.",
    "Yeah, that's right.",
    "Mm, interesting.",
    "Uh-huh, go on.",
    "Right, yeah.",
    "Oh, lovely.",
)
TWENTY_THIRD_INTERRUPTIONS = (
    "Sorry, I don't follow.",
    "Hmm, that's not it.",
    "Okay, how about Monday?",
    "Uh, one more thing.",
    "Right, go to the next step.",
    "Yeah, which one is cheaper?",
    "Turn that off.",
)
TWENTY_THIRD_VOICES = (
    "piper-maple",
    "piper-willow",
    "en-us-nyc+m5",
    "en-gb-x-rp+m4",
    "en-gb-scotland+f3",
    "en-us+m8",
)
TWENTY_THIRD_NOISE_SEEDS = (40, 41)
TWENTY_THIRD_ECHO_DB = (-14.375, -16.375, -18.625, -19.875, -22.375, -23.375)


def twenty_third_held_out_clips() -> list[Clip]:
    """The twenty-third held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-second was looked at."""
    return _named("TWENTY_THIRD")


#: The twenty-fourth held-out set, written after the twenty-third was looked at (and continuers
#: made backchannels, and a stop word after going on read again) and before anything ran on it:
#: assents and continuers a listener says ("Mhm, go ahead.", "Yes, of course.", "Ah, that's
#: good."), and requests that begin with a backchannel's word or a hum, or hold no stop word
#: ("Hmm, I don't think so.", "Yeah, but is it open now?"), which must stop the agent.
TWENTY_FOURTH_BACKCHANNELS = (
    "Yes, of course.",
    "Ah, that's good.",
    "Mhm, go ahead.",
    "Oh, I understand.",
    "Yeah, makes sense.",
    "Right, sounds good.",
)
TWENTY_FOURTH_INTERRUPTIONS = (
    "Sorry, can you stop?",
    "Hmm, I don't think so.",
    "Okay, what about tomorrow?",
    "Wait, which one?",
    "Yeah, but is it open now?",
    "Uh, go back to the start.",
    "Switch it off.",
)
TWENTY_FOURTH_VOICES = (
    "piper-cedar",
    "piper-aspen",
    "en-gb+f4",
    "en-us-nyc+m1",
    "en-gb-x-rp+m6",
    "en-gb-scotland+m4",
)
TWENTY_FOURTH_NOISE_SEEDS = (42, 43)
TWENTY_FOURTH_ECHO_DB = (-17.125, -19.375, -19.625, -20.125, -21.875, -22.625)


def twenty_fourth_held_out_clips() -> list[Clip]:
    """The twenty-fourth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-third was looked at."""
    return _named("TWENTY_FOURTH")


#: The twenty-fifth held-out set, written after the twenty-fourth was looked at (and the length
#: bound made to wait for a decode on its way) and before anything ran on it: assents and
#: assessments a listener says ("Yeah, I guess so.", "Mm, good point.", "Right, I suppose."), and
#: requests that begin with a backchannel's word or a hum, or hold no stop word ("Mm, what's the
#: weather like?", "Right, but what's the cost?"), which must stop the agent.
TWENTY_FIFTH_BACKCHANNELS = (
    "Oh, that's nice.",
    "Yeah, I guess so.",
    "Uh-huh, sounds great.",
    "Mm, good point.",
    "Okay, I hear you.",
    "Right, I suppose.",
)
TWENTY_FIFTH_INTERRUPTIONS = (
    "Oh, can you say it slower?",
    "Mm, what's the weather like?",
    "Okay, skip to the end.",
    "Yeah, how long does it take?",
    "Right, but what's the cost?",
    "Hang on, that's not it.",
    "Volume down, please.",
)
TWENTY_FIFTH_VOICES = (
    "piper-hazel",
    "piper-rowan",
    "en-gb+m7",
    "en-us-nyc+f5",
    "en-gb-x-rp+m7",
    "en-gb-scotland+f5",
)
TWENTY_FIFTH_NOISE_SEEDS = (44, 45)
TWENTY_FIFTH_ECHO_DB = (-10.0625, -12.9375, -15.5625, -18.0625, -22.9375, -24.9375)


def twenty_fifth_held_out_clips() -> list[Clip]:
    """The twenty-fifth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-fourth was looked at."""
    return _named("TWENTY_FIFTH")


#: The twenty-sixth held-out set, written after the twenty-fifth was looked at and before
#: anything ran on it: assents, assessments and acknowledgements a listener says ("Yeah, I think
#: so.", "Right, fair enough.", "Uh-huh, I follow."), and requests that begin with a backchannel's
#: word or a hum, or hold no stop word ("Uh-huh, but where is it?", "Mm, give me the short
#: version.", "Sorry, too fast."), which must stop the agent.
TWENTY_SIXTH_BACKCHANNELS = (
    "Yeah, I think so.",
    "Oh, that's interesting.",
    "Okay, I understand.",
    "Uh-huh, I follow.",
    "Right, fair enough.",
    "Mhm, that's true.",
)
TWENTY_SIXTH_INTERRUPTIONS = (
    "Yeah, can you go faster?",
    "Oh, what's the date today?",
    "Right, can you spell that?",
    "Uh-huh, but where is it?",
    "Mm, give me the short version.",
    "Sorry, too fast.",
    "Start again, please.",
)
TWENTY_SIXTH_VOICES = (
    "piper-linden",
    "piper-yew",
    # Not "en-gb+m6": espeak-ng ignores a variant after "en-gb" (every "en-gb+" voice of the
    # sets before is its plain en-gb); after "en" it does not.
    "en+m6",
    "en-us-nyc+m7",
    "en-gb-x-rp+f5",
    "en-gb-scotland+m8",
)
TWENTY_SIXTH_NOISE_SEEDS = (46, 47)
TWENTY_SIXTH_ECHO_DB = (-11.3125, -13.6875, -16.4375, -19.8125, -21.1875, -23.5625)


def twenty_sixth_held_out_clips() -> list[Clip]:
    """The twenty-sixth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-fifth was looked at."""
    return _named("TWENTY_SIXTH")


#: The twenty-seventh held-out set, written after the twenty-sixth was looked at and before
#: anything ran on it: assents, assessments and acknowledgements a listener says ("Yeah, that's
#: fair.", "Oh, I didn't know that.", "Right, no problem."), and requests that begin with a
#: backchannel's word or a hum, or hold no stop word ("Okay, but what's the catch?", "Give me a
#: minute."), which must stop the agent.
TWENTY_SEVENTH_BACKCHANNELS = (
    "Yeah, that's fair.",
    "Oh, I didn't know that.",
    "Mm, I can see that.",
    "Okay, that works.",
    "Uh-huh, I remember.",
    "Right, no problem.",
)
TWENTY_SEVENTH_INTERRUPTIONS = (
    "Yeah, who wrote it?",
    "Oh, is it far from here?",
    "Okay, but what's the catch?",
    "Mm, can you make it simpler?",
    "Right, what does it cost in euros?",
    "Uh, is that today?",
    "Give me a minute.",
)
TWENTY_SEVENTH_VOICES = (
    "piper-spruce",
    "piper-alder",
    "en+f5",
    "en-us-nyc+m8",
    "en-gb-x-rp+m8",
    "en-gb-scotland+m6",
)
TWENTY_SEVENTH_NOISE_SEEDS = (48, 49)
TWENTY_SEVENTH_ECHO_DB = (-10.8125, -14.1875, -16.8125, -18.4375, -20.6875, -24.3125)


def twenty_seventh_held_out_clips() -> list[Clip]:
    """The twenty-seventh held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-sixth was looked at."""
    return _named("TWENTY_SEVENTH")


#: The twenty-eighth held-out set, written after the twenty-seventh was looked at (and a
#: listener's comment made a backchannel by its form) and before anything ran on it: comments
#: and assessments a listener says ("Okay, I like that.", "Uh-huh, it does.", "Right, that's a
#: shame."), and requests, some of them a statement ("Right, I'm looking for a pharmacy.",
#: "Okay, I'm not sure about that."), which must stop the agent.
TWENTY_EIGHTH_BACKCHANNELS = (
    "Yeah, that sounds nice.",
    "Oh, I see it now.",
    "Mm, that's a good idea.",
    "Okay, I like that.",
    "Uh-huh, it does.",
    "Right, that's a shame.",
)
TWENTY_EIGHTH_INTERRUPTIONS = (
    "Okay, I'm not sure about that.",
    "Yeah, I want the weather instead.",
    "Oh, that's the wrong city.",
    "Mm, tell me the score.",
    "Right, I'm looking for a pharmacy.",
    "Uh, how far is it?",
    "Let's talk about something else.",
)
TWENTY_EIGHTH_VOICES = (
    "piper-juniper",
    "piper-poplar",
    "en+m7",
    "en-us-nyc+m6",
    "en-gb-x-rp+m1",
    "en-gb-x-gbclan+f3",
)
TWENTY_EIGHTH_NOISE_SEEDS = (50, 51)
TWENTY_EIGHTH_ECHO_DB = (-11.6875, -13.3125, -15.8125, -17.4375, -22.3125, -24.6875)


def twenty_eighth_held_out_clips() -> list[Clip]:
    """The twenty-eighth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-seventh was looked at."""
    return _named("TWENTY_EIGHTH")


#: The twenty-ninth held-out set, written after a listener's comment was made a backchannel by
#: its form and its words (so by someone who knew that rule: the twenty-eighth was written
#: before its words were) and before anything ran on it: comments a listener says, in words the
#: rule may not hold ("Uh-huh, I know the feeling.", "Right, that explains it."), and requests,
#: some of them a statement ("Okay, I need a taxi.", "Mm, I think it's closed today."), which
#: must stop the agent.
TWENTY_NINTH_BACKCHANNELS = (
    "Yeah, that's pretty cool.",
    "Oh, that's so funny.",
    "Mm, I totally agree.",
    "Okay, that's good to hear.",
    "Uh-huh, I know the feeling.",
    "Right, that explains it.",
)
TWENTY_NINTH_INTERRUPTIONS = (
    "Okay, I need a taxi.",
    "Yeah, that's not my question.",
    "Mm, I think it's closed today.",
    "Oh, can I book it?",
    "Right, where do I park?",
    "Uh, say the address again.",
    "Forget it.",
)
TWENTY_NINTH_VOICES = (
    "piper-larch",
    "piper-holly",
    "en+m8",
    "en-gb-x-gbcwmd+m5",
    "en-gb-x-gbclan+m6",
    "en+f3",
)
TWENTY_NINTH_NOISE_SEEDS = (52, 53)
TWENTY_NINTH_ECHO_DB = (-10.4375, -12.5625, -15.0625, -18.8125, -21.5625, -23.9375)


def twenty_ninth_held_out_clips() -> list[Clip]:
    """The twenty-ninth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written after the twenty-eighth."""
    return _named("TWENTY_NINTH")


#: The thirtieth and thirty-first held-out sets, written (2026-12-05) by a helper told what a
#: backchannel and a meant interruption are, shown the phrases every earlier set said (to say
#: none of them again) and kept from the rules (it read no code and no docs), before anything
#: ran on them: listeners' comments and idioms ("Uh-huh, better safe than sorry.", "Right,
#: rather them than me."), and requests that are a correction or a statement ("Yeah, you've got
#: the wrong address.", "Uh, I'm allergic to nuts.").
THIRTIETH_BACKCHANNELS = (
    "Yeah, that's always the way.",
    "Oh, that sounds gorgeous.",
    "Mm, can't argue with that.",
    "Okay, that's handy to know.",
    "Uh-huh, better safe than sorry.",
    "Right, that's a relief.",
)
THIRTIETH_INTERRUPTIONS = (
    "Okay, cut to the chase.",
    "Yeah, you've got the wrong address.",
    "Mm, is there a vegetarian option?",
    "Oh, I wanted the walking route.",
    "Right, which platform was that?",
    "Uh, I don't have an oven.",
    "Just the highlights, please.",
)
THIRTIETH_VOICES = (
    "piper-laurel",
    "piper-myrtle",
    "en+m4",
    "en-gb-x-gbcwmd+m4",
    "en-gb-x-gbclan+f4",
    "en+f2",
)
THIRTIETH_NOISE_SEEDS = (54, 55)
THIRTIETH_ECHO_DB = (-11.40625, -13.59375, -16.1875, -19.09375, -21.21875, -24.53125)


def thirtieth_held_out_clips() -> list[Clip]:
    """The thirtieth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTIETH")


#: The thirty-first held-out set, written with the thirtieth (see there) and kept unplayed
#: until a change made after the thirtieth was looked at needed a set nobody had seen.
THIRTY_FIRST_BACKCHANNELS = (
    "Yeah, I'd have guessed that.",
    "Oh, that's music to my ears.",
    "Mm, sounds about right.",
    "Okay, so far so good.",
    "Uh-huh, that rings a bell.",
    "Right, rather them than me.",
)
THIRTY_FIRST_INTERRUPTIONS = (
    "Okay, I asked about Saturday.",
    "Yeah, I'd like it in Celsius.",
    "Mm, does that include parking?",
    "Oh, back up a step.",
    "Right, what's the nearest station?",
    "Uh, I'm allergic to nuts.",
    "Way too much detail.",
)
THIRTY_FIRST_VOICES = (
    "piper-sorrel",
    "piper-acacia",
    "en+m2",
    "en-gb-x-gbclan+m8",
    "en-gb-x-gbcwmd+f5",
    "en+f1",
)
THIRTY_FIRST_NOISE_SEEDS = (56, 57)
THIRTY_FIRST_ECHO_DB = (-10.90625, -13.09375, -15.40625, -17.6875, -22.09375, -23.3125)


def thirty_first_held_out_clips() -> list[Clip]:
    """The thirty-first held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written with the thirtieth."""
    return _named("THIRTY_FIRST")


#: The thirty-second to thirty-fifth held-out sets, written (2026-12-05) the way the thirtieth
#: was (see there), by two helpers kept from the rules. The thirty-second and thirty-third were
#: read by the rules' writer before the rules of the twenty-fourth pass were changed, so they are
#: held out from the probe's fitting but not from the writer's eyes; the thirty-fourth and
#: thirty-fifth were written into this file by a script, unread by anyone who wrote a rule, and
#: kept unplayed until that change had landed. The thirty-fourth is half read: a failing test
#: (two helpers had written the same phrase) printed six of its phrases, and its two repeats were
#: replaced by a helper; the thirty-fifth nobody has read.
THIRTY_SECOND_BACKCHANNELS = (
    "Yeah, I've been there before.",
    "Oh, that's a nice touch.",
    "Mm, that sounds really tasty.",
    "Okay, easy enough so far.",
    "Uh-huh, sounds like a plan.",
    "Right, no surprises there.",
)
THIRTY_SECOND_INTERRUPTIONS = (
    "Okay, can you text me that instead?",
    "Yeah, I don't have a car.",
    "Mm, what was the second step again?",
    "Oh, no, I said Thursday, not Tuesday.",
    "Right, you lost me at the roundabout.",
    "Uh, I'm actually gluten free.",
    "Just give me the first three, please.",
)
THIRTY_SECOND_VOICES = (
    "piper-briar",
    "piper-heather",
    "en+m1",
    "en-gb-x-gbclan+m5",
    "en-gb-x-gbcwmd+m3",
    "en-us+Annie",
)
THIRTY_SECOND_NOISE_SEEDS = (58, 59)
THIRTY_SECOND_ECHO_DB = (-10.65625, -12.84375, -14.53125, -17.96875, -20.40625, -24.21875)


def thirty_second_held_out_clips() -> list[Clip]:
    """The thirty-second held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_SECOND")


#: The thirty-third held-out set, written with the thirty-second (see there).
THIRTY_THIRD_BACKCHANNELS = (
    "Yeah, that's about what I expected.",
    "Oh, I love that place.",
    "Mm, that'll hit the spot.",
    "Okay, I can manage that.",
    "Uh-huh, every little bit helps.",
    "Right, the usual then.",
)
THIRTY_THIRD_INTERRUPTIONS = (
    "Okay, wait, how many eggs was that?",
    "Yeah, that train's been cancelled.",
    "Mm, I only have twenty minutes.",
    "Oh, stop, I need to grab a pen.",
    "Right, that's way too expensive for me.",
    "Uh, you're going way too fast.",
    "Which exit do I take after the bridge?",
)
THIRTY_THIRD_VOICES = (
    "piper-thorn",
    "piper-bramble",
    "en+f4",
    "en-gb-x-gbclan+f5",
    "en-gb-x-gbcwmd+m6",
    "en-gb-scotland+Andy",
)
THIRTY_THIRD_NOISE_SEEDS = (60, 61)
THIRTY_THIRD_ECHO_DB = (-11.15625, -13.46875, -15.71875, -18.34375, -20.84375, -23.65625)


def thirty_third_held_out_clips() -> list[Clip]:
    """The thirty-third held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_THIRD")


#: The thirty-fourth held-out set: half read by the rules' writer (see the thirty-second).
THIRTY_FOURTH_BACKCHANNELS = (
    "Yeah, that's what I figured.",
    "Oh, that's not bad at all.",
    "Mm, sounds delicious.",
    "Okay, easy enough.",
    "Uh-huh, with you so far.",
    "Right, old habits die hard.",
)
THIRTY_FOURTH_INTERRUPTIONS = (
    "Okay, my phone's about to die.",
    "Yeah, I don't eat pork.",
    "Mm, hold on, I need a pen.",
    "Oh, wait, I meant next week.",
    "Right, just tell me the fastest one.",
    "Uh, we're leaving from the airport, not downtown.",
    "Can you go back to the second step?",
)
THIRTY_FOURTH_VOICES = (
    "piper-sage",
    "piper-fennel",
    "en+m3",
    "en-gb-x-gbclan+m7",
    "en-gb-x-gbcwmd+m7",
    "en-029+linda",
)
THIRTY_FOURTH_NOISE_SEEDS = (62, 63)
THIRTY_FOURTH_ECHO_DB = (-10.21875, -12.15625, -14.96875, -17.28125, -19.78125, -24.84375)


def thirty_fourth_held_out_clips() -> list[Clip]:
    """The thirty-fourth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_FOURTH")


#: The thirty-fifth held-out set, written with the thirty-fourth (see the thirty-second).
THIRTY_FIFTH_BACKCHANNELS = (
    "Yeah, no surprise there.",
    "Oh, good to know.",
    "Mm, delicious.",
    "Okay, I can work with that.",
    "Uh-huh, fingers crossed.",
    "Right, that's about what I was expecting.",
)
THIRTY_FIFTH_INTERRUPTIONS = (
    "Okay, I'm cycling, not driving.",
    "Yeah, sorry, that place closed down.",
    "Mm, is that gluten free?",
    "Oh, stop, that's the wrong film.",
    "Right, can you just read the times?",
    "Uh, I only need Sunday's hours.",
    "That's way more than I want to spend.",
)
THIRTY_FIFTH_VOICES = (
    "piper-clover",
    "piper-ivy",
    "en+m5",
    "en-gb-x-gbclan+m1",
    "en-gb-x-gbcwmd+m8",
    "en-us-nyc+steph",
)
THIRTY_FIFTH_NOISE_SEEDS = (64, 65)
THIRTY_FIFTH_ECHO_DB = (-11.84375, -13.21875, -16.46875, -18.65625, -21.90625, -23.03125)


def thirty_fifth_held_out_clips() -> list[Clip]:
    """The thirty-fifth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_FIFTH")


#: The thirty-sixth to thirty-ninth held-out sets, written (2026-12-05) by a helper told only
#: what a listener's feedback and a meant interruption are and kept from the code, the docs and
#: the sets' figures (it was given the phrases before so as not to repeat one), and written into
#: this file by a script: nobody who wrote a rule has read them. They were kept out of the
#: feedback reader's fitting and unplayed until the twenty-fifth pass's change had landed.
THIRTY_SIXTH_BACKCHANNELS = (
    "Yeah, that's a decent price.",
    "Oh, that's earlier than usual.",
    'Mm, I like the sound of that.',
    'Okay, left at the lights.',
    'Uh-huh, eggs and milk.',
    "Right, so it's a prequel.",
)
THIRTY_SIXTH_INTERRUPTIONS = (
    "Okay, what's the cheapest return fare?",
    "Yeah, hold on, the kettle's boiling.",
    'Mm, can you leave out the cardio?',
    'Oh, we need it for a Tuesday.',
    'Right, who was king back then?',
    "Uh, that's the wrong surname on the booking.",
    "Skip the onions, I've got those already.",
)
THIRTY_SIXTH_VOICES = (
    'piper-dill',
    'piper-basil',
    'en-us+Alex',
    'en+Michael',
    'en-gb-x-rp+belinda',
    'en-029+shelby',
)
THIRTY_SIXTH_NOISE_SEEDS = (66, 67)
THIRTY_SIXTH_ECHO_DB = (-10.03125, -12.09375, -14.21875, -17.40625, -20.4375, -23.53125)


def thirty_sixth_held_out_clips() -> list[Clip]:
    """The thirty-sixth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_SIXTH")

#: The thirty-seventh held-out set, written with the thirty-sixth (see there).
THIRTY_SEVENTH_BACKCHANNELS = (
    "Yeah, I've heard good things.",
    'Oh, only three stops!',
    'Mm, makes the choice easier.',
    'Okay, two cups of rice.',
    'Uh-huh, the blue line.',
    'Right, so the butler did it.',
)
THIRTY_SEVENTH_INTERRUPTIONS = (
    'Okay, but is the museum free?',
    "Yeah, I don't need the whole history.",
    'Mm, which of those has better battery life?',
    "Oh, that flight's been moved to Monday.",
    'Right, can you just list the vegetables?',
    "Uh, my bus pass doesn't work on trams.",
    "Please stop, I've heard enough about the war.",
)
THIRTY_SEVENTH_VOICES = (
    'piper-tansy',
    'piper-yarrow',
    'en+Mike',
    'en-us-nyc+travis',
    'en-gb-scotland+edward',
    'en-us+Andrea',
)
THIRTY_SEVENTH_NOISE_SEEDS = (68, 69)
THIRTY_SEVENTH_ECHO_DB = (-11.09375, -12.90625, -14.4375, -17.03125, -21.03125, -23.46875)


def thirty_seventh_held_out_clips() -> list[Clip]:
    """The thirty-seventh held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_SEVENTH")

#: The thirty-eighth held-out set, written with the thirty-sixth (see there).
THIRTY_EIGHTH_BACKCHANNELS = (
    'Yeah, Sundays are always quiet.',
    'Oh, older than I thought.',
    'Mm, nice and sunny then.',
    'Okay, three sets of ten.',
    'Uh-huh, platform four then.',
    "Right, that's a clever twist.",
)
THIRTY_EIGHTH_INTERRUPTIONS = (
    "Okay, actually I'm going by train.",
    'Yeah, could you do that in kilos?',
    'Mm, sorry, what year was that?',
    "Oh, I've already got milk, take it off.",
    'Right, is there a late opening on Thursdays?',
    'Uh, the booking should be for three nights.',
    'Wait, my doctor told me no lunges.',
)
THIRTY_EIGHTH_VOICES = (
    'piper-chervil',
    'piper-lovage',
    'en+benjamin',
    'en-us+david',
    'en-gb-x-rp+john',
    'en-gb-x-gbclan+Alicia',
)
THIRTY_EIGHTH_NOISE_SEEDS = (70, 71)
THIRTY_EIGHTH_ECHO_DB = (-11.1875, -12.59375, -15.6875, -17.21875, -21.59375, -23.8125)


def thirty_eighth_held_out_clips() -> list[Clip]:
    """The thirty-eighth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_EIGHTH")

#: The thirty-ninth held-out set, written with the thirty-sixth (see there).
THIRTY_NINTH_BACKCHANNELS = (
    'Yeah, the reviews said that too.',
    'Oh, what a lovely ending.',
    'Mm, cinnamon, good call.',
    'Okay, past the petrol station.',
    'Uh-huh, nine till five.',
    'Right, typical for November.',
)
THIRTY_NINTH_INTERRUPTIONS = (
    'Okay, can we skip the warm-up?',
    "Yeah, that shop's been shut for months.",
    'Mm, can you read the last bit slower?',
    "Oh, no, I asked for the nine o'clock show.",
    'Right, how many miles is that in total?',
    "Uh, that's not the book I meant.",
    'Sorry, is that with or without tax?',
)
THIRTY_NINTH_VOICES = (
    'piper-borage',
    'piper-caraway',
    'en+paul',
    'en-us+robert',
    'en-gb-x-gbcwmd+victor',
    'en-us-nyc+Lee',
)
THIRTY_NINTH_NOISE_SEEDS = (72, 73)
THIRTY_NINTH_ECHO_DB = (-11.53125, -12.03125, -16.15625, -18.15625, -21.0625, -24.59375)


def thirty_ninth_held_out_clips() -> list[Clip]:
    """The thirty-ninth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, written by someone who did not know the rules."""
    return _named("THIRTY_NINTH")


#: The fortieth to forty-second held-out sets (issue 38, twenty-seventh pass), written on
#: 2026-12-05 by a helper kept from the rules and the code, as the sets before them, but each
#: phrase with the agent's reply it is said over (``{name}_REPLIES``: the sentence the person
#: has just heard, and the rest the agent talks on with; :attr:`Clip.reply`): what a listener
#: says back depends on what they heard, and over the lighthouse story (:data:`LONG_TEXT`)
#: "Okay, past the petrol station." is said to nothing. Written after the read-back rule
#: (:func:`gateway.proxy.overlap.read_back`) was, unplayed until it had landed.
FORTIETH_BACKCHANNELS = (
    'Yeah, nine, twenty minutes, fine.',
    "Oh, that's earlier than I thought.",
    'Mm, sounds like a proper workout.',
    'Okay, two tablespoons of miso.',
    'Uh-huh, I remember that one.',
    'Right, so no parking there.',
)
FORTIETH_INTERRUPTIONS = (
    'Okay, but can we make it vegetarian?',
    "Yeah, no, it's the Thursday, not Tuesday.",
    'Mm, actually, could you check Saturday instead?',
    'Oh, wait, how long is the layover?',
    'Right, hang on, I said six people.',
    'Uh, sorry, can you read the address again?',
    "Take the eggs off, I've got loads.",
)
FORTIETH_REPLIES = {
    'Yeah, nine, twenty minutes, fine.': (
        "Your train to Leeds leaves from platform 9 at 4:42pm, so you've got about twenty minutes.",
        "It stops at Wakefield Westgate on the way and arrives in Leeds just after six. There's a trolley service on board if you want a snack.",
    ),
    "Oh, that's earlier than I thought.": (
        'Sunset in Edinburgh tonight is at 3:41pm, which is about as early as it gets all year.',
        'From next week the evenings start drawing out again, gaining roughly two minutes a day by mid-January. Sunrise tomorrow is at 8:44am.',
    ),
    'Mm, sounds like a proper workout.': (
        "For today's leg session, start with four sets of ten goblet squats using a moderate kettlebell.",
        'Then move on to walking lunges, three sets of twelve per leg, and finish with a two-minute wall sit. Rest about ninety seconds between sets.',
    ),
    'Okay, two tablespoons of miso.': (
        'For the glaze, whisk together 2 tablespoons of white miso with a tablespoon of honey.',
        'Add a splash of rice vinegar and a teaspoon of grated ginger, then brush it over the aubergine halves. Roast them at 200 degrees for twenty-five minutes.',
    ),
    'Uh-huh, I remember that one.': (
        "The film you're thinking of is Groundhog Day, where Bill Murray relives the same day over and over.",
        'It came out in 1993 and was mostly shot in Woodstock, Illinois rather than Punxsutawney. Harold Ramis directed it and co-wrote the screenplay.',
    ),
    'Right, so no parking there.': (
        "The museum itself doesn't have a car park, but there's a multi-storey on Cable Street.",
        "It's about a five-minute walk away and charges £2.80 an hour, capped at £14 for the day. Entry to the museum is free.",
    ),
    'Okay, but can we make it vegetarian?': (
        "Tonight's dinner plan is a chicken and chorizo traybake, which takes about forty minutes.",
        "You'll need two chicken thighs per person, one chorizo ring, peppers and red onion. Everything goes in one tin at 200 degrees, stirring halfway through.",
    ),
    "Yeah, no, it's the Thursday, not Tuesday.": (
        "I've booked your dentist appointment for Tuesday the 14th at 10:30am with Dr Patel.",
        "You'll get a reminder text the day before, and the surgery asks you to arrive five minutes early. Cancellations need twenty-four hours' notice.",
    ),
    'Mm, actually, could you check Saturday instead?': (
        'The forecast for Sunday in the Lake District is light rain in the morning, clearing by midday.',
        'Highs around 11 degrees with a breeze from the west, so the afternoon should be fine for walking. Take a waterproof just in case.',
    ),
    'Oh, wait, how long is the layover?': (
        'Your cheapest option to Lisbon is with TAP, connecting through Porto and landing at 9:15pm.',
        'It comes to £186 return including a cabin bag. The direct flight with easyJet is £240 but lands two hours earlier.',
    ),
    'Right, hang on, I said six people.': (
        'I found a table for four at Dishoom Kensington at 7:30pm on Friday.',
        "They hold reservations for fifteen minutes, and I've added a note about the birthday. Would you like me to confirm it now?",
    ),
    'Uh, sorry, can you read the address again?': (
        'The party is at 42 Hollybank Road, the house with the blue door near the end.',
        "Parking's tight on the street, so the host suggests using the Tesco car park round the corner. It starts at eight.",
    ),
    "Take the eggs off, I've got loads.": (
        'Your shopping list so far has eggs, semi-skimmed milk, a sourdough loaf and two avocados.',
        "I've also added the cherry tomatoes you mentioned yesterday and a bag of rocket. Shall I add the coffee beans too?",
    ),
}
FORTIETH_VOICES = (
    'piper-chicory',
    'piper-chive',
    'en-us+quincy',
    'en-gb-x-rp+norbert',
    'en+iven',
    'en-029+adam',
)
FORTIETH_NOISE_SEEDS = (74, 75)
FORTIETH_ECHO_DB = (-11.9375, -13.4375, -15.96875, -18.6875, -22.4375, -23.40625)


def fortieth_held_out_clips() -> list[Clip]:
    """The fortieth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTIETH")

FORTY_FIRST_BACKCHANNELS = (
    'Yeah, I love that song.',
    'Oh, wow, seven hundred years.',
    'Mm, that sounds lovely.',
    'Okay, left at the bakery.',
    "Uh-huh, that's why it's so salty.",
    'Right, three days, not bad.',
)
FORTY_FIRST_INTERRUPTIONS = (
    "Okay, stop, what's a substitute for buttermilk?",
    "Yeah, but isn't the Elizabeth line quicker?",
    'Mm, no, make it twenty minutes.',
    "Oh, wait, my sister can't have gluten.",
    'Right, but is it open on Sundays?',
    'Uh, can you change that to Celsius?',
    'Hang on, is that with or without the deposit?',
)
FORTY_FIRST_REPLIES = {
    'Yeah, I love that song.': (
        'The track playing in that advert is Tainted Love by Soft Cell, from 1981.',
        'It was actually a cover of a Gloria Jones song from 1964. The Soft Cell version topped the UK charts for two weeks.',
    ),
    'Oh, wow, seven hundred years.': (
        "Salisbury Cathedral's spire was finished around 1320, so it's been standing for roughly 700 years.",
        "At 123 metres it's the tallest church spire in Britain. The cathedral also holds one of the four surviving copies of Magna Carta.",
    ),
    'Mm, that sounds lovely.': (
        'The cottage you asked about sits right on the harbour in Port Isaac, with views across the bay.',
        'It sleeps four, has a wood burner and a small garden, and costs £145 a night in October. Dogs are welcome for a small fee.',
    ),
    'Okay, left at the bakery.': (
        'After the roundabout, take the second left just past the bakery onto Mill Lane.',
        "Follow it for about half a mile until you see the church, then the school entrance is on your right. There's a drop-off bay outside.",
    ),
    "Uh-huh, that's why it's so salty.": (
        "The reason halloumi doesn't melt is that it's heated during making and then stored in brine.",
        "That process tightens the proteins, so it browns instead of going runny. It's traditionally made from a mix of goat's and sheep's milk.",
    ),
    'Right, three days, not bad.': (
        'A three-day Paris Museum Pass costs 77 euros and covers the Louvre, Orsay and over fifty other sites.',
        'You can skip the ticket queues at most places, though the Louvre still needs a timed reservation. The pass starts from your first visit.',
    ),
    "Okay, stop, what's a substitute for buttermilk?": (
        'For the pancakes, mix 250ml of buttermilk with one egg and a tablespoon of melted butter.',
        "Fold that into the flour, sugar and baking powder, but don't overmix, a few lumps are fine. Let the batter rest for ten minutes.",
    ),
    "Yeah, but isn't the Elizabeth line quicker?": (
        "To get to Heathrow, take the Piccadilly line westbound from Green Park, it's about fifty minutes.",
        "Trains run every few minutes and you'll want the branch to Terminals 2 and 3. A single with contactless is £5.60 off-peak.",
    ),
    'Mm, no, make it twenty minutes.': (
        "I've set a timer for 12 minutes for the rice, and I'll let you know when it's done.",
        'In the meantime you could start chopping the spring onions. Remember to leave the lid on so the steam can finish cooking it.',
    ),
    "Oh, wait, my sister can't have gluten.": (
        'A good dessert for tonight would be sticky toffee pudding, which you can make ahead this afternoon.',
        'It needs dates, brown sugar, self-raising flour and butter, and bakes in about thirty-five minutes. Serve it warm with custard or vanilla ice cream.',
    ),
    'Right, but is it open on Sundays?': (
        'The nearest pharmacy is Boots on the High Street, about six minutes away on foot.',
        "Head straight down Church Road and turn left at the traffic lights. It's opposite the post office, next to the bank.",
    ),
    'Uh, can you change that to Celsius?': (
        'Tomorrow in New York will be sunny with a high of 68 degrees Fahrenheit and light winds.',
        "It'll cool down to around 54 overnight, and there's no rain expected until Thursday. Great weather for walking around Central Park.",
    ),
    'Hang on, is that with or without the deposit?': (
        'Renting the van for the weekend will cost £129, picking up Friday at 5pm.',
        "Insurance is included, and you'll need to return it with a full tank by Monday at 9am. Mileage is unlimited within the UK.",
    ),
}
FORTY_FIRST_VOICES = (
    'piper-anise',
    'piper-cumin',
    'en-us-nyc+caleb',
    'en-gb-scotland+rob',
    'en+gustave',
    'en-us+anika',
)
FORTY_FIRST_NOISE_SEEDS = (76, 77)
FORTY_FIRST_ECHO_DB = (-11.65625, -12.78125, -16.65625, -17.09375, -20.28125, -22.8125)


def forty_first_held_out_clips() -> list[Clip]:
    """The forty-first held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_FIRST")


FORTY_SECOND_BACKCHANNELS = (
    'Yeah, my mum used to do that.',
    'Oh, so it was a real bear.',
    'Mm, I could do with that.',
    'Okay, between two and four.',
    'Uh-huh, poor little fox.',
    'Right, the one with the red label.',
)
FORTY_SECOND_INTERRUPTIONS = (
    "Okay, actually, can you book tomorrow morning's instead?",
    'Yeah, can you skip this one?',
    "Mm, no, that's her old address.",
    'Oh, can you give me that in miles?',
    "Right, but we'll have a toddler with us.",
    'Uh, no, I meant Dave from work.',
    'Is it still running after midnight?',
)
FORTY_SECOND_REPLIES = {
    'Yeah, my mum used to do that.': (
        "When you're proving the dough, put it in the oven with just the light switched on.",
        "The gentle warmth helps it rise in about an hour instead of two. Cover the bowl with a damp tea towel so it doesn't dry out.",
    ),
    'Oh, so it was a real bear.': (
        'Winnie-the-Pooh was named after a real black bear called Winnipeg, who lived at London Zoo.',
        'Christopher Robin Milne loved visiting her, and his father borrowed the name for the stories. She had arrived in England in 1914.',
    ),
    'Mm, I could do with that.': (
        "Next up in your stretching routine is child's pose, holding it for about forty-five seconds.",
        'Sit back onto your heels, reach your arms forward and let your forehead rest on the mat. Breathe slowly and let your lower back relax.',
    ),
    'Okay, between two and four.': (
        'Your parcel from Argos is now due on Thursday between 2pm and 4pm.',
        "The driver will text you a one-hour window on the morning of delivery. If you're out, it can be left with a neighbour.",
    ),
    'Uh-huh, poor little fox.': (
        'Once upon a time, a little fox got lost in the snow on the way home from market.',
        'She followed the glow of a lantern to an old barn where an owl was keeping warm. The owl offered to guide her home at dawn.',
    ),
    'Right, the one with the red label.': (
        'For the stew, get a 400g tin of chopped tomatoes, ideally the Mutti one with the red label.',
        "You'll also need a litre of beef stock, two carrots and a bag of pearl barley. The butcher's counter should have diced shin.",
    ),
    "Okay, actually, can you book tomorrow morning's instead?": (
        'The next yoga class at your gym is at 6:30pm with Sarah, and there are three spaces left.',
        "It's a seventy-five-minute vinyasa session, so bring water and arrive a bit early to get a mat. Shall I book you in?",
    ),
    'Yeah, can you skip this one?': (
        "Here's your Friday evening playlist, starting with Mr. Brightside by The Killers.",
        "After that there's some Arctic Monkeys, a bit of Florence and the Machine, and Blur to finish. It runs for about an hour and forty minutes.",
    ),
    "Mm, no, that's her old address.": (
        "I'll send the birthday card to Aunt Margaret at 17 Elm Grove, Harrogate.",
        "It should arrive by Wednesday with first class post. I've added the message you dictated, wishing her a lovely seventieth.",
    ),
    'Oh, can you give me that in miles?': (
        'The Cotswold Way walk from Chipping Campden to Broadway is about 9 kilometres with one steep climb.',
        'Most people take around two and a half hours, stopping at Broadway Tower for the views. The path is well marked with acorn signs.',
    ),
    "Right, but we'll have a toddler with us.": (
        'The best route up Snowdon is the Pyg Track, which takes about three hours to the summit.',
        'It starts at Pen-y-Pass, where parking should be booked ahead in summer. The final section gets rocky, so wear proper boots.',
    ),
    'Uh, no, I meant Dave from work.': (
        'Calling Dave Jones on his mobile now, the last time you spoke was on Sunday.',
        "If he doesn't pick up, I can leave a voice message or send a text instead. Would you like me to put it on speaker?",
    ),
    'Is it still running after midnight?': (
        'The quickest way back to your hotel is the number 38 bus, which takes about twenty-five minutes.',
        'Catch it from the stop outside the theatre, opposite the Pret. A taxi would be quicker at night but costs around £18.',
    ),
}
FORTY_SECOND_VOICES = (
    'piper-savory',
    'piper-hyssop',
    'en-gb-x-gbcwmd+max',
    'en-gb+ed',
    'en-us+boris',
    'en-gb-x-gbclan+aunty',
)
FORTY_SECOND_NOISE_SEEDS = (78, 79)
FORTY_SECOND_ECHO_DB = (-10.3125, -13.53125, -16.53125, -19.0625, -21.34375, -22.53125)


def forty_second_held_out_clips() -> list[Clip]:
    """The forty-second held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_SECOND")


#: The forty-third to forty-fifth held-out sets (issue 38, twenty-eighth pass), written on
#: 2026-12-06 by a helper kept from the rules and the code, as the fortieth to forty-second were,
#: each phrase with the agent's reply it is said over; written after a read-back came to decide
#: at once and the echo guard's window grew to 384 ms, unplayed until both had landed.
FORTY_THIRD_BACKCHANNELS = (
    'Mm-hm, got you.',
    'Oh wow, forty minutes early.',
    'Yeah, octopuses are wild.',
    'Mm, cardamom, yum.',
    "Whew, glad that's done.",
    'Right, blue bin tonight.',
)
FORTY_THIRD_INTERRUPTIONS = (
    'Wait, which car park was that?',
    'Yeah, can you make that repeat daily?',
    'Oh, no, I meant the small bag.',
    "Mm, what's the dress code there?",
    "Stop reading, I'll look myself.",
    'Okay, and how do I get there by bus?',
    "No, it's for Priya, not Priyanka.",
)
FORTY_THIRD_REPLIES = {
    'Mm-hm, got you.': (
        'Your parcel from Harrow Books is out for delivery today.',
        "The driver expects to arrive between 2 and 4pm. You'll get a text when they're ten stops away.",
    ),
    'Oh wow, forty minutes early.': (
        'Your flight to Lisbon is now expected to land 40 minutes early.',
        'Strong tailwinds are helping it along. Your arrival gate is listed as 14.',
    ),
    'Yeah, octopuses are wild.': (
        'Octopuses have three hearts and blue blood.',
        'Two of the hearts pump blood to the gills, while the third serves the rest of the body. The blue colour comes from a copper-based protein.',
    ),
    'Mm, cardamom, yum.': (
        'This chai recipe uses cinnamon, cardamom and a little fresh ginger.',
        'Simmer the spices in water for 5 minutes before adding the tea and milk. Sweeten to taste with honey or sugar.',
    ),
    "Whew, glad that's done.": (
        'Good news: your car passed its MOT with no advisories.',
        'The certificate is valid until March next year. The garage says you can collect it any time after 3pm.',
    ),
    'Right, blue bin tonight.': (
        'Tomorrow is recycling day, so the blue bin needs to go out tonight.',
        'Collection on your street usually starts around 7am. Glass goes in the separate box this week.',
    ),
    'Wait, which car park was that?': (
        'The nearest car park to the stadium is on Dalton Street.',
        "It costs £8 for match days and opens two hours before kick-off. From there it's about a 5 minute walk to the north stand.",
    ),
    'Yeah, can you make that repeat daily?': (
        'Your alarm is set for 6:30 tomorrow morning.',
        "That gives you about 7 and a half hours of sleep if you go to bed now. I'll use the gentle chime sound.",
    ),
    'Oh, no, I meant the small bag.': (
        "I've added a 1 kilo bag of porridge oats to your basket for £3.20.",
        'Your basket now comes to £41.75. Delivery is booked for Thursday between 6 and 7pm.',
    ),
    "Mm, what's the dress code there?": (
        "Your table at Marlowe's is booked for Saturday at 8pm.",
        "It's a table for two by the window. They'll hold it for 15 minutes if you're running late.",
    ),
    "Stop reading, I'll look myself.": (
        'Here are the top reviews for the Bosch cordless drill.',
        "One reviewer says the battery lasts all day on big jobs. Another mentions it's a bit heavy for overhead work.",
    ),
    'Okay, and how do I get there by bus?': (
        'The Natural History Museum is open today from 10am to 5:50pm.',
        'Entry is free, though some exhibitions need a paid ticket. The dinosaur gallery tends to be busiest around midday.',
    ),
    "No, it's for Priya, not Priyanka.": (
        "Okay, sending a message to Priyanka saying you're running ten minutes late.",
        "I'll let you know when it's been delivered. Would you like me to share your live location too?",
    ),
}
FORTY_THIRD_VOICES = (
    'piper-mace',
    'piper-nutmeg',
    'en-gb-scotland+paul',
    'en-us+steph',
    'en-029+benjamin',
    'en-gb-x-rp+zac',
)
FORTY_THIRD_NOISE_SEEDS = (80, 81)
FORTY_THIRD_ECHO_DB = (-10.59375, -21.09375, -22.0625, -22.6875, -23.21875, -24.8125)


def forty_third_held_out_clips() -> list[Clip]:
    """The forty-third held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_THIRD")


FORTY_FOURTH_BACKCHANNELS = (
    'Okey-doke.',
    'Oh, the one with the dragon!',
    'Wow, my feet can tell.',
    'Huh, only twelve degrees.',
    'Ooh, proper classic, this.',
    'Aw, good for Grandad.',
)
FORTY_FOURTH_INTERRUPTIONS = (
    "Uh, that meeting's moved to Thursday.",
    'Wait, do I need a visa for that?',
    'Mm, can you set a timer for that?',
    'No no, I wanted the live version.',
    'Yeah, remind me about it at lunchtime.',
    "Pause it, the baby's crying.",
    'Right, what deposit do they want?',
)
FORTY_FOURTH_REPLIES = {
    'Okey-doke.': (
        'Your next bin collection is general waste on Friday morning.',
        'Make sure the lid closes fully or they may not take it. Garden waste will be collected the week after.',
    ),
    'Oh, the one with the dragon!': (
        "Tonight's bedtime story is called The Dragon Who Couldn't Sleep.",
        'Once upon a time, high in the snowy mountains, lived a little dragon named Ember. Every night, she counted the stars but never managed to close her eyes.',
    ),
    'Wow, my feet can tell.': (
        "You've walked 14,200 steps today, your highest total this month.",
        "That's about 10 kilometres. You're well ahead of your weekly goal.",
    ),
    'Huh, only twelve degrees.': (
        "It's currently 12 degrees in Manchester with light cloud.",
        'It should warm up to around 16 this afternoon. Rain is likely to arrive after 9pm.',
    ),
    'Ooh, proper classic, this.': (
        'Now playing Rumours by Fleetwood Mac.',
        'The album was released in 1977 and became one of the best-selling records of all time. First up is Second Hand News.',
    ),
    'Aw, good for Grandad.': (
        'Your grandad has posted a photo of his allotment in the family group chat.',
        "He says the runner beans are finally climbing the canes. He's also asking if anyone wants courgettes.",
    ),
    "Uh, that meeting's moved to Thursday.": (
        'Your next meeting with the marketing team is Wednesday at 10am.',
        "It's in meeting room 3 and should last about an hour. Jo has shared the agenda by email.",
    ),
    'Wait, do I need a visa for that?': (
        'Flights from London to Istanbul start from £89 return in May.',
        'The cheapest option leaves Stansted at 6:15am. Most direct flights take just under 4 hours.',
    ),
    'Mm, can you set a timer for that?': (
        'Boil the eggs for exactly 7 minutes for a jammy yolk.',
        "Then move them straight into a bowl of cold water. Peel them once they're cool enough to handle.",
    ),
    'No no, I wanted the live version.': (
        'Playing Hotel California by the Eagles.',
        'This is the original studio recording from 1976. It runs for about 6 and a half minutes.',
    ),
    'Yeah, remind me about it at lunchtime.': (
        'Your prescription is ready to collect from the pharmacy on King Street.',
        "They're open until 6pm today. Remember to bring your exemption card.",
    ),
    "Pause it, the baby's crying.": (
        'Chapter 3: the crew finally sight land after weeks at sea.',
        'The captain orders the anchor dropped in a quiet bay. Nobody notices the smoke rising from the hills.',
    ),
    'Right, what deposit do they want?': (
        'The cottage in Keswick is available for the week of 12 August.',
        'It sleeps four and has a wood burner and a small garden. The weekly price is £780.',
    ),
}
FORTY_FOURTH_VOICES = (
    'piper-clove',
    'piper-saffron',
    'en-us-nyc+pablo',
    'en+linda',
    'en-gb-x-gbclan+john',
    'en-029+steph',
)
FORTY_FOURTH_NOISE_SEEDS = (82, 83)
FORTY_FOURTH_ECHO_DB = (-12.65625, -13.9375, -15.15625, -15.1875, -16.40625, -19.28125)


def forty_fourth_held_out_clips() -> list[Clip]:
    """The forty-fourth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_FOURTH")


FORTY_FIFTH_BACKCHANNELS = (
    'Yeah, noted, ta.',
    'Ooh, a blood moon.',
    'Aw, proud of him.',
    'Oof, a full minute.',
    'Twenty-five quid, not bad at all.',
    'Huh, honey never goes off.',
)
FORTY_FIFTH_INTERRUPTIONS = (
    'Wait, is the tip included in that?',
    'Oh, can you add oat milk too?',
    "Hold on, we've got a dog with us.",
    "Uh, what's the speed limit along here?",
    'No, forty minutes, not fourteen.',
    "Right, but what about the kids' tickets?",
    "Enough about the plot, who's in it?",
)
FORTY_FIFTH_REPLIES = {
    'Yeah, noted, ta.': (
        'Your screen time this week averaged 3 hours a day.',
        "That's down 20 minutes from last week. Most of it was spent on messaging apps.",
    ),
    'Ooh, a blood moon.': (
        "Tonight there's a total lunar eclipse visible from most of Europe.",
        "The moon will start to turn red around 9:40pm. You won't need a telescope to see it.",
    ),
    'Aw, proud of him.': (
        "Mrs Patel has emailed to say Leo's reading has really come on this term.",
        "She says he's moved up two book bands since September. She'd like him to keep reading aloud at home each night.",
    ),
    'Oof, a full minute.': (
        'Next up, hold a plank for one full minute.',
        'Keep your back flat and your core tight. If it gets too much, drop to your knees.',
    ),
    'Twenty-five quid, not bad at all.': (
        "The cheapest ticket for Saturday's concert is £25 including fees.",
        'Seats are in the upper circle with a side view. Doors open at 7pm.',
    ),
    'Huh, honey never goes off.': (
        'Honey can last for thousands of years without spoiling.',
        'Archaeologists have found edible honey in ancient Egyptian tombs. Its low moisture and natural acidity stop bacteria growing.',
    ),
    'Wait, is the tip included in that?': (
        'Split four ways, the bill comes to £23.50 each.',
        'I can send a payment request to everyone if you like. The total for the table was £94.',
    ),
    'Oh, can you add oat milk too?': (
        "I've added bananas and a loaf of bread to your shopping list.",
        'Your list now has 11 items. Would you like me to read it back?',
    ),
    "Hold on, we've got a dog with us.": (
        'The Lakeside Inn has a double room free this Friday for £110.',
        "Breakfast is included and check-in is from 3pm. It's about a 10 minute walk from the lake.",
    ),
    "Uh, what's the speed limit along here?": (
        'Continue on the A34 for another 6 miles.',
        "Then take the slip road signposted for Newbury. There's light traffic ahead.",
    ),
    'No, forty minutes, not fourteen.': (
        'Timer set for 14 minutes.',
        "I'll sound an alarm when it's done. Just say stop to turn it off.",
    ),
    "Right, but what about the kids' tickets?": (
        'Adult entry to the zoo is £28 on the day, or £24 if you book online.',
        "The zoo opens at 9:30am and closes at 6pm in summer. The penguin feeding is at 2 o'clock.",
    ),
    "Enough about the plot, who's in it?": (
        'The film follows a retired detective who returns for one last case.',
        "Set in 1970s Glasgow, it's a slow-burning thriller with plenty of twists. Critics have called it gripping and beautifully shot.",
    ),
}
FORTY_FIFTH_VOICES = (
    'piper-marjoram',
    'piper-angelica',
    'en-us+gene',
    'en-029+edward',
    'en-gb-scotland+belinda',
    'en-gb-x-gbcwmd+paul',
)
FORTY_FIFTH_NOISE_SEEDS = (84, 85)
FORTY_FIFTH_ECHO_DB = (-12.28125, -16.21875, -19.65625, -19.96875, -20.90625, -22.40625)


def forty_fifth_held_out_clips() -> list[Clip]:
    """The forty-fifth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_FIFTH")


#: The forty-sixth and forty-seventh held-out sets (issue 38, twenty-ninth pass), written on
#: 2026-12-06 by a helper kept from the rules and the code, each phrase with the agent's reply it
#: is said over. Their backchannels are of the issue's own kind (continuers, acknowledgements and
#: a one-word assessment: "mm-hmm", "yeah", "right", "okay", "I see", a laugh), as the third to
#: twenty-fourth sets' were; the twenty-fifth to forty-fifth sets' were listener's comments with
#: words of their own ("Huh, honey never goes off."). Unplayed before the rules of 221474a.
FORTY_SIXTH_BACKCHANNELS = (
    'Mm-hmm, okay.',
    'Alright, yep.',
    'Ah, got it.',
    'Okay, lovely.',
    'Oh, neat.',
    'Heh, nice.',
)
FORTY_SIXTH_INTERRUPTIONS = (
    'Wait, I meant the other Jamie.',
    'How windy will it be on the beach?',
    'Yeah, but do they have free returns?',
    'Mm, actually put on something more upbeat.',
    'No, I have to be there by nine.',
    "Can I drink alcohol while I'm taking those?",
    'Uh, can we push that to the afternoon?',
)
FORTY_SIXTH_REPLIES = {
    'Mm-hmm, okay.': (
        'Your pasta timer is set for eleven minutes, starting now.',
        "I'll give you a one minute warning before it ends. Don't forget to save a cup of the cooking water for the sauce.",
    ),
    'Alright, yep.': (
        'In about half a mile, take the second exit at the next roundabout.',
        'Then stay in the left lane for roughly two miles. Your destination will be on the right, just after the petrol station.',
    ),
    'Ah, got it.': (
        "You've got a dentist appointment on Thursday at quarter past nine.",
        "It's at the practice on Mill Lane. I'll remind you an hour beforehand so you have plenty of time to get there.",
    ),
    'Okay, lovely.': (
        'Tomorrow looks dry and sunny, with a high of 21 degrees.',
        "The wind should stay light all day. It'll cool down quickly after sunset, so you might want a jacket for the evening.",
    ),
    'Oh, neat.': (
        "Sea otters often hold hands while they sleep so they don't drift apart.",
        'A group of them floating together is called a raft. They sometimes wrap themselves in kelp to stay in one place too.',
    ),
    'Heh, nice.': (
        'Your team won 3-1 last night, with a late goal deep into stoppage time.',
        "That's their fourth win in a row. They're now just two points off the top of the table.",
    ),
    'Wait, I meant the other Jamie.': (
        "I've sent your message to Jamie saying you'll be there by six.",
        "Jamie usually replies within a few minutes. I'll read the reply out to you as soon as it arrives.",
    ),
    'How windy will it be on the beach?': (
        "It's currently 18 degrees in Barcelona with clear blue skies.",
        "Later this afternoon it should climb to around 24. There's no rain expected there until Sunday.",
    ),
    'Yeah, but do they have free returns?': (
        'The cheapest pair of running shoes I found in your size costs 45 pounds.',
        "They're from an online sports retailer and have a four star rating. The next cheapest option is 52 pounds from another shop.",
    ),
    'Mm, actually put on something more upbeat.': (
        'Now playing a relaxing piano playlist for your evening.',
        "It's about an hour long and starts with some Ludovico Einaudi. I'll lower the volume gradually if you fall asleep.",
    ),
    'No, I have to be there by nine.': (
        'The fastest route to the airport takes about 50 minutes right now.',
        "There's slow traffic near junction 4, but it's starting to clear. If you leave at half eight, you'll arrive around twenty past nine.",
    ),
    "Can I drink alcohol while I'm taking those?": (
        'Your prescription for amoxicillin is ready to collect from the pharmacy.',
        'Remember to take it three times a day with food. Finish the whole course, even if you start to feel better.',
    ),
    'Uh, can we push that to the afternoon?': (
        'Your haircut is booked for Saturday at half past ten at Cutting Edge.',
        "It's a wash, cut and blow-dry with Sophie. The salon asks you to arrive five minutes early.",
    ),
}
FORTY_SIXTH_VOICES = (
    'piper-tarragon',
    'piper-pimento',
    'en-us+marcelo',
    'en-gb-x-rp+Hugo',
    'en-029+max',
    'en-gb-x-gbclan+edward2',
)
FORTY_SIXTH_NOISE_SEEDS = (86, 87)
FORTY_SIXTH_ECHO_DB = (-10.84375, -16.84375, -17.46875, -20.1875, -20.5625, -24.90625)


def forty_sixth_held_out_clips() -> list[Clip]:
    """The forty-sixth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_SIXTH")


FORTY_SEVENTH_BACKCHANNELS = (
    'Mhm, great.',
    'Right, right, right.',
    'I see, okay.',
    'Yep, got it.',
    'Oh, brilliant.',
    'Ha ha, yeah.',
)
FORTY_SEVENTH_INTERRUPTIONS = (
    'Stop, just tell me how tall it is.',
    "Right, and where's the nearest Fresh Mart?",
    "Okay, but which channel's showing it?",
    "Make it twenty-one, it's freezing in here.",
    'Hold on, can I pay by card?',
    'Can you set me a monthly limit for that?',
    "Oh, read me the landlord's one in full.",
)
FORTY_SEVENTH_REPLIES = {
    'Mhm, great.': (
        'Your grocery order has been confirmed for delivery tomorrow morning.',
        "It should arrive between eight and nine. Two items were substituted, and I've sent the details to your phone.",
    ),
    'Right, right, right.': (
        'To start, melt the butter in a large pan over a low heat.',
        "Once it's foaming, add the chopped onion and a pinch of salt. Let it soften gently for about ten minutes without browning.",
    ),
    'I see, okay.': (
        'Your electricity bill this month is 84 pounds, which is a little higher than usual.',
        "Most of the increase came from heating during last week's cold spell. Your direct debit will be taken on the first of the month.",
    ),
    'Yep, got it.': (
        "I've turned the hallway lights down to thirty percent.",
        "They'll switch off automatically at midnight. The porch light will stay on until morning as usual.",
    ),
    'Oh, brilliant.': (
        'Your train to Manchester is running on time and leaves from platform 5.',
        "There's a buffet car in coach C. You're due to arrive at Manchester Piccadilly at eleven forty-two.",
    ),
    'Ha ha, yeah.': (
        "Here's the song that was number one in the week you were born.",
        "It's a cheesy disco track that spent five weeks at the top. Apparently it was a wedding favourite for years afterwards.",
    ),
    'Stop, just tell me how tall it is.': (
        "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
        'At the time it was the tallest structure in the world. Many Parisian artists signed a petition against it before it was even built.',
    ),
    "Right, and where's the nearest Fresh Mart?": (
        'Salmon fillets are on offer at Fresh Mart this week, two for 5 pounds.',
        "The offer ends on Sunday. They've also got discounts on new potatoes and asparagus, if you fancy a side.",
    ),
    "Okay, but which channel's showing it?": (
        "England are batting first in today's test match against India.",
        'The pitch is expected to favour the spin bowlers later in the day. Play is due to start at half past ten.',
    ),
    "Make it twenty-one, it's freezing in here.": (
        "I've set the thermostat to 19 degrees for the rest of the evening.",
        "The heating will turn off at 10pm and come back on at half six tomorrow. You're currently on the eco schedule.",
    ),
    'Hold on, can I pay by card?': (
        'The next bus to the city centre is the number 12, leaving in seven minutes.',
        'It stops right outside the library and takes about 25 minutes. A single ticket costs two pounds fifty.',
    ),
    'Can you set me a monthly limit for that?': (
        'You spent 320 pounds on eating out last month.',
        "That's about 60 pounds more than the month before. Most of it was at weekends, particularly on Friday nights.",
    ),
    "Oh, read me the landlord's one in full.": (
        'You have three unread emails, and the first one is from your landlord.',
        "The subject line says boiler service next week. The other two are newsletters from shops you've ordered from.",
    ),
}
FORTY_SEVENTH_VOICES = (
    'piper-sumac',
    'piper-galangal',
    'en-us-nyc+antonio',
    'en-gb+michel',
    'en-gb-scotland+miguel',
    'en-gb-x-gbcwmd+Lee',
)
FORTY_SEVENTH_NOISE_SEEDS = (88, 89)
FORTY_SEVENTH_ECHO_DB = (-15.21875, -16.34375, -17.78125, -18.46875, -19.90625, -20.59375)


def forty_seventh_held_out_clips() -> list[Clip]:
    """The forty-seventh held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_SEVENTH")


#: The forty-eighth held-out set (issue 38, twenty-ninth pass), written as the forty-sixth and
#: forty-seventh were, after both had run and before any rule changed by what they taught.
FORTY_EIGHTH_BACKCHANNELS = (
    'Mm-hmm, okay, cool.',
    'Uh-huh, uh-huh, yep.',
    'Yeah, yeah, sure.',
    'Oh, I see, nice.',
    'Heh, alright.',
    'Sure, got it.',
)
FORTY_EIGHTH_INTERRUPTIONS = (
    'Which platform does it leave from?',
    'Hang on, move that to Friday instead.',
    'Uh, why is the battery so low already?',
    'Right, but who scored their second goal?',
    'Send it without the emoji, please.',
    'Oh, can I use butter instead of oil?',
    'Okay, actually, play something more upbeat instead.',
)
FORTY_EIGHTH_REPLIES = {
    'Mm-hmm, okay, cool.': (
        'Your pasta timer has about four minutes left on it.',
        'When it goes off, save a mug of the cooking water before you drain it. It helps the sauce cling to the pasta.',
    ),
    'Uh-huh, uh-huh, yep.': (
        'To get to the leisure centre, head north on Mill Lane for about half a mile.',
        'At the second roundabout take the third exit onto Station Road. The entrance will be on your left just after the petrol station.',
    ),
    'Yeah, yeah, sure.': (
        'Your electricity bill this month came to sixty-two pounds, a little lower than last month.',
        'Most of the saving came from using less heating in the evenings. The payment will be taken by direct debit on the fifteenth.',
    ),
    'Oh, I see, nice.': (
        'Honeybees communicate the location of flowers through a movement called the waggle dance.',
        'The angle of the dance shows the direction relative to the sun. The length of the waggle tells the other bees how far away the flowers are.',
    ),
    'Heh, alright.': (
        'Tomorrow looks grey and drizzly in Manchester, with a high of twelve degrees.',
        'The rain should ease off by mid-afternoon, though it will stay breezy. Thursday is looking a bit brighter, with sunny spells after lunch.',
    ),
    'Sure, got it.': (
        "I've turned the thermostat in the living room down to nineteen degrees.",
        "It'll take about twenty minutes to settle at that temperature. The bedroom is still set to come on at ten o'clock tonight.",
    ),
    'Which platform does it leave from?': (
        'The next train to Brighton leaves at twenty past eleven and takes just under an hour.',
        'It stops at Gatwick Airport and Haywards Heath on the way. An off-peak single costs eighteen pounds fifty if you buy it at the station.',
    ),
    'Hang on, move that to Friday instead.': (
        "I've added a dentist appointment to your calendar for Wednesday at half past two.",
        "I've set a reminder for an hour beforehand. The surgery is on Queen Street, about fifteen minutes from your office.",
    ),
    'Uh, why is the battery so low already?': (
        'Your robot vacuum finished cleaning the kitchen and hallway about ten minutes ago.',
        "It covered roughly forty square metres in thirty-five minutes. The battery is at twelve percent, so it's gone back to its dock to charge.",
    ),
    'Right, but who scored their second goal?': (
        'Arsenal drew two-all with Newcastle last night after a late equaliser.',
        'Saka levelled it in the ninetieth minute with a header from a corner. The result keeps them third in the table, four points off the top.',
    ),
    'Send it without the emoji, please.': (
        "Here's your message to Priya: running ten minutes late, save me a seat, with a smiley face.",
        'Should I send it now or would you like to change anything? I can also share your live location with her.',
    ),
    'Oh, can I use butter instead of oil?': (
        "For these banana muffins you'll need three ripe bananas, two eggs and a hundred millilitres of vegetable oil.",
        "You'll also need two hundred grams of self-raising flour and some brown sugar. Bake them at one eighty for around twenty minutes.",
    ),
    'Okay, actually, play something more upbeat instead.': (
        'Now playing a calm acoustic playlist for your evening.',
        "It starts with a track by Nick Drake and runs for about two hours. I've set the volume to thirty percent.",
    ),
}
FORTY_EIGHTH_VOICES = (
    'piper-sassafras',
    'piper-fenugreek',
    'en-us+pedro',
    'en-gb-scotland+sandro',
    'en-029+norbert',
    'en-gb-x-gbclan+quincy',
)
FORTY_EIGHTH_NOISE_SEEDS = (90, 91)
FORTY_EIGHTH_ECHO_DB = (-14.8125, -15.34375, -18.84375, -19.6875, -20.03125, -20.0625)


def forty_eighth_held_out_clips() -> list[Clip]:
    """The forty-eighth held-out set: the tenth's shape (:func:`tenth_held_out_clips`), 92
    trials, each phrase over the reply it answers."""
    return _named("FORTY_EIGHTH")


#: flite's voices that chose the hum rule's first-word condition (looked at), and the two no
#: rule was chosen on: :func:`flite_clips`.
FLITE_LOOKED_AT = ("flite-slt", "flite-awb")
FLITE_HELD_OUT = ("flite-rms", "flite-kal16")


def flite_clips(voices: tuple[str, ...], sets: list[list[Clip]]) -> list[Clip]:
    """Every backchannel and interruption said in ``sets`` (each once, in order), in flite's
    ``voices``: a synthesizer none of the sets used (replay only: no noises, no echo)."""
    said: dict[str, str] = {}
    for clip in (c for s in sets for c in s if c.kind in ("backchannel", "interruption")):
        said.setdefault(clip.name, clip.kind)
    backchannels = tuple(t for t, k in said.items() if k == "backchannel")
    interruptions = tuple(t for t, k in said.items() if k == "interruption")
    return spoken(backchannels, interruptions, voices)


@dataclass
class OverlapTrial:
    """What one trial saw (times in seconds from the clip's speech onset, as sent)."""

    playback: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    flushed_at: float | None = None
    transcripts: list[str] = field(default_factory=list)
    #: The reply's audio the client received after the clip was sent (resumed, or played on).
    audio_after_s: float = 0.0
    #: The reply's audio the client received after the agent was paused or stopped, s.
    audio_while_quiet_s: float = 0.0
    #: The conversation the trial took place in (its records).
    conversation: str = ""

    def _decided(self) -> list[dict[str, Any]]:
        """The decisions about the reply the clip was said over: up to its stop. A stop ends
        that reply; what follows is about the agent's answer (the parrot saying the person's
        words back in the piper voice a clip was said in: its tail is then the answer's echo,
        ``ignored`` — a stopped interruption counted as missed on the fortieth and forty-fifth
        held-out sets before this)."""
        out = []
        for _, m in self.playback:
            if m["outcome"] != "paused":
                out.append(m)
            if m["outcome"] == "stopped":
                break
        return out

    def outcome(self) -> str:
        """``stopped``, ``resumed``, ``ignored`` (echo) or ``none`` (no pause at all)."""
        final = self._decided()
        return final[-1]["outcome"] if final else ("paused" if self.playback else "none")

    def why(self) -> str | None:
        decided = self._decided()
        return decided[-1].get("why") if decided else None

    def paused_at(self) -> float | None:
        times = [t for t, m in self.playback if m["outcome"] == "paused"]
        return times[0] if times else None

    def quiet_at(self) -> float | None:
        """When the client was told to go quiet (paused or flushed), from the onset."""
        times = [t for t in (self.paused_at(), self.flushed_at) if t is not None]
        return min(times) if times else None

    def silent_s(self) -> float | None:
        """From the pause to the resume (how long a resumed agent was silent)."""
        paused = self.paused_at()
        resumed = [t for t, m in self.playback if m["outcome"] == "resumed"]
        return None if paused is None or not resumed else resumed[0] - paused


async def talk_over(
    url: str,
    clip: np.ndarray,
    *,
    at_s: float = 1.5,
    after_s: float = 3.0,
    echo_db: float | None = None,
    echo_lag_ms: int = 150,
    reply: str = LONG_TEXT,
) -> OverlapTrial:
    """One trial against the gateway at ``url`` (its ``/ws``), the parrot saying ``reply``; see
    the module."""
    page = await Page.open(url, transport="ws")
    page.audio = bytearray()
    trial = OverlapTrial(conversation=str(page.welcome["conversationId"]))
    try:
        await _quiet(page)
        since = len(page.events)
        page.audio = bytearray()  # the greeting's audio is not what the speaker plays now
        await page.send(raw_text(reply))
        await page.wait_for(
            lambda e: e["type"] == "state" and e["state"] == "speaking", since=since, timeout=60
        )
        rate = int(page.welcome["audio"]["outRate"])
        await _play(page, trial, clip, rate, at_s, after_s, echo_db, echo_lag_ms, since)
    finally:
        await page.close()
    return trial


def raw_text(text: str) -> Any:
    """A typed line to the parrot."""
    from gateway.server.messages import SayText

    return SayText(text, to=PARROT)


async def _quiet(page: Page) -> None:
    """Wait out the parrot's greeting, so the trial talks over the reply it asks for."""
    greeting = await page.wait_for(lambda e: e["type"] == "utterance", timeout=60)
    start = page.events.index(greeting)
    try:
        spoken = await page.wait_for(
            lambda e: e["type"] == "state" and e["state"] == "speaking", since=start, timeout=10
        )
    except AssertionError:
        return
    await page.wait_for(
        lambda e: e["type"] == "state" and e["state"] != "speaking",
        since=page.events.index(spoken),
        timeout=60,
    )


async def _play(
    page: Page,
    trial: OverlapTrial,
    clip: np.ndarray,
    rate: int,
    at_s: float,
    after_s: float,
    echo_db: float | None,
    echo_lag_ms: int,
    since: int,
) -> None:
    """The microphone: 20 ms frames in real time; the client's speaker plays what came, as the
    page does, and (with ``echo_db``) it leaks back into the microphone."""
    out_frame = rate // 50
    played: list[np.ndarray] = []  # what the speaker played, at 16 kHz, one frame per tick
    buffer = np.zeros(0, np.int16)  # agent audio received, not yet played
    taken = 0  # bytes of page.audio moved into the buffer
    held = False
    prebuffer = True
    flushes = 0
    lead = np.zeros(int(at_s * 50) * FRAME, np.int16)
    tail = np.zeros(int(after_s * 50) * FRAME, np.int16)
    mic = np.concatenate([lead, clip, tail])
    onset_tick = len(lead) // FRAME + _first_voiced(clip) // FRAME
    gain = 0.0 if echo_db is None else 10 ** (echo_db / 20)
    lag = echo_lag_ms // 20
    start = time.monotonic()
    onset_wall = start + onset_tick * 0.02
    seen = max(since, len(page.events))  # the typed line's own flush is not the trial's
    for tick in range(len(mic) // FRAME):
        await asyncio.sleep(max(0.0, start + tick * 0.02 - time.monotonic()))
        assert page.audio is not None
        # The page's messages so far: hold, resume and flush its playout as the page does.
        for e in page.events[seen:]:
            now = time.monotonic() - onset_wall
            if e["type"] == "playback":
                trial.playback.append((now, e))
                if e["outcome"] == "paused":
                    held = True
                elif e["outcome"] == "resumed":
                    held = False
            elif e["type"] == "flush":
                flushes += 1
                trial.flushed_at = now if trial.flushed_at is None else trial.flushed_at
                held = False
                buffer = np.zeros(0, np.int16)
                taken = len(page.audio)
            elif e["type"] == "transcript" and not e.get("typed"):
                trial.transcripts.append(e["text"])
        seen = len(page.events)
        fresh = bytes(page.audio[taken:])
        taken += len(fresh) // 2 * 2
        if fresh:
            buffer = np.concatenate([buffer, np.frombuffer(fresh[: len(fresh) // 2 * 2], np.int16)])
        prebuffer = prebuffer and len(buffer) < 3 * out_frame
        if held or prebuffer or len(buffer) < out_frame:
            speaker = np.zeros(out_frame, np.int16)
            prebuffer = prebuffer or (not held and len(buffer) < out_frame)
        else:
            speaker, buffer = buffer[:out_frame], buffer[out_frame:]
        if tick >= onset_tick and speaker.any():
            trial.audio_after_s += 0.02
            # Paused, or stopped and the person's turn not yet answered (its reply is new).
            if held or (trial.flushed_at is not None and not trial.transcripts):
                trial.audio_while_quiet_s += 0.02
        played.append(_to_16k(speaker, rate))
        frame = mic[tick * FRAME : (tick + 1) * FRAME].astype(np.float64)
        if gain and len(played) > lag:
            frame = frame + gain * played[-1 - lag]
        await page.ws.send(np.clip(frame, -32768, 32767).astype("<i2").tobytes())
    # What came after the last frame (a transcript takes its time).
    await asyncio.sleep(1.5)
    for e in page.events[seen:]:
        now = time.monotonic() - onset_wall
        if e["type"] == "playback":
            trial.playback.append((now, e))
        elif e["type"] == "flush" and trial.flushed_at is None:
            trial.flushed_at = now
        elif e["type"] == "transcript" and not e.get("typed"):
            trial.transcripts.append(e["text"])


def _first_voiced(clip: np.ndarray) -> int:
    loud = np.flatnonzero(np.abs(clip) > 500)
    return int(loud[0]) if len(loud) else 0


def _to_16k(pcm: np.ndarray, rate: int) -> np.ndarray:
    if rate == SAMPLE_RATE:
        return pcm.astype(np.float64)
    n = len(pcm) * SAMPLE_RATE // rate
    return np.asarray(np.interp(np.arange(n) * rate / SAMPLE_RATE, np.arange(len(pcm)), pcm))


# ------------------------------------------------------------------ continuations
#: Requests said in two parts with a pause between (item 3 of issue 38): the person goes on
#: before the answer to the first part is heard. Written before the benchmark ran them.
CONTINUATIONS = (
    ("Turn on the lights", "in the kitchen please."),
    ("Set a timer", "for ten minutes."),
    ("What is the weather", "in Paris tomorrow?"),
    ("Play some jazz", "from the sixties."),
    ("Add milk", "to my shopping list."),
)


@dataclass
class ContinuationTrial:
    """What a request said in two parts brought back: the transcripts (``id``, ``text``,
    ``replaces``), the agents' utterances after the first transcript (text) and after the last
    one (``answered``: what the page shows as its answers), and flushes."""

    transcripts: list[dict[str, Any]] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    answered: list[str] = field(default_factory=list)
    flushes: int = 0

    def shown(self) -> list[str]:
        """The person's transcripts as the page shows them (a replaced one goes)."""
        gone = {t.get("replaces") for t in self.transcripts}
        return [t["text"] for t in self.transcripts if t.get("id") not in gone]


async def say_in_parts(
    url: str,
    first: np.ndarray,
    second: np.ndarray,
    *,
    gap_ms: int = 500,
    after_s: float = 6.0,
    page: Page | None = None,
) -> ContinuationTrial:
    """Say ``first``, ``gap_ms`` of silence, then ``second`` into the gateway at ``url`` (its
    ``/ws``) in real time, and collect what came back (the parrot answers). ``page``: a voice
    page already open on it, left open (to rejoin its conversation after); else one of its own."""
    own = page is None
    page = page or await Page.open(url, transport="ws")
    trial = ContinuationTrial()
    try:
        await _quiet(page)
        since = len(page.events)
        silence = np.zeros(SAMPLE_RATE * 2 // 5, np.int16)
        mic = np.concatenate(
            [silence, first, np.zeros(SAMPLE_RATE * gap_ms // 1000, np.int16), second]
        )
        mic = np.concatenate([mic, np.zeros(int(after_s * SAMPLE_RATE), np.int16)])
        start = time.monotonic()
        for tick in range(len(mic) // FRAME):
            await asyncio.sleep(max(0.0, start + tick * 0.02 - time.monotonic()))
            frame = mic[tick * FRAME : (tick + 1) * FRAME]
            await page.ws.send(frame.astype("<i2").tobytes())
        first_said: int | None = None
        for i, e in enumerate(page.events[since:]):
            if e["type"] == "transcript" and not e.get("typed"):
                trial.transcripts.append(e)
                first_said = i if first_said is None else first_said
                trial.answered = []
            elif e["type"] == "utterance" and first_said is not None:
                trial.answers.append(e["text"])
                trial.answered.append(e["text"])
            elif e["type"] == "flush":
                trial.flushes += 1
    finally:
        if own:
            await page.close()
    return trial
