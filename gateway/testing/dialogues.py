"""The dialogue benchmark: short multi-turn conversations with the default agents, each turn with
a check on what a person needed to hear (whoever says it), typed and spoken through ``talk``'s
own classes (gateway/talk/), for scripts/bench_dialogue.py.

The set was written for issue 39 before anything ran on it: time, date and weekday; facts a
small model knows; what the person said earlier; the named agent only; hand-overs; follow-ups.
A check reads every agent line that answers the turn (``Reply``), so it does not matter who says
it — except for the named-agent checks, which are about who.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from gateway.agents.builtin.assistant import Assistant
from gateway.agents.directory import AgentDirectory
from gateway.llm.client import ChatMessage
from gateway.llm.errors import LlmError
from gateway.proxy.addressing import is_follow_up
from gateway.proxy.events import Transcribed
from gateway.proxy.models import VoiceModels
from gateway.proxy.session import VoiceSession
from gateway.proxy.settings import SessionSettings
from gateway.talk.text import Talk
from gateway.talk.voice import feed_audio, overhear

#: The agents ``serve`` opens with.
DEFAULT_AGENTS = ("builtin:parrot", "builtin:clock", "builtin:concierge", "builtin:assistant")


@dataclass(frozen=True)
class Reply:
    """What answered one turn: each agent line as (speaker, text), and the floor's notices."""

    lines: tuple[tuple[str, str], ...]
    notices: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        return " ".join(t for _, t in self.lines)

    @property
    def speakers(self) -> set[str]:
        return {s for s, _ in self.lines}


#: A check: the reply and the time the turn was said (aware, the machine's zone) → right or not.
Check = Callable[[Reply, datetime], bool]


def _clock_time(at: datetime) -> set[str]:
    """The ways "5:04 PM" may be written, for ``at`` and the minute before (it may turn)."""
    out = set()
    for t in (at, at - timedelta(minutes=1)):
        h = t.hour % 12 or 12
        out |= {f"{h}:{t.minute:02d}", f"{t.hour:02d}:{t.minute:02d}", f"{t.hour}:{t.minute:02d}"}
    return out


def time_now() -> Check:
    """The time now (to the minute)."""
    return lambda r, at: any(s in r.text for s in _clock_time(at))


def weekday(days: int = 0) -> Check:
    """The weekday, ``days`` from today."""
    return lambda r, at: f"{(at + timedelta(days=days)):%A}".lower() in r.text.lower()


def date(days: int = 0) -> Check:
    """The month and day, ``days`` from today."""

    def check(r: Reply, at: datetime) -> bool:
        d = at + timedelta(days=days)
        text = r.text.lower()
        return (
            f"{d:%B}".lower() in text and re.search(rf"\b{d.day}(st|nd|rd|th)?\b", text) is not None
        )

    return check


