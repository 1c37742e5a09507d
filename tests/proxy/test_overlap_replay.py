"""The offline replay of speech over an agent (gateway/testing/overlap_replay.py,
``bench_interruptions.py --replay``): a clip through the real VAD and turn-taker, its decodes
answered by a stand-in recogniser here (what it hears is the test's to choose; the real one's
words depend on the CPU), and the command line with the real one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import read_wav
from gateway.proxy.overlap import OverlapSettings
from gateway.proxy.settings import SessionSettings
from gateway.testing.overlap import Clip, speech
from gateway.testing.overlap_replay import Replayed, replay, replay_clips, summary
from gateway.voice.stt import Partial
from gateway.voice.words import Reading

pytestmark = pytest.mark.slow  # the Silero VAD (ONNX) in every replay

ROOT = Path(__file__).resolve().parents[2]


def hears(text: str, logprob: float | None = None, nearest: Reading | None = None):
    """A recogniser that hears ``text`` in anything (at ``logprob``; ``nearest``: its reading
    in the words asked for, when asked), and the prompts it was given."""
    prompts: list[str | None] = []

    async def decode(
        audio: np.ndarray, prompt: str | None, beam: int, within: tuple[str, ...]
    ) -> Partial:
        assert audio.size > 0 and beam == OverlapSettings().beam
        prompts.append(prompt)
        return Partial(text, logprob, nearest if within else None)

    return decode, prompts


async def test_a_backchannel_resumes_and_a_meant_interruption_stops():
    yeah = speech("Yeah.", "en-us")
    decode, prompts = hears("Yeah.")
    r = await replay(yeah, decode, SessionSettings())
    assert (r.kind, r.why, r.decodes) == ("backchannel", "words", ("Yeah.",))
    assert prompts == [OverlapSettings().prompt], "decoded as the session decodes"
    decode, _ = hears("Tell me about the weather.")
    r = await replay(yeah, decode, SessionSettings())
    assert (r.kind, r.why) == ("interruption", "words")
    assert r.wrong("backchannel") and not r.wrong("interruption")


async def test_a_misread_backchannel_whose_reading_is_near_resumes():
    """tiny.en wrote "Exactly." in en-029+f3 as "In that, please." but found "Exactly." nearly
    as likely (0.72 nats less): the agent goes on. A reading far less likely, or a stop word,
    and it stops."""
    exactly = speech("Exactly.", "en-us")
    decode, _ = hears("In that, please.", -0.6, Reading("Exactly.", 0.3))
    r = await replay(exactly, decode, SessionSettings())
    assert (r.kind, r.why) == ("backchannel", "near a backchannel")
    decode, _ = hears("In that, please.", -0.6, Reading("Exactly.", 4.0))
    assert (await replay(exactly, decode, SessionSettings())).kind == "interruption"
    decode, _ = hears("Oh, no.", -0.6, Reading("Oh, okay.", 0.3))
    assert (await replay(exactly, decode, SessionSettings())).why == "stop word"


async def test_silence_pauses_nothing():
    decode, prompts = hears("Yeah.")
    r = await replay(np.zeros(16_000, np.int16), decode, SessionSettings())
    assert r == Replayed("none", "", "", ()) and prompts == []


def test_echo_trials_are_left_out_and_the_summary_names_the_wrong_ones():
    decode, _ = hears("Right.")
    clips = [
        Clip("Quiet.", "interruption", "en-us", speech("Quiet.", "en-us")),
        Clip("Sure.", "backchannel", "en-us", speech("Sure.", "en-us")),
        Clip("echo", "echo", "-12 dB", np.zeros(0, np.int16)),
    ]
    results = replay_clips(clips, decode)
    assert [c.name for c, _ in results] == ["Quiet.", "Sure."]
    text = summary(results)
    assert "false stops 0/1, missed interruptions 1/1" in text
    assert "'Quiet.' (en-us): backchannel by words; heard ['Right.'" in text
    assert "went on before the decision: 1 backchannels or noises, 1 interruptions" in text


async def test_an_agent_that_went_on_before_the_decision_is_counted():
    """ "Okay, | okay." said with a comma's pause: the agent goes on after the first part
    (``go_on``); with it off, only the decision resumes it."""
    okay = speech("Okay.", "en-us")
    clip = np.concatenate([okay, np.zeros(16_000 * 160 // 1000, np.int16), okay])
    decode, _ = hears("Okay.")
    r = await replay(clip, decode, SessionSettings())
    assert (r.kind, r.went_on) == ("backchannel", True), r
    off = SessionSettings(overlap=OverlapSettings(go_on=False))
    r = await replay(clip, decode, off)
    assert (r.kind, r.went_on) == ("backchannel", False), r


async def test_how_sure_the_recogniser_was_reaches_the_hum_rule():
    """A hum (piper's "Mm-hmm", hum-like through the real VAD) heard as words: unsure, the hum
    rule makes it a backchannel; sure, the words are what was said (``hum_sure_logprob``)."""
    hum, _ = read_wav(ROOT / "tests" / "audio" / "hum_clips" / "mm-hmm.piper.wav")
    decode, _ = hears("And then them.", -0.8)
    r = await replay(hum, decode, SessionSettings())
    assert (r.kind, r.why) == ("backchannel", "hum and words"), r
    decode, _ = hears("And then them.", -0.1)
    r = await replay(hum, decode, SessionSettings())
    assert (r.kind, r.why) == ("interruption", "words"), r


def test_the_command_line_replays_with_the_real_recogniser():
    """What a developer runs: the real VAD, turn-taker and Whisper on two clips. Which way each
    goes is the model's (it varies by CPU); that both are decided and counted is not."""
    out = subprocess.run(
        [
            sys.executable,
            "scripts/bench_interruptions.py",
            "--replay",
            "--limit",
            "1",
            "--kind",
            "backchannel",
            "--kind",
            "interruption",
            "--decode-lag-ms",
            "400",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    ).stdout
    assert "replayed: 2 clips; false stops " in out and "/1, missed interruptions " in out
    assert out.count(" -> ") == 2, out
    # scripts/test installs Whisper base (the base-model extra): the replay reads with it too.
    assert "second reader: base" in out, out
    assert "each decode answered 384 ms after it was asked" in out, out  # 12 VAD chunks


async def test_a_second_reader_sure_of_a_backchannel_resumes_the_agent():
    """tiny.en wrote espeak-ng's "Exactly." as other words ("In that, please."), with no
    reading in backchannels' words near; Whisper base, reading the overlap again, heard it at
    -0.25: the agent goes on. Unsure, hearing other words, or with no second reader, the words
    stop it."""
    clip = speech("Exactly.", "en-us")
    first, _ = hears("In that, please.", -0.9)
    again, prompts = hears("Exactly.", -0.25)
    r = await replay(clip, first, SessionSettings(), again)
    assert (r.kind, r.why, r.text) == ("backchannel", "second reader", "exactly"), r
    assert r.decodes[-1] == "second: Exactly." and prompts == [OverlapSettings().prompt]
    unsure, _ = hears("Exactly.", -0.8)
    other, _ = hears("Let's go, then.", -0.1)
    for reader in (unsure, other, None):
        r = await replay(clip, first, SessionSettings(), reader)
        assert (r.kind, r.why) == ("interruption", "words"), r


async def test_a_slow_recogniser_is_waited_for_at_the_length_bound():
    """A backchannel longer than the length bound (1.5 s), heard "Mm-hmm." until its decodes
    hold all of it, its decodes answered late (``decode_chunks``: as over WebRTC on a busy
    CPU): the words decide, not the bound; the decision comes later the slower they are."""
    clip = speech("Mm-hmm, interesting.", "en-us")
    asked: list[int] = []

    async def decode(
        audio: np.ndarray, prompt: str | None, beam: int, within: tuple[str, ...]
    ) -> Partial:
        asked.append(audio.size)
        said = "Mm-hmm." if audio.size < clip.size * 2 // 3 else "Mm-hmm, interesting."
        return Partial(said, None, None)

    quick = await replay(clip, decode, SessionSettings())
    slow = await replay(clip, decode, SessionSettings(), decode_chunks=14)
    for r in (quick, slow):
        assert (r.kind, r.why, r.text) == ("backchannel", "words", "mm hmm interesting"), r
    assert slow.decided_ms > quick.decided_ms
    assert max(asked) > clip.size * 2 // 3, "some decodes held all of it"


def test_the_command_line_takes_the_decode_lag_for_the_replay_only(capsys):
    from gateway.testing.bench_interruptions import main

    for argv in (["--decode-lag-ms", "400"], ["--replay", "--decode-lag-ms", "-1"]):
        with pytest.raises(SystemExit):
            main(argv)
        assert "--decode-lag-ms is for --replay, and at least 0" in capsys.readouterr().err
