"""Turn-taking with the real models, paced in real time: a request with a pause in the middle
arrives as one utterance, and a finished one ends fast."""

from __future__ import annotations

import numpy as np
import pytest

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.audio import SAMPLE_RATE
from gateway.talk.voice import talk_wav
from tests.support.speech import espeak_wav, piper_variant, silence, trim

pytestmark = pytest.mark.slow


def paused(whole: np.ndarray, first: np.ndarray, ms: int) -> np.ndarray:
    """``whole`` (one sentence, synthesised whole) with ``ms`` of silence at the word boundary
    where ``first`` (its first words, spoken alone) ends: the quietest 10 ms near there."""
    hop = SAMPLE_RATE // 100
    rms = np.sqrt(np.mean(whole[: len(whole) // hop * hop].astype(float).reshape(-1, hop) ** 2, 1))
    lo, hi = (len(first) - SAMPLE_RATE * 35 // 100) // hop, (len(first) + SAMPLE_RATE // 20) // hop
    at = (lo + int(np.argmin(rms[lo:hi]))) * hop + hop // 2
    return np.concatenate([silence(400), whole[:at], silence(ms), whole[at:]])


async def _talk(models, pcm):
    directory = AgentDirectory(AddressPolicy([]))
    try:
        result, _ = await talk_wav(
            pcm, ["builtin:parrot"], directory=directory, models=models, paced=True
        )
    finally:
        await directory.aclose()
    return result


@pytest.mark.parametrize("voice", ["piper", "espeak"])
async def test_a_pause_mid_sentence_does_not_split_the_request(models, voice) -> None:
    engine = piper_variant if voice == "piper" else espeak_wav

    def say(text: str) -> np.ndarray:
        return trim(engine(text))

    pcm = paused(say("Turn on the lights in the kitchen please."), say("Turn on the lights."), 700)
    result = await _talk(models, pcm)
    # The transcript rule alone ended this turn at "lights" (700 ms is past its end silence).
    assert len(result.utterances) == 1, result.transcript
    heard = result.transcript.lower()
    assert "turn on" in heard and "please" in heard, "both halves, in one utterance"


@pytest.mark.parametrize("voice", ["piper", "espeak"])
async def test_a_finished_request_still_ends_fast(models, voice) -> None:
    text = "Please turn off the kitchen lights."
    clip = trim(piper_variant(text)) if voice == "piper" else trim(espeak_wav(text))
    result = await _talk(models, np.concatenate([silence(400), clip]))
    [t] = result.utterances
    assert t["earlyEnd"], "the short pause, not a long wait"
    # Ended short of the 900 ms wait for unfinished words (and of the 1.5 s doubt wait): the
    # short pause plus the decode, which on a shared CPU took 300-480 ms (650 ms as a bound
    # failed once in CI-like runs at 677 ms, the decode slow, not the rule).
    assert t["endpoint"] < 850, t
    assert result.reply_text.startswith("You said: Please turn off")