def says(*words: str) -> Check:
    """One of ``words`` (case-insensitive, whole words)."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return lambda r, at: pattern.search(r.text) is not None


def answered() -> Check:
    """Anyone said anything (a statement acknowledged, a question not met with silence)."""
    return lambda r, at: bool(r.lines)


def only(name: str, also: Check | None = None) -> Check:
    """Only ``name`` answered (and ``also`` holds)."""
    return lambda r, at: r.speakers == {name} and (also is None or also(r, at))


def not_from(name: str, also: Check) -> Check:
    """Someone other than ``name`` answered, and ``also`` holds."""
    return lambda r, at: bool(r.lines) and r.speakers != {name} and also(r, at)


def both(a: Check, b: Check) -> Check:
    return lambda r, at: a(r, at) and b(r, at)


@dataclass(frozen=True)
class Turn:
    """What the person says, the category of its check, and the check."""

    text: str
    category: str
    check: Check


def _c(*turns: tuple[str, str, Check]) -> tuple[Turn, ...]:
    return tuple(Turn(*t) for t in turns)


#: The categories, in the order reported.
CATEGORIES = (
    "time",
    "date",
    "weekday",
    "knowledge",
    "remembered",
    "named",
    "handover",
    "followup",
    "grounded",
    "ack",
)

#: The conversations (45, 70 turns). Written before any ran; not tuned to what the model says.
CONVERSATIONS: tuple[tuple[Turn, ...], ...] = (
    # time, date and weekday, unaddressed, after talking with others
    _c(("What time is it?", "time", time_now())),
    _c(
        ("What is the capital of Spain?", "knowledge", says("Madrid")),
        ("What time is it now?", "time", time_now()),
    ),
    _c(
        ("Parrot, repeat after me: hello there.", "named", only("Parrot", says("hello there"))),
        ("What's the date today?", "date", date()),
    ),
    _c(("What day of the week is it?", "weekday", weekday())),
    _c(
        ("Tell me a fun fact about cats.", "ack", answered()),
        ("And what's today's date?", "date", date()),
    ),
    _c(("What day is it tomorrow?", "weekday", weekday(1))),
    _c(
        ("Clock, what time is it?", "named", only("Clock", time_now())),
        ("What about tomorrow?", "weekday", weekday(1)),
    ),
    _c(("Could you tell me the time please?", "time", time_now())),
    _c(("Which day is it today?", "weekday", weekday())),
    _c(
        ("My name is Lena.", "ack", answered()),
        ("What is today's date?", "date", date()),
    ),
    # facts a small model knows
    _c(("How many legs does a spider have?", "knowledge", says("eight", "8"))),
    _c(("What color is the sky on a clear day?", "knowledge", says("blue"))),
    _c(("What is the opposite of hot?", "knowledge", says("cold"))),
    _c(("Which planet do we live on?", "knowledge", says("Earth"))),
    _c(("What is two plus two?", "knowledge", says("four", "4"))),
    _c(("How many minutes are there in an hour?", "knowledge", says("sixty", "60"))),
    _c(("What animal says moo?", "knowledge", says("cow", "cows"))),
    _c(("What do bees make?", "knowledge", says("honey"))),
    # what the person said earlier
    _c(
        ("My name is Ada.", "ack", answered()),
        ("What is my name?", "remembered", says("Ada")),
    ),
    _c(
        ("Hi, I'm Bob.", "ack", answered()),
        ("What's my name?", "remembered", says("Bob")),
    ),
    _c(
        ("Call me Grace.", "ack", answered()),
        ("What is the capital of France?", "knowledge", says("Paris")),
        ("Do you remember my name?", "remembered", says("Grace")),
    ),
    _c(
        ("I live in Lisbon.", "ack", answered()),
        ("Where do I live?", "remembered", says("Lisbon")),
    ),
    _c(
        ("My favourite colour is green.", "ack", answered()),
        ("What is my favourite colour?", "remembered", says("green")),
    ),
    _c(
        ("My name is Omar.", "ack", answered()),
        ("Clock, what time is it?", "named", only("Clock", time_now())),
        ("What is my name?", "remembered", says("Omar")),
    ),
    _c(
        ("I'm from Kenya.", "ack", answered()),
        ("Where am I from?", "remembered", says("Kenya")),
    ),
    _c(
        ("I am 30 years old.", "ack", answered()),
        ("How old am I?", "remembered", says("30", "thirty")),
    ),
    # the named agent only
    _c(("Parrot, say blue bananas.", "named", only("Parrot", says("blue bananas")))),
    _c(("Clock, what is the date?", "named", only("Clock", date()))),
    _c(("Concierge, which agents are there?", "named", only("Concierge"))),
    _c(("Parrot, what time is it?", "named", only("Parrot", says("what time is it")))),
    _c(("What time is it, parrot?", "named", only("Parrot"))),
    _c(("Assistant, what is the capital of France?", "named", only("Assistant", says("Paris")))),
    # hand-overs: a specialist asked what it cannot answer
    _c(
        ("What time is it?", "time", time_now()),
        ("How was your day?", "handover", not_from("Clock", answered())),
    ),
    _c(
        ("Clock, what time is it?", "named", only("Clock", time_now())),
        ("What is the capital of Italy?", "handover", not_from("Clock", says("Rome"))),
    ),
    _c(
        ("Parrot, repeat after me: blue bananas.", "named", only("Parrot", says("blue bananas"))),
        (
            "How many minutes are there in two hours?",
            "handover",
            not_from("Parrot", says("120", "one hundred and twenty", "hundred twenty")),
        ),
    ),
    _c(
        ("Parrot, repeat after me: green apples.", "named", only("Parrot", says("green apples"))),
        ("What is two plus two?", "handover", not_from("Parrot", says("four", "4"))),
    ),
    _c(("How many days are there in a week?", "handover", not_from("Clock", says("seven", "7")))),
    # follow-ups
    _c(
        ("What is the capital of France?", "knowledge", says("Paris")),
        ("And Germany?", "followup", says("Berlin")),
    ),
    _c(
        ("What is the capital of Spain?", "knowledge", says("Madrid")),
        ("What about Portugal?", "followup", says("Lisbon")),
    ),
    _c(
        ("What's the date today?", "date", date()),
        ("And tomorrow?", "followup", weekday(1)),
    ),
    _c(
        ("What time is it?", "time", time_now()),
        ("And the date?", "followup", date()),
    ),
    _c(
        ("What day is it today?", "weekday", weekday()),
        ("What about yesterday?", "followup", weekday(-1)),
    ),
    _c(
        ("What language do they speak in France?", "knowledge", says("French")),
        ("And in Spain?", "followup", says("Spanish")),
    ),
    # the assistant named for the time: only its grounding can answer
    _c(("Assistant, what time is it?", "grounded", only("Assistant", time_now()))),
    _c(("Assistant, what day of the week is it?", "grounded", only("Assistant", weekday()))),
)


@dataclass
class TurnResult:
    """One turn as run: what was said (and heard, spoken), what answered, whether right."""

    text: str
    category: str
    right: bool
    reply: Reply
    heard: str | None = None
    timings: dict[str, Any] = field(default_factory=dict)
    #: Agent lines delivered but not left to the person: they answered the first part of a
    #: request the person went on with (a continuation), dropped unplayed and taken off the page.
    withdrawn: tuple[tuple[str, str], ...] = ()
    #: The check on every line delivered, withdrawn ones too (None: nothing was withdrawn).
    right_delivered: bool | None = None


def _split(lines: Sequence[tuple[str, str]], user: str) -> list[list[tuple[str, str]]]:
    """The agent lines after each of the person's lines."""
    turns: list[list[tuple[str, str]]] = []
    for who, text in lines:
        if who == user:
            turns.append([])
        elif turns:
            turns[-1].append((who, text))
    return turns


