"""What the assistant is told besides the conversation: where and when the person is, who else is
on the floor, and what the person said about themselves (a sans-I/O unit: no clock, no I/O).

A small model asked "what time is it?" invents a time, asked "what is my name?" after "my name is
Ada" five lines up says it is not sure, and cannot say "ask the clock" about an agent it was never
told of. :func:`grounding` writes those facts as a few short lines that go after the persona's
prompt in the system message: the date, time and UTC offset where the person is (from the
utterance's ``startTime``), each other agent on the floor with its synopsis, and the facts the
person stated (:class:`Facts`, their name first), within :data:`MAX_GROUNDING_CHARS`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import datetime

#: The most characters the grounding lines take (about 170 tokens): cheap next to the 1 024-token
#: memory, and most of it only with many agents and facts.
MAX_GROUNDING_CHARS = 600
#: Agents listed at most, and the longest synopsis quoted.
MAX_AGENTS = 6
MAX_SYNOPSIS_CHARS = 70
#: Facts kept per conversation, and the longest one.
MAX_FACTS = 8
MAX_FACT_CHARS = 60

_NAME = r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)?)"
#: Statements a person makes about themselves, with the key that a later one replaces and how
#: the fact is told to the model. The name patterns want a capitalised word (speech-to-text
#: writes names so) so that "I'm tired" is no name.
_STATEMENTS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    # After "my name is" any word is the name (speech-to-text may write it lower-case).
    ("name", re.compile(r"\b(?i:my name(?:'s| is)) ([A-Za-z][\w'-]*)"), "Their name is {}."),
    ("name", re.compile(r"\b(?i:call me|I'm called|I am called) " + _NAME), "Their name is {}."),
    (
        "name",
        re.compile(r"^(?i:(?:hi|hello|hey)[,.!]? *)?(?i:I'm|I am|this is) " + _NAME + r"[.!]?$"),
        "Their name is {}.",
    ),
    (
        "home",
        re.compile(r"\bI (?:live|am living|'m living) in ([\w' -]{2,40})", re.I),
        "They live in {}.",
    ),
    ("from", re.compile(r"\bI(?:'m| am) from ([\w' -]{2,40})", re.I), "They are from {}."),
    ("age", re.compile(r"\bI(?:'m| am) (\d{1,3}) years? old", re.I), "They are {} years old."),
    (
        "job",
        re.compile(r"\bI work (?:as|at|in) (?:an? )?([\w' -]{2,40})", re.I),
        "They work as or at {}.",
    ),
    (
        "likes",
        re.compile(r"\bmy fav(?:ou?rite)? ([\w ]{2,20}) is ([\w' -]{2,40})", re.I),
        "Their favourite {} is {}.",
    ),
)
#: How a fact is said back to the person, by the key of :data:`_STATEMENTS`.
_TOLD_BACK = {
    "name": "Your name is {}.",
    "home": "You live in {}.",
    "from": "You are from {}.",
    "age": "You are {} years old.",
    "job": "You work as or at {}.",
    "likes": "Your favourite {} is {}.",
}
#: Questions the person asks about what they said, by the key of the fact they ask for.
_ASKED: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "name",
        re.compile(
            r"\b(what'?s|what is|(do )?you (know|remember)|tell me|say) my name\b|\bwho am i\b",
            re.I,
        ),
    ),
    ("home", re.compile(r"\bwhere do i live\b", re.I)),
    ("from", re.compile(r"\bwhere (am i|do i come) from\b", re.I)),
    ("age", re.compile(r"\bhow old am i\b", re.I)),
    ("job", re.compile(r"\bwhere do i work\b|\bwhat do i do for (a )?(living|work)\b", re.I)),
    ("likes", re.compile(r"\bwhat(?:'s| is) my fav(?:ou?rite)? ([\w]+)", re.I)),
)
#: What ends a captured phrase ("I live in Paris and I like cats" keeps "Paris").
_CLAUSE_END = re.compile(r"\s+(?:and|but|so|because|with|who|which|where)\s.*$", re.I)


def stated_facts(text: str) -> list[tuple[str, str]]:
    """The facts ``text`` states about its speaker, as (key, sentence for the model)."""
    return [(key, told) for key, told, _ in _stated(text)]


def _stated(text: str) -> list[tuple[str, str, str]]:
    """The facts ``text`` states: (key, sentence for the model, sentence for the person)."""
    out: list[tuple[str, str, str]] = []
    said = " ".join(text.split())
    for key, pattern, told in _STATEMENTS:
        m = pattern.search(said)
        if m is None:
            continue
        parts = [_CLAUSE_END.sub("", g).strip(" .,!?") for g in m.groups()]
        if key == "name":
            parts = [p[:1].upper() + p[1:] for p in parts]
        back = _TOLD_BACK[key].format(*parts)[:MAX_FACT_CHARS]
        if key == "likes":
            key = f"likes:{parts[0].lower()}"
        if all(parts) and not any(k == key for k, _, _ in out):
            out.append((key, told.format(*parts)[:MAX_FACT_CHARS], back))
    return out


#: An utterance of at most this many words that states the person's name is an introduction.
INTRODUCTION_WORDS = 8


def acknowledgement(text: str) -> str | None:
    """What to answer when ``text`` only states facts about the person ("My name is Ada.", "I
    live in Lisbon."): "Nice to meet you, Ada.", "I'll remember that you live in Lisbon." —
    without asking the model, which, that small, answers a bare statement with a ramble it then
    takes as context. None for anything else."""
    if len(text.split()) > INTRODUCTION_WORDS or "?" in text:
        return None
    stated = _stated(text)
    for key, _, back in stated:
        if key == "name":
            return f"Nice to meet you, {back.removeprefix('Your name is ').rstrip('.')}."
    if stated:
        back = stated[0][2]
        return f"I'll remember that {back[:1].lower()}{back[1:]}"
    return None


class Facts:
    """What the person said about themselves in one conversation: the newest statement of each
    kind, the name first, at most :data:`MAX_FACTS`."""

    def __init__(self) -> None:
        self._facts: OrderedDict[str, str] = OrderedDict()
        #: The same facts as said back to the person ("Your name is Ada.").
        self._back: dict[str, str] = {}

    def hear(self, text: str) -> None:
        """Keep the facts a person's utterance states."""
        for key, sentence, back in _stated(text):
            self._facts.pop(key, None)
            self._facts[key] = sentence
            self._back[key] = back
            while len(self._facts) > MAX_FACTS:
                oldest = next(k for k in self._facts if k != "name")
                del self._facts[oldest]
                self._back.pop(oldest, None)

    def recall(self, question: str) -> str | None:
        """The answer to the person asking what they said ("What is my name?" → "Your name is
        Ada."), from what they said; None when they did not say it (or did not ask)."""
        for key, pattern in _ASKED:
            m = pattern.search(question)
            if m is None:
                continue
            wanted = f"likes:{m.group(1).lower()}" if key == "likes" else key
            return self._back.get(wanted)
        return None

    def sentences(self) -> list[str]:
        """The facts, the name first, then in the order they were said."""
        name = [self._facts["name"]] if "name" in self._facts else []
        return name + [v for k, v in self._facts.items() if k != "name"]


def _zone(at: datetime) -> str:
    offset = at.utcoffset()
    if offset is None:
        return ""
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    zone = f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    name = at.tzname()
    return f"{name}, {zone}" if name and not name.startswith(("UTC", "+", "-")) else zone


def grounding(
    now: datetime,
    *,
    agents: Sequence[tuple[str, str]] = (),
    facts: Iterable[str] = (),
    extra: Iterable[str] = (),
) -> str:
    """The grounding lines for one request: ``now`` where the person is (aware), the other
    ``agents`` on the floor as (name, synopsis), the person's ``facts``, and ``extra`` lines (a
    persona's own); at most :data:`MAX_GROUNDING_CHARS`, the later lines dropped first."""
    hour = f"{now.hour % 12 or 12}:{now.minute:02d} {'AM' if now.hour < 12 else 'PM'}"
    zone = _zone(now)
    lines = [
        f"Now, where the person is: {now:%A}, {now:%B} {now.day}, {now.year}, {hour}"
        + (f" ({zone})." if zone else ".")
    ]
    listed = [
        f"{name} ({' '.join(synopsis.split())[:MAX_SYNOPSIS_CHARS].rstrip('.')})"
        if synopsis.strip()
        else name
        for name, synopsis in list(agents)[:MAX_AGENTS]
    ]
    if listed:
        lines.append(
            "Other agents here: " + "; ".join(listed) + ". Tell the person to ask one of them "
            "by name for what it does."
        )
    told = list(facts)
    if told:
        lines.append("The person told you: " + " ".join(told))
    lines += [e for e in extra if e.strip()]
    out: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) + 1 > MAX_GROUNDING_CHARS:
            break
        out.append(line)
        size += len(line) + 1
    return "\n".join(out)
