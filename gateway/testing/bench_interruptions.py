"""Speech over an agent, measured: :data:`gateway.testing.overlap.clips` played into a real
``serve`` over the WebSocket while the parrot reads a long text (issue 38).

Each clip is one trial (:func:`gateway.testing.overlap.talk_over`): a fresh page, the reply
under way, the clip 1.5 s into it, then 3 s of silence (the echo trials send no clip: only the
agent's own audio comes back, 10, 18 or 25 dB down, 50, 150 or 250 ms late). ``--transport
webrtc`` plays the same trials over WebRTC (:mod:`gateway.testing.overlap_webrtc`: Opus on RTP,
an aiortc client, the page's muting of its audio element on a pause). It prints:

* **false stops**: backchannels, noises and echo that stopped the agent (or became a turn);
* **missed interruptions**: meant interruptions that did not stop it;
* **quiet**: from the clip's speech onset (as sent) to the page being told to hold its audio
  (``paused``, or ``flush``), median and worst; the stop decision's time for interruptions;
* **silent while resumed**: from the pause to the resume, for the trials that resumed;
* each signal's share of the decisions (the serve log's ``overlap:`` lines: ``words``,
  ``stop word``, ``length``, ``bound``, ``no decode``), and the decoding time per overlap
  (one inference thread: about its CPU time), with the echo guard's CPU per check and the hum
  signal's per short overlap.

``--set held-out`` plays the held-out set instead (:func:`gateway.testing.overlap.held_out_clips`,
written before it ran; ``--set new-held-out``: the second one,
:func:`~gateway.testing.overlap.new_held_out_clips`, written before the hum rule was final;
``--set third-held-out``: the third, :func:`~gateway.testing.overlap.third_held_out_clips`,
written before the join rule was final and run once per transport; ``--set fourth-held-out``:
the fourth, :func:`~gateway.testing.overlap.fourth_held_out_clips`, written before the
backchannel prompt ran on any speech, run once per transport; ``--set fifth-held-out``: the
fifth, :func:`~gateway.testing.overlap.fifth_held_out_clips`, written after the fourth was
looked at, with the rules unchanged, run once per transport; ``--set sixth-held-out``: the
sixth, :func:`~gateway.testing.overlap.sixth_held_out_clips`, written with the agent going on
before the decision in place, run once per transport; ``--set seventh-held-out``: the
seventh, :func:`~gateway.testing.overlap.seventh_held_out_clips`, written with the sixth
pass's rules in place, run once per transport; ``--set eighth-held-out``: the eighth,
:func:`~gateway.testing.overlap.eighth_held_out_clips`, twice their size, written with the
seventh pass's rules in place, run once over the WebSocket; ``--set ninth-held-out``: the
ninth, :func:`~gateway.testing.overlap.ninth_held_out_clips`, the eighth's shape, written once
the eighth was looked at, run once per transport); ``--set flite`` and ``--set flite-held-out``
(``--replay`` only) say the nine sets' backchannels and interruptions in a third synthesizer's
voices (:func:`~gateway.testing.overlap.flite_clips`: slt and awb, looked at; rms and kal16,
held out); ``--set tenth-held-out``: the tenth, written with the eighth pass's rules in place
(:func:`~gateway.testing.overlap.tenth_held_out_clips`, with a fourth synthesizer, Festival);
``--set eleventh-held-out``: the eleventh, written with the ninth pass's rule in place
(:func:`~gateway.testing.overlap.eleventh_held_out_clips`, with Festival's second voice);
``--set twelfth-held-out``: the twelfth, written with the tenth pass's rules in place
(:func:`~gateway.testing.overlap.twelfth_held_out_clips`: short questions, Festival's HTS voice);
``--set thirteenth-held-out``: the thirteenth, written after the twelfth was looked at
(:func:`~gateway.testing.overlap.thirteenth_held_out_clips`);
``--set fourteenth-held-out``: the fourteenth, written after the thirteenth was looked at
(:func:`~gateway.testing.overlap.fourteenth_held_out_clips`: short questions again);
``--set fifteenth-held-out``: the fifteenth, written after the fourteenth was looked at
(:func:`~gateway.testing.overlap.fifteenth_held_out_clips`);
``--set sixteenth-held-out``: the sixteenth, written after the fifteenth was looked at
(:func:`~gateway.testing.overlap.sixteenth_held_out_clips`: requests that begin with a
backchannel's word);
``--set seventeenth-held-out``: the seventeenth, written after the sixteenth was looked at
(:func:`~gateway.testing.overlap.seventeenth_held_out_clips`: slow backchannels in two parts,
short requests that begin with a nasal);
``--set eighteenth-held-out``: the eighteenth, written after the seventeenth was looked at
(:func:`~gateway.testing.overlap.eighteenth_held_out_clips`: requests that begin with a hum, a
filler or a backchannel's word);
``--set nineteenth-held-out``: the nineteenth, written after the eighteenth was looked at
(:func:`~gateway.testing.overlap.nineteenth_held_out_clips`: backchannels the lexicon may not
hold, requests that begin with a backchannel's word);
``--set twentieth-held-out``: the twentieth, written after the nineteenth was looked at
(:func:`~gateway.testing.overlap.twentieth_held_out_clips`: acknowledgements and assessments,
requests that begin with one);
``--set twenty-first-held-out``: the twenty-first, written after the twentieth was looked at
(:func:`~gateway.testing.overlap.twenty_first_held_out_clips`: assents and acknowledgements,
requests that begin with a backchannel's word or hold no stop word);
``--set twenty-second-held-out``: the twenty-second, written after the twenty-first was looked
at (:func:`~gateway.testing.overlap.twenty_second_held_out_clips`: assents, requests that
begin with a backchannel's word or a hum);
``--set twenty-third-held-out``: the twenty-third, written after the twenty-second was looked
at (:func:`~gateway.testing.overlap.twenty_third_held_out_clips`: acknowledgements and
continuers, requests that begin with a backchannel's word or a hum);
``--set twenty-fourth-held-out``: the twenty-fourth, written after the twenty-third was looked
at (:func:`~gateway.testing.overlap.twenty_fourth_held_out_clips`: assents and continuers,
requests that begin with a backchannel's word or a hum or hold no stop word);
``--set twenty-fifth-held-out``: the twenty-fifth, written after the twenty-fourth was looked
at (:func:`~gateway.testing.overlap.twenty_fifth_held_out_clips`: assents and assessments,
requests that begin with a backchannel's word or a hum or hold no stop word);
``--set twenty-sixth-held-out``: the twenty-sixth, written after the twenty-fifth was looked
at (:func:`~gateway.testing.overlap.twenty_sixth_held_out_clips`: assents, assessments and
acknowledgements, requests that begin with a backchannel's word or a hum or hold no stop word);
``--set twenty-seventh-held-out``: the twenty-seventh, written after the twenty-sixth was
looked at (:func:`~gateway.testing.overlap.twenty_seventh_held_out_clips`: assents,
assessments and acknowledgements, requests that begin with a backchannel's word or a hum or
hold no stop word);
``--set twenty-eighth-held-out``: the twenty-eighth, written after the twenty-seventh was
looked at (:func:`~gateway.testing.overlap.twenty_eighth_held_out_clips`: a listener's
comments and assessments, requests some of which are a statement);
``--set twenty-ninth-held-out``: the twenty-ninth, written after a listener's comment was made
a backchannel by its form (:func:`~gateway.testing.overlap.twenty_ninth_held_out_clips`:
comments in words the rule may not hold, requests some of which are a statement);
``--set thirtieth-held-out`` and ``--set thirty-first-held-out``: written by someone who did not
know the rules (:func:`~gateway.testing.overlap.thirtieth_held_out_clips`: listeners' comments
and idioms, requests that are a correction or a statement); ``--set thirty-second-held-out``
to ``thirty-fifth-held-out``: four more written so, the last two unread by the rules' writer
(:func:`~gateway.testing.overlap.thirty_second_held_out_clips`);
``--set thirty-sixth-held-out`` to ``thirty-ninth-held-out``: four written so and
inserted by a script, unread by the rules' writer before their runs
(:func:`~gateway.testing.overlap.thirty_sixth_held_out_clips`);
``--set continuations`` says each request of
:data:`gateway.testing.overlap.CONTINUATIONS` in two parts (piper and espeak-ng en-us; 500 and
800 ms between them; over either transport) and prints the share **answered once with the
whole request**: one transcript shown (the whole request, the first part replaced), one answer
after it, holding the last word of each part.

Run ``scripts/bench_interruptions.py`` (``--limit N`` for a quick look, ``--url`` for a gateway
already running; its log is then not read). ``--replay`` decides the chosen set offline instead
(:mod:`gateway.testing.overlap_replay`: the VAD, the turn-taker and Whisper, no server; no echo
trials, no times), in a minute or two, to compare rules on looked-at sets; ``--decode-lag-ms``
answers its decodes as late as a slower recogniser would. Latency figures depend on the
machine's load: the report prints ``uptime`` before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import itertools
import re
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np

from gateway.audio import SAMPLE_RATE
from gateway.audio.echo import EchoGuard, similarity
from gateway.render.ssml import EMPHASIS
from gateway.testing.overlap import (
    CONTINUATIONS,
    FLITE_HELD_OUT,
    FLITE_LOOKED_AT,
    Clip,
    ContinuationTrial,
    OverlapTrial,
    clips,
    eighteenth_held_out_clips,
    eighth_held_out_clips,
    eleventh_held_out_clips,
    fifteenth_held_out_clips,
    fifth_held_out_clips,
    flite_clips,
    fortieth_held_out_clips,
    forty_eighth_held_out_clips,
    forty_fifth_held_out_clips,
    forty_first_held_out_clips,
    forty_fourth_held_out_clips,
    forty_second_held_out_clips,
    forty_seventh_held_out_clips,
    forty_sixth_held_out_clips,
    forty_third_held_out_clips,
    fourteenth_held_out_clips,
    fourth_held_out_clips,
    held_out_clips,
    new_held_out_clips,
    nineteenth_held_out_clips,
    ninth_held_out_clips,
    say_in_parts,
    seventeenth_held_out_clips,
    seventh_held_out_clips,
    sixteenth_held_out_clips,
    sixth_held_out_clips,
    speech,
    talk_over,
    tenth_held_out_clips,
    third_held_out_clips,
    thirteenth_held_out_clips,
    thirtieth_held_out_clips,
    thirty_eighth_held_out_clips,
    thirty_fifth_held_out_clips,
    thirty_first_held_out_clips,
    thirty_fourth_held_out_clips,
    thirty_ninth_held_out_clips,
    thirty_second_held_out_clips,
    thirty_seventh_held_out_clips,
    thirty_sixth_held_out_clips,
    thirty_third_held_out_clips,
    twelfth_held_out_clips,
    twentieth_held_out_clips,
    twenty_eighth_held_out_clips,
    twenty_fifth_held_out_clips,
    twenty_first_held_out_clips,
    twenty_fourth_held_out_clips,
    twenty_ninth_held_out_clips,
    twenty_second_held_out_clips,
    twenty_seventh_held_out_clips,
    twenty_sixth_held_out_clips,
    twenty_third_held_out_clips,
)
from gateway.testing.overlap_replay import DECODE_CHUNKS
from gateway.testing.overlap_webrtc import say_in_parts_webrtc, talk_over_webrtc
from gateway.testing.processes import PARROT_ON_LOOPBACK, start_gateway
from gateway.testing.speech import normalise, piper_variant
from gateway.voice.vad import CHUNK_MS

#: Words the session found the agent had said (gateway/proxy/listening.py): a read-back.
_READ_BACK = re.compile(r"overlap: ['\"](.*?)['\"] reads back what the agent said")
#: A decision in the serve log (gateway/proxy/session.py); the words are a repr, in double quotes
#: when they hold an apostrophe ("okay i'd understand"), which the report once left out.
_DECISION = re.compile(
    r"overlap: (\w+) by ([\w ]+) on ['\"](.*)['\"] after (\d+) ms of voice, (\d+) ms after it "
    r"began, decodes (\d+) ms(; joined)?"
)
ECHO_LAGS_MS = (50, 150, 250)


#: How the trials reach the gateway: PCM on the WebSocket, or RTP (Opus) over WebRTC.
TRANSPORTS = {"ws": talk_over, "webrtc": talk_over_webrtc}
#: The sets ``--set`` plays, by name: the tuning set, then the held-out ones in the order they
#: were written (each looked at once the next was written).
SETS = {
    "tuning": clips,
    "held-out": held_out_clips,
    "new-held-out": new_held_out_clips,
    "third-held-out": third_held_out_clips,
    "fourth-held-out": fourth_held_out_clips,
    "fifth-held-out": fifth_held_out_clips,
    "sixth-held-out": sixth_held_out_clips,
    "seventh-held-out": seventh_held_out_clips,
    "eighth-held-out": eighth_held_out_clips,
    "ninth-held-out": ninth_held_out_clips,
    "tenth-held-out": tenth_held_out_clips,
    "eleventh-held-out": eleventh_held_out_clips,
    "twelfth-held-out": twelfth_held_out_clips,
    "thirteenth-held-out": thirteenth_held_out_clips,
    "fourteenth-held-out": fourteenth_held_out_clips,
    "fifteenth-held-out": fifteenth_held_out_clips,
    "sixteenth-held-out": sixteenth_held_out_clips,
    "seventeenth-held-out": seventeenth_held_out_clips,
    "eighteenth-held-out": eighteenth_held_out_clips,
    "nineteenth-held-out": nineteenth_held_out_clips,
    "twentieth-held-out": twentieth_held_out_clips,
    "twenty-first-held-out": twenty_first_held_out_clips,
    "twenty-second-held-out": twenty_second_held_out_clips,
    "twenty-third-held-out": twenty_third_held_out_clips,
    "twenty-fourth-held-out": twenty_fourth_held_out_clips,
    "twenty-fifth-held-out": twenty_fifth_held_out_clips,
    "twenty-sixth-held-out": twenty_sixth_held_out_clips,
    "twenty-seventh-held-out": twenty_seventh_held_out_clips,
    "twenty-eighth-held-out": twenty_eighth_held_out_clips,
    "twenty-ninth-held-out": twenty_ninth_held_out_clips,
    "thirtieth-held-out": thirtieth_held_out_clips,
    "thirty-first-held-out": thirty_first_held_out_clips,
    "thirty-second-held-out": thirty_second_held_out_clips,
    "thirty-third-held-out": thirty_third_held_out_clips,
    "thirty-fourth-held-out": thirty_fourth_held_out_clips,
    "thirty-fifth-held-out": thirty_fifth_held_out_clips,
    "thirty-sixth-held-out": thirty_sixth_held_out_clips,
    "thirty-seventh-held-out": thirty_seventh_held_out_clips,
    "thirty-eighth-held-out": thirty_eighth_held_out_clips,
    "thirty-ninth-held-out": thirty_ninth_held_out_clips,
    "fortieth-held-out": fortieth_held_out_clips,
    "forty-first-held-out": forty_first_held_out_clips,
    "forty-second-held-out": forty_second_held_out_clips,
    "forty-third-held-out": forty_third_held_out_clips,
    "forty-fourth-held-out": forty_fourth_held_out_clips,
    "forty-fifth-held-out": forty_fifth_held_out_clips,
    "forty-sixth-held-out": forty_sixth_held_out_clips,
    "forty-seventh-held-out": forty_seventh_held_out_clips,
    "forty-eighth-held-out": forty_eighth_held_out_clips,
}


#: The sets whose sentences flite says: the ten the ninth pass chose its rule on (the eleventh,
#: held out, is not said in flite's voices).
FLITE_SOURCES = tuple(list(SETS)[: list(SETS).index("tenth-held-out") + 1])


def _flite(voices: tuple[str, ...]) -> Callable[[], list[Clip]]:
    return lambda: flite_clips(voices, [SETS[name]() for name in FLITE_SOURCES])


#: The ten sets' backchannels and interruptions in flite's voices (``--replay`` only).
FLITE_SETS = {"flite": _flite(FLITE_LOOKED_AT), "flite-held-out": _flite(FLITE_HELD_OUT)}


#: How long after the reply's first sentence a clip said over it (:attr:`Clip.reply`) begins:
#: in the agent's pause between sentences, as a listener answers what they just heard.
REPLY_GAP_S = 0.2
#: The break the parrot's SSML puts after "You said:" (gateway/agents/builtin/parrot.py).
PARROT_BREAK_S = 0.3


def reply_at_s(first: str) -> float:
    """When a clip over a reply begins, from the reply's start: the parrot's first sentence as
    the gateway says it (piper's packaged voice: "You said:", its SSML break, the sentence at
    the rate of its emphasis), and :data:`REPLY_GAP_S`."""
    said = len(piper_variant("You said:")) / SAMPLE_RATE + PARROT_BREAK_S
    rate = EMPHASIS["moderate"][0]
    return said + len(piper_variant(first)) / SAMPLE_RATE / rate + REPLY_GAP_S


def run_trial(url: str, clip: Clip, index: int, transport: str = "ws") -> OverlapTrial:
    """One clip over the reply (the echo case: the agent's own audio, no clip), over
    ``transport`` (a key of :data:`TRANSPORTS`)."""
    trial = TRANSPORTS[transport]
    if clip.reply is not None:
        first, rest = clip.reply
        return asyncio.run(trial(url, clip.audio, at_s=reply_at_s(first), reply=f"{first} {rest}"))
    if clip.kind == "echo":
        db = float(clip.voice.split()[0])
        lag = ECHO_LAGS_MS[index % len(ECHO_LAGS_MS)]
        return asyncio.run(trial(url, clip.audio, echo_db=db, echo_lag_ms=lag))
    return asyncio.run(trial(url, clip.audio))


def _ms(values: list[float]) -> str:
    if not values:
        return "—"
    values = sorted(v * 1000 for v in values)
    return f"median {statistics.median(values):.0f} ms, worst {values[-1]:.0f} ms (n={len(values)})"


def report(results: list[tuple[Clip, OverlapTrial]], log: Path | None) -> str:
    """The figures (see the module's docstring) as text."""
    lines = []
    not_meant = [(c, t) for c, t in results if c.kind != "interruption"]
    meant = [(c, t) for c, t in results if c.kind == "interruption"]
    false = [
        (c, t) for c, t in not_meant if t.outcome() == "stopped" or t.flushed_at or t.transcripts
    ]
    missed = [(c, t) for c, t in meant if t.outcome() != "stopped"]
    lines.append(f"trials: {len(results)} ({Counter(c.kind for c, _ in results)})")
    lines.append(
        f"false stops (backchannel, noise, echo): {len(false)}/{len(not_meant)} "
        f"({100 * len(false) / max(1, len(not_meant)):.1f} %)"
    )
    for c, t in false:
        lines.append(f"  {c.kind} {c.name!r} ({c.voice}): {t.outcome()} {t.why()} {t.transcripts}")
    lines.append(f"missed interruptions: {len(missed)}/{len(meant)}")
    for c, t in missed:
        lines.append(f"  {c.name!r} ({c.voice}): {t.outcome()} {t.why()}")
    by_kind: dict[str, Counter[str]] = {}
    for c, t in results:
        by_kind.setdefault(c.kind, Counter())[f"{t.outcome()}/{t.why()}"] += 1
    for kind, outcomes in by_kind.items():
        lines.append(f"  {kind}: {dict(outcomes)}")
    quiet = [q for _, t in results if (q := t.quiet_at()) is not None and q >= 0]
    lines.append(f"quiet after the speech onset (paused or flushed): {_ms(quiet)}")
    lines.append(
        "  interruptions: "
        + _ms([q for _, t in meant if (q := t.quiet_at()) is not None and q >= 0])
    )
    lines.append(
        "stop decided (flush) after the onset, interruptions: "
        + _ms([t.flushed_at for _, t in meant if t.flushed_at is not None])
    )
    resumed = [t for _, t in results if t.outcome() == "resumed"]
    silent = [s for t in resumed if (s := t.silent_s()) is not None]
    lines.append(f"silent while paused, then resumed: {_ms(silent)}")
    over = [s for s in silent if s > 0.7]
    lines.append(f"  resumed after more than 700 ms: {len(over)}/{len(silent)}")
    # An interruption that began with backchannels ("Okay, | stop there."): the agent went on
    # after them (OverlapSettings.go_on), then stopped; how long it was heard again (to its
    # stop, or to its pause again: go_on_ms).
    went_on = [
        min([t.flushed_at, *(w for w, m in t.playback if m["outcome"] == "paused" and w > r[0])])
        - r[0]
        for _, t in meant
        if t.flushed_at is not None
        and (r := [w for w, m in t.playback if m["outcome"] == "resumed"])
    ]
    lines.append(
        f"interruptions that went on before their stop: {len(went_on)}/{len(meant)}"
        + (f", heard again for {_ms(went_on)}" if went_on else "")
    )

    # Went on, then paused again because the person kept talking (OverlapSettings.go_on_ms):
    # a pause right after a resume that was not a decision (no why). A pause after a decided
    # resume is a second overlap (a backchannel's second half), counted apart.
    def paused_after(t: OverlapTrial, early: bool) -> bool:
        outcomes = [(m["outcome"], bool(m.get("why"))) for _, m in t.playback]
        return any(
            a == ("resumed", not early) and b[0] == "paused"
            for a, b in itertools.pairwise(outcomes)
        )

    again = Counter(c.kind for c, t in results if paused_after(t, early=True))
    second = Counter(c.kind for c, t in results if paused_after(t, early=False))
    lines.append(f"paused again after going on, by kind: {dict(again) or 'none'}")
    lines.append(f"paused again by a second overlap, by kind: {dict(second) or 'none'}")
    lines.append(
        "no pause at all: "
        + str(Counter(c.kind for c, t in results if t.paused_at() is None and not t.flushed_at))
    )
    if log is not None and log.exists():
        decisions = _DECISION.findall(log.read_text())
        whys = Counter(f"{kind} by {why}" for kind, why, *_ in decisions)
        lines.append(f"decisions in the serve log: {len(decisions)}")
        for why, n in whys.most_common():
            lines.append(f"  {why}: {n} ({100 * n / len(decisions):.0f} %)")
        lines.append("each decision, in order (kind, why, words, ms of voice):")
        for kind, why, text, voiced, *_, joined in decisions:
            lines.append(f"  {kind} by {why} on {text!r} after {voiced} ms{joined}")
        joins = sum(1 for d in decisions if d[-1])
        lines.append(f"judged with the backchannel before (join_ms): {joins}")
        # gateway/proxy/listening.py's line for words read back (feedback, the reader unasked).
        read_back = _READ_BACK.findall(log.read_text())
        lines.append(f"words read back, the feedback reader not asked: {len(read_back)}")
        lines.extend(f"  {words!r}" for words in read_back)
        spent = [int(d[5]) for d in decisions if d[0] != "echo"]
        if spent:
            lines.append(
                f"decoding per overlap: mean {statistics.mean(spent):.0f} ms, median "
                f"{statistics.median(spent):.0f} ms (one inference thread: about its CPU time)"
            )
    lines.append(f"echo guard: {_guard_cpu_ms():.2f} CPU-ms per check (one per voiced chunk)")
    lines.append(
        f"hum signal: {_hum_cpu_ms():.1f} CPU-ms per stop of a short overlap (1 s of audio)"
    )
    return "\n".join(lines)


def _hum_cpu_ms(checks: int = 50) -> float:
    """CPU time of the hum features of one short overlap at its longest: its head (256 ms),
    ``hum_max_ms`` of voice (800 ms) and the first silent chunk, about 1.1 s."""
    from gateway.audio.hum import hum_features

    rng = np.random.default_rng(0)
    audio = (3000 * rng.standard_normal(17_600)).astype(np.int16)
    start = time.process_time()
    for _ in range(checks):
        hum_features(audio)
    return (time.process_time() - start) * 1000 / checks


def _guard_cpu_ms(checks: int = 200) -> float:
    """CPU time of one echo check at the guard's sizes (its window against the window and the
    longest lag, at 8 kHz)."""
    guard = EchoGuard(24_000)
    rng = np.random.default_rng(0)
    mic = rng.standard_normal(guard.window)
    reference = rng.standard_normal(int((guard.max_lag_s + guard.window_s) * 8000))
    start = time.process_time()
    for _ in range(checks):
        similarity(mic, reference)
    return (time.process_time() - start) * 1000 / checks


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def whole_once(first: str, second: str, trial: ContinuationTrial) -> bool:
    """Whether a request said in two parts was answered once with the whole request."""
    last = {normalise(first)[-1], normalise(second)[-1]}
    shown = trial.shown()
    return (
        len(shown) == 1
        and last <= set(normalise(shown[0]))
        and len(trial.answered) == 1
        and last <= set(normalise(trial.answered[0]))
    )


#: How a request in two parts reaches the gateway, by ``--transport``.
SAY_IN_PARTS = {"ws": say_in_parts, "webrtc": say_in_parts_webrtc}


def run_continuations(url: str, limit: int | None, transport: str = "ws") -> int:
    """Each request in two parts; the share answered once with the whole request."""
    requests = CONTINUATIONS[:limit] if limit else CONTINUATIONS
    say = SAY_IN_PARTS[transport]
    done = right = 0
    for voice in ("piper", "en-us"):
        for gap in (500, 800):
            for first, second in requests:
                trial = asyncio.run(
                    say(url, speech(first, voice), speech(second, voice), gap_ms=gap)
                )
                ok = whole_once(first, second, trial)
                done, right = done + 1, right + ok
                print(
                    f"{voice:6} {gap} ms {first!r} | {second!r}: {'once, whole' if ok else 'NO'} "
                    f"shown {trial.shown()} answered {trial.answered}",
                    flush=True,
                )
    print(f"answered once with the whole request: {right}/{done} ({100 * right / done:.0f} %)")
    return 0


#: What a clip is to be decided as (:class:`gateway.testing.overlap.Clip`'s ``kind``).
KINDS = ("backchannel", "noise", "interruption", "echo")


def select(chosen: list[Clip], limit: int | None, kinds: list[str] | None) -> list[Clip]:
    """The clips of ``kinds`` (None: all), at most ``limit`` of each kind, in order."""
    seen: Counter[str] = Counter()
    out = []
    for clip in chosen:
        if kinds and clip.kind not in kinds:
            continue
        seen[clip.kind] += 1
        if not limit or seen[clip.kind] <= limit:
            out.append(clip)
    return out


def main(argv: list[str] | None = None) -> int:
    """``scripts/bench_interruptions.py``: run every clip, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a gateway's /ws already running (default: start one)")
    parser.add_argument("--limit", type=int, help="only the first N clips of each kind")
    parser.add_argument(
        "--set",
        choices=(*SETS, *FLITE_SETS, "continuations"),
        default="tuning",
        help="which clips (default: the tuning set the rules were adjusted on)",
    )
    parser.add_argument(
        "--kind",
        action="append",
        choices=KINDS,
        help="only the clips of this kind (repeatable; default: all): a set in parts, each "
        "run under 8 minutes",
    )
    parser.add_argument(
        "--transport",
        choices=tuple(TRANSPORTS),
        default="ws",
        help="how the clips and the agent's audio travel: PCM on the WebSocket (default) or "
        "RTP over WebRTC (an aiortc client)",
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="decide the clips offline (VAD, turn-taker, Whisper; no server, no echo trials, "
        "no times) and print false stops and missed interruptions",
    )
    parser.add_argument(
        "--decode-lag-ms",
        type=int,
        default=None,
        metavar="MS",
        help="(--replay only) answer each overlap decode this long after it was asked (default "
        f"{DECODE_CHUNKS * CHUNK_MS} ms); 400 is a recogniser as slow as a busy CPU makes it live",
    )
    args = parser.parse_args(argv)
    if args.decode_lag_ms is not None and (not args.replay or args.decode_lag_ms < 0):
        parser.error("--decode-lag-ms is for --replay, and at least 0")
    if args.replay and (args.set == "continuations" or args.url or args.transport != "ws"):
        parser.error("--replay plays no continuations and needs no --url or --transport")
    if args.set in FLITE_SETS and not args.replay:
        parser.error(f"--set {args.set} has no noises or echo and is decided offline: add --replay")
    if args.set == "continuations":
        print(f"transport: {args.transport}; load before: {_uptime()}", flush=True)
        with tempfile.TemporaryDirectory() as tmp:
            served = None if args.url else start_gateway(Path(tmp), *PARROT_ON_LOOPBACK)
            try:
                url = args.url or (served.ws if served else "")
                run_continuations(url, args.limit, args.transport)
            finally:
                if served is not None:
                    served.stop()
        print(f"load after: {_uptime()}")
        return 0
    chosen = select({**SETS, **FLITE_SETS}[args.set](), args.limit, args.kind)
    if args.replay:
        lag = DECODE_CHUNKS * CHUNK_MS if args.decode_lag_ms is None else args.decode_lag_ms
        return _replay(chosen, max(1, round(lag / CHUNK_MS)))
    print(f"transport: {args.transport}; load before: {_uptime()}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        served = None if args.url else start_gateway(Path(tmp), *PARROT_ON_LOOPBACK)
        url = args.url or (served.ws if served else "")
        results = []
        try:
            for i, clip in enumerate(chosen):
                trial = run_trial(url, clip, i, args.transport)
                results.append((clip, trial))
                print(
                    f"{clip.kind:12} {clip.name!r:42} {clip.voice:8} -> {trial.outcome():8} "
                    f"{trial.why() or '':12} quiet {trial.quiet_at()} silent {trial.silent_s()}",
                    flush=True,
                )
        finally:
            if served is not None:
                served.stop()
        print(f"load after: {_uptime()}")
        print(report(results, None if served is None else served.log))
    return 0


def _replay(chosen: list[Clip], decode_chunks: int) -> int:
    from gateway.proxy.models import second_reader
    from gateway.server.cli import ServeSettings
    from gateway.testing.overlap_replay import replay_clips, summary
    from gateway.voice.feedback import default_feedback
    from gateway.voice.stt import Partial, Transcriber

    print(f"replaying {len(chosen)} clips offline (loading Whisper)…", flush=True)
    transcriber = Transcriber()
    served = ServeSettings()  # the recognisers serve loads by default
    again = second_reader(served.stt, served.second_stt_model)
    print(f"second reader: {again.settings.model if again else 'none (not installed)'}")
    reader = default_feedback() if served.feedback_reader else None
    if reader is not None:
        reader.warm_up()
    print(f"feedback reader: {'loaded' if reader else 'none (not installed)'}")
    print(f"each decode answered {decode_chunks * CHUNK_MS} ms after it was asked")

    async def decode(
        audio: np.ndarray, prompt: str | None, beam: int, within: tuple[str, ...]
    ) -> Partial:
        return await transcriber.transcribe_partial(audio, prompt=prompt, beam=beam, within=within)

    async def read_again(
        audio: np.ndarray, prompt: str | None, beam: int, within: tuple[str, ...]
    ) -> Partial:
        assert again is not None
        return await again.transcribe_partial(audio, prompt=prompt, beam=beam)

    async def feedback(said: list[str]) -> float | None:
        assert reader is not None
        # Offline no deadline is real: the reader is waited for (a live one gives up).
        return await asyncio.to_thread(functools.partial(reader.score, said, timeout_ms=10_000))

    second = read_again if again else None
    results = replay_clips(
        chosen,
        decode,
        second=second,
        decode_chunks=decode_chunks,
        feedback=feedback if reader else None,
    )
    for clip, r in results:
        print(f"{clip.kind:12} {clip.name!r:42} {clip.voice:15} -> {r.kind:12} {r.why}", flush=True)
    print(summary(results))
    return 0
