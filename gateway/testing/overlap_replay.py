"""Speech over an agent, replayed offline: a clip through the VAD and the turn-taker while an
agent is audible, the overlap's decodes made by a recogniser as the session makes them; no server,
no page, no clock (``bench_interruptions.py --replay``).

The live benchmark plays each clip into a real ``serve`` in real time, about ten seconds a trial.
The replay decides the same clip in a fraction of that, so rules and prompts can be compared on
every looked-at set before a held-out set is run once, live. What it leaves out: the agent's own
audio (no echo trials), the page's buffer and the network (no quiet or silence times), and the
decodes' timing: each is answered :data:`DECODE_CHUNKS` chunks after it was asked, whatever it
took. The audio a decode is given is the turn-taker's, so it is cut where the live path cuts it.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.proxy.overlap import READ_BACK_P, OverlapSettings, feedback_words, read_back
from gateway.proxy.settings import SessionSettings, read_once, without_feedback
from gateway.proxy.turn_taker import (
    OverlapDecided,
    PausePlayback,
    ResumePlayback,
    StartOverlapDecode,
    TurnTaker,
)
from gateway.testing.overlap import Clip
from gateway.voice.stt import Partial
from gateway.voice.vad import CHUNK_SAMPLES, VadStream

#: VAD chunks between a decode asked for and its words (~100 ms: a tiny.en overlap decode).
DECODE_CHUNKS = 3
#: Silence before the clip (the agent talking alone) and after it (the decision's time).
BEFORE_S, AFTER_S = 1.0, 2.0

#: ``decode(audio, prompt, beam, within)``: the overlap's words and how sure of them
#: (``SpeechToText.transcribe_partial``).
Decode = Callable[[np.ndarray, str | None, int, tuple[str, ...]], Awaitable[Partial]]
#: ``feedback(words)``: the feedback reader's P(a listener's feedback) for an overlap's words
#: (``FeedbackReader.score``; None: not known).
Feedback = Callable[[list[str]], Awaitable[float | None]]


@dataclass(frozen=True)
class Replayed:
    """How one clip was decided: the last decision (``none``: nothing paused the agent)."""

    kind: str
    why: str
    text: str
    #: Every decode's words, in order.
    decodes: tuple[str, ...]
    #: The agent went on before the decision (``OverlapSettings.go_on``), and was paused again
    #: before it (``go_on_ms``).
    went_on: bool = False
    paused_again: bool = False
    #: When the decision came, after the overlap began, on the replay's clock (the decodes
    #: answered :data:`DECODE_CHUNKS` chunks after they were asked; 0: no decision).
    decided_ms: int = 0

    def wrong(self, expected: str) -> bool:
        """Whether the outcome is wrong for a clip that should be ``expected``: an
        interruption not stopped, or anything else stopped."""
        if expected == "interruption":
            return self.kind != "interruption"
        return self.kind == "interruption"


async def replay(
    clip: np.ndarray,
    decode: Decode,
    settings: SessionSettings,
    second: Decode | None = None,
    decode_chunks: int = DECODE_CHUNKS,
    feedback: Feedback | None = None,
    agent_heard: str = "",
) -> Replayed:
    """``clip`` (16 kHz int16) said over an audible agent; see the module. ``second``: the
    second recogniser (``StartOverlapDecode.second``; None: none, as a session without one:
    :func:`gateway.proxy.settings.read_once`); ``decode_chunks``: VAD chunks between a decode
    asked for and its words (more: a recogniser slowed by a busy CPU, as over WebRTC);
    ``feedback``: the feedback reader (``StartOverlapDecode.feedback``; None: none, as a
    session without one: :func:`gateway.proxy.settings.without_feedback`); ``agent_heard``:
    what the person had heard the agent say (a read-back of it is feedback unread:
    :func:`gateway.proxy.overlap.read_back`)."""
    settings = settings if second is not None else read_once(settings)
    turns = TurnTaker(settings if feedback is not None else without_feedback(settings))
    vad = VadStream()
    quiet = np.zeros(int(BEFORE_S * SAMPLE_RATE), np.int16)
    audio = np.concatenate([quiet, clip, np.zeros(int(AFTER_S * SAMPLE_RATE), np.int16)])
    chunks, probabilities = vad.process(audio)
    now = 0.0
    turns.playing(True, now)
    asked: list[tuple[int, StartOverlapDecode]] = []
    decided: list[OverlapDecided] = []
    heard: list[str] = []
    went_on = paused_again = False
    for i, (chunk, p) in enumerate(zip(chunks, probabilities, strict=True)):
        actions = turns.hear(chunk, float(p), now, agent_audible=True)
        for due, ask in [a for a in asked if a[0] <= i]:
            asked.remove((due, ask))
            reader = decode
            if ask.second:
                assert second is not None, "asked only with a second recogniser (read_once)"
                reader = second
            partial = await reader(ask.audio, ask.prompt, ask.beam, ask.within)
            heard.append(f"second: {partial.text}" if ask.second else partial.text)
            read = ask.feedback and feedback is not None
            said = feedback_words(partial.text, opened=not ask.begun) if read else None
            echoed = said is not None and read_back(said, agent_heard)
            p = READ_BACK_P if echoed else None
            if feedback is not None and said is not None and not echoed:
                p = await feedback(said)
            actions += turns.overlap_heard(
                ask.id,
                partial.text,
                ask.voiced_ms,
                now,
                partial.avg_logprob,
                partial.nearest,
                p,
                read_back=echoed,
            )
        for action in actions:
            if isinstance(action, StartOverlapDecode):
                asked.append((i + decode_chunks, action))
            elif isinstance(action, OverlapDecided):
                decided.append(action)
            elif isinstance(action, ResumePlayback) and action.heard is not None:
                went_on = went_on or not decided
            elif isinstance(action, PausePlayback) and went_on and not decided:
                paused_again = True
        now += CHUNK_SAMPLES / SAMPLE_RATE
    if not decided:
        return Replayed("none", "", "", tuple(heard), went_on, paused_again)
    last = decided[-1].decision
    return Replayed(
        last.kind, last.why, last.text, tuple(heard), went_on, paused_again, last.decided_ms
    )


def replay_clips(
    clips: list[Clip],
    decode: Decode,
    overlap: OverlapSettings | None = None,
    second: Decode | None = None,
    decode_chunks: int = DECODE_CHUNKS,
    feedback: Feedback | None = None,
) -> list[tuple[Clip, Replayed]]:
    """Each clip that can be replayed (not the echo case: it needs the agent's audio), with the
    session's settings and ``overlap`` (default: the committed rules); ``second``,
    ``decode_chunks`` and ``feedback`` as :func:`replay` takes them."""
    settings = SessionSettings()
    if overlap is not None:
        settings = replace(settings, overlap=overlap)
    return [
        (
            clip,
            asyncio.run(
                replay(
                    clip.audio,
                    decode,
                    settings,
                    second,
                    decode_chunks,
                    feedback,
                    clip.heard_before(),
                )
            ),
        )
        for clip in clips
        if clip.kind != "echo"
    ]


def summary(results: list[tuple[Clip, Replayed]]) -> str:
    """False stops and missed interruptions, and each wrong clip with what its decodes heard."""
    wrong = [(c, r) for c, r in results if r.wrong(c.kind)]
    meant = [c for c, _ in results if c.kind == "interruption"]
    missed = [c for c, _ in wrong if c.kind == "interruption"]
    went_on = [(c.kind, r.kind) for c, r in results if r.went_on]
    again = [c.kind for c, r in results if r.paused_again]
    lines = [
        f"replayed: {len(results)} clips; false stops {len(wrong) - len(missed)}/"
        f"{len(results) - len(meant)}, missed interruptions {len(missed)}/{len(meant)}",
        f"  went on before the decision: {sum(k != 'interruption' for k, _ in went_on)} "
        f"backchannels or noises, {sum(k == 'interruption' for k, _ in went_on)} "
        "interruptions",
        f"  paused again after going on: {sum(k != 'interruption' for k in again)} "
        f"backchannels or noises, {sum(k == 'interruption' for k in again)} interruptions",
    ]
    stops = sorted(r.decided_ms for c, r in results if c.kind == r.kind == "interruption")
    if stops:
        lines.append(
            f"  interruptions stopped {statistics.median(stops):.0f} ms (median) after the "
            f"overlap began, worst {stops[-1]} ms (the replay's clock)"
        )
    lines += [
        f"  {c.kind} {c.name!r} ({c.voice}): {r.kind} by {r.why or '-'}; heard {list(r.decodes)}"
        for c, r in wrong
    ]
    return "\n".join(lines)
