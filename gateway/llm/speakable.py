"""A model's streamed text to sentences a voice can say.

:class:`SentenceSplitter` takes deltas as they stream and hands back each sentence as soon as
it is complete (its end mark followed by a space or a line break), so the first sentence goes
to synthesis while the model writes the second. :func:`speakable` turns what chat models write
for screens — Markdown emphasis, headings, bullet and numbered lists, code, links, HTML
tags — into plain words: the reply is spoken as a ``text`` feature, never as SSML, so markup
can never become an SSML instruction, and nothing is read out as symbols.
"""

from __future__ import annotations

import re

#: Words whose full stop does not end a sentence.
_ABBREVIATIONS = frozenset(
    [
        "mr",
        "mrs",
        "ms",
        "dr",
        "prof",
        "st",
        "vs",
        "etc",
        "e.g",
        "i.e",
        "no",
        "approx",
        "fig",
        "jr",
        "sr",
        "inc",
        "ltd",
        "co",
    ]
)
#: The shortest sentence sent on its own; a shorter one ("Yes.") waits for the next, so one
#: word is not synthesized (and paused after) by itself.
MIN_SENTENCE_CHARS = 12
#: The reply's first piece may end at a clause (a comma, colon or semicolon) once it is this
#: long: the person is waiting in silence for it, and a long first sentence costs both its
#: writing (SmolLM2 on one thread: ~25 ms a token) and its synthesis before anything is heard.
FIRST_CLAUSE_CHARS = 30

_END = re.compile(r"[.!?…]+[\"')\]]*(?=\s)|\n")
_CLAUSE = re.compile(r"[,;:](?=\s)")
_FENCE = re.compile(r"```.*?(```|$)", re.S)
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"https?://\S+")
_TAG = re.compile(r"</?[A-Za-z][^>]{0,200}>")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+", re.M)
_HEADING = re.compile(r"^\s*#{1,6}\s*", re.M)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|~~|`)(?=\S)(.+?)(?<=\S)\1")
_SYMBOLS = re.compile(r"[*_#`|~^<>{}\[\]\\]")


def speakable(text: str) -> str:
    """``text`` as plain words to say (see the module docstring); may be empty."""
    text = _FENCE.sub(" (some code, shown in the text) ", text)
    text = _LINK.sub(r"\1", text)
    text = _URL.sub("a link", text)
    text = _TAG.sub(" ", text)
    text = _HEADING.sub("", text)
    lines = [kept for line in text.splitlines() if (kept := _BULLET.sub("", line).strip())]
    # A list item or a heading is its own sentence: end it where the line ends.
    text = " ".join(
        line if line[-1:] in ".!?:;," or i == len(lines) - 1 else f"{line}."
        for i, line in enumerate(lines)
    )
    for _ in range(2):  # nested emphasis (**_x_**)
        text = _EMPHASIS.sub(r"\2", text)
    text = _SYMBOLS.sub(" ", text)
    return " ".join(text.split())


class SentenceSplitter:
    """Streamed text in, complete sentences out (raw: pass each through :func:`speakable`).

    Code fences are kept whole: a sentence is never cut inside one.
    """

    def __init__(
        self, min_chars: int = MIN_SENTENCE_CHARS, first_clause_chars: int = FIRST_CLAUSE_CHARS
    ) -> None:
        self._pending = ""
        self._min = min_chars
        self._first_clause = first_clause_chars
        self._started = False

    def feed(self, delta: str) -> list[str]:
        """Add ``delta``; return the sentences it completed, in order (the first may be a
        clause: see :data:`FIRST_CLAUSE_CHARS`)."""
        self._pending += delta
        out = self._sentences()
        if not out and not self._started and "```" not in self._pending:
            clause = next(
                (m for m in _CLAUSE.finditer(self._pending) if m.end() >= self._first_clause),
                None,
            )
            if clause is not None:
                out = [self._pending[: clause.end()].strip()]
                self._pending = self._pending[clause.end() :]
        self._started = self._started or bool(out)
        return out

    def _sentences(self) -> list[str]:
        out: list[str] = []
        start = 0
        for match in _END.finditer(self._pending):
            end = match.end()
            piece = self._pending[start:end]
            if self._pending[:end].count("```") % 2:
                continue  # inside a code block
            if match.group() != "\n" and _abbreviation(self._pending[start:end]):
                continue
            if len(piece.strip()) < self._min and match.group() != "\n":
                continue  # too short alone: joined to the next
            if piece.strip():
                out.append(piece.strip())
            start = end
        self._pending = self._pending[start:]
        return out

    def flush(self) -> str:
        """What is left once the stream ended (may be empty)."""
        rest, self._pending = self._pending.strip(), ""
        return rest


def _abbreviation(sentence: str) -> bool:
    words = sentence.rstrip().split()
    if not words:
        return False
    last = words[-1].lower().rstrip(".")
    # "3." of a numbered list, "e.g." or "Dr.": not the end of a sentence.
    return last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())