async def typed(
    conversation: Sequence[Turn],
    directory: AgentDirectory,
    *,
    agents: Sequence[str] = DEFAULT_AGENTS,
    timeout: float = 60.0,
    rewrite: Callable[[Talk, str], Any] | None = None,
) -> list[TurnResult]:
    """One conversation typed (``talk --text``): each turn said once the replies to the one
    before have come."""
    talk = Talk(directory)
    out: list[TurnResult] = []
    try:
        await talk.start(list(agents), "bench", timeout)
        for turn in conversation:
            before = len(talk.result.lines)
            notices = len(talk.result.notices)
            at = datetime.now().astimezone()
            await talk.utter(turn.text, timeout)
            lines = tuple(
                (w, t) for w, t in talk.result.lines[before:] if w != talk.user.display_name
            )
            reply = Reply(lines, tuple(n.text for n in talk.result.notices[notices:]))
            out.append(TurnResult(turn.text, turn.category, turn.check(reply, at), reply))
    finally:
        await talk.finish()
    return out


async def spoken(
    conversation: Sequence[Turn],
    pcms: Sequence[np.ndarray],
    directory: AgentDirectory,
    models: VoiceModels,
    *,
    agents: Sequence[str] = DEFAULT_AGENTS,
    timeout: float = 60.0,
    tail: np.ndarray | None = None,
) -> list[TurnResult]:
    """One conversation spoken (``talk --wav``'s path: a voice session paced in real time), each
    turn's audio fed once everything before it was said and played."""
    talk = Talk(directory)
    session: VoiceSession | None = None
    collector: asyncio.Task[None] | None = None
    out: list[TurnResult] = []
    # The check judges what the person is left with, as the page shows it (web/state.js
    # `replaced`): when a continuation's whole request replaces its first part, what answered
    # the first part was dropped unplayed and leaves the page. Each utterance's mark is the
    # number of lines delivered when it was sent; a replacement withdraws the lines since.
    marks: dict[str, int] = {}
    withdrawn: set[int] = set()

    def on_event(event: object) -> None:
        if isinstance(event, Transcribed) and event.id is not None:
            now = len(talk.result.lines)
            if event.replaces is not None and event.replaces in marks:
                withdrawn.update(range(marks[event.replaces], now))
            marks[event.id] = now

    try:
        await talk.start(list(agents), "bench (spoken)", timeout)
        session = VoiceSession(
            talk.conv,
            models,
            on_event=on_event,
            fetch=directory.client.fetch,
            settings=SessionSettings(out_rate=22_050, paced=True),
        )
        overhear(talk, session)
        session_ = session

        async def drain() -> None:
            async for _ in session_.playout:
                pass

        collector = asyncio.get_running_loop().create_task(drain())
        for turn, pcm in zip(conversation, pcms, strict=True):
            before = len(talk.result.lines)
            timed = len(session.timings)
            heard = len(session.transcripts)
            at = datetime.now().astimezone()
            audio = pcm if tail is None else np.concatenate([pcm, tail])
            await feed_audio(session, audio, paced=True)
            await session.wait_quiet(timeout)
            delivered = list(enumerate(talk.result.lines))[before:]
            reply = Reply(tuple(line for i, line in delivered if i not in withdrawn))
            gone = tuple(line for i, line in delivered if i in withdrawn)
            said = list(session.transcripts)[heard:]
            timings = [t.as_ms() for t in list(session.timings)[timed:]]
            out.append(
                TurnResult(
                    turn.text,
                    turn.category,
                    turn.check(reply, at),
                    reply,
                    heard=" ".join(said),
                    timings=timings[0] if timings else {},
                    withdrawn=gone,
                    right_delivered=(
                        turn.check(Reply(tuple(line for _, line in delivered)), at)
                        if gone
                        else None
                    ),
                )
            )
    finally:
        if session is not None:
            await session.close()
        if collector is not None:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
        await talk.finish()
    return out


#: Follow-ups for the rewriting experiment (scripts/bench_dialogue.py --follow-ups): written
#: before it ran, after the main set had; only the second turn of each is counted.
FOLLOW_UPS: tuple[tuple[Turn, ...], ...] = tuple(
    _c((first, "knowledge", says(*a)), (then, "followup", says(*b)))
    for first, a, then, b in (
        ("What is the capital of Japan?", ("Tokyo",), "And China?", ("Beijing",)),
        ("What is the largest planet?", ("Jupiter",), "And the smallest?", ("Mercury",)),
        ("What colour is a banana?", ("yellow",), "And a tomato?", ("red",)),
        ("How many legs does a dog have?", ("four", "4"), "What about a bird?", ("two", "2")),
        ("What is the capital of Canada?", ("Ottawa",), "And Australia?", ("Canberra",)),
        ("What language is spoken in Brazil?", ("Portuguese",), "And in Mexico?", ("Spanish",)),
        (
            "At what temperature does water boil in Celsius?",
            ("100", "hundred"),
            "And freeze?",
            ("0", "zero"),
        ),
        ("Who wrote Hamlet?", ("Shakespeare",), "And Pride and Prejudice?", ("Austen",)),
        ("What is the capital of Egypt?", ("Cairo",), "What about Kenya?", ("Nairobi",)),
        ("What sound does a cat make?", ("meow", "miaow"), "And a dog?", ("bark", "woof")),
    )
)

#: The rewriting prompt: the last exchange and the follow-up in, one full question out.
REWRITE_PROMPT = (
    "Rewrite the user's last message as one complete question that can be understood on its "
    "own. Reply with the question only."
)


class RewritingAssistant(Assistant):
    """The assistant, but an elliptical follow-up (:func:`is_follow_up`) is first rewritten into
    a full question by one more model call, which then replaces it in what the model is asked."""

    async def messages(self, conv_id: str, system: str) -> list[ChatMessage]:
        asked = await super().messages(conv_id, system)
        last = asked[-1]
        words = last.content.split(": ", 1)[-1]
        if last.role != "user" or not is_follow_up(words) or len(asked) < 3:
            return asked
        context = [m for m in asked[1:-1]][-2:]
        prompt = [
            ChatMessage("system", REWRITE_PROMPT),
            *context,
            ChatMessage("user", words),
        ]
        rewritten = ""
        deltas = self.model.stream(prompt)
        try:
            async for delta in deltas:
                rewritten += delta
                if "\n" in rewritten or len(rewritten) > 200:
                    break
        except LlmError:
            return asked
        finally:
            await deltas.aclose()  # closes the HTTP response: the server stops generating
        rewritten = rewritten.strip().split("\n")[0].strip()
        if not rewritten:
            return asked
        self.rewrites.append((words, rewritten))
        return [*asked[:-1], ChatMessage("user", rewritten)]

    @property
    def rewrites(self) -> list[tuple[str, str]]:
        """(follow-up, rewritten) for each rewrite made."""
        if not hasattr(self, "_rewrites"):
            self._rewrites: list[tuple[str, str]] = []
        return self._rewrites
