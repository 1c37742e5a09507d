"""English sentence heuristics: whether a transcript reads as a finished sentence.

Whisper punctuates what it hears; these read its transcript for a sentence's final mark and
for the words a finished English sentence does not end on. The turn rule
(gateway/proxy/turn_rule.py) judges the words of a pause with them.
"""

from __future__ import annotations

import re

from gateway.voice.words import words

#: Words a finished sentence does not end on: a transcript ending here is waited out.
CONTINUATIONS = frozenset(
    [
        "and",
        "or",
        "but",
        "so",
        "because",
        "the",
        "a",
        "an",
        "of",
        "to",
        "with",
        "for",
        "in",
        "on",
        "at",
        "my",
        "your",
        "his",
        "her",
        "their",
        "our",
        "um",
        "uh",
        "er",
        "like",
        "that",
        "which",
        "who",
        "if",
        "when",
        "then",
        "than",
        "is",
        "are",
        "was",
        "were",
    ]
)
_FINAL = re.compile(r"[.?!][\"')\]]*$")


def looks_final(text: str, *, min_words: int = 1) -> bool:
    """Whether a transcript reads as a finished sentence of at least ``min_words`` words.

    Whisper punctuates fragments too ("Stop, stop." paused at the comma comes back as
    "Stop."), so one-word fragments are the least trustworthy: the session asks for two words
    before ending a turn early, and lets one-word answers wait out the normal silence.
    """
    text = text.strip()
    if not text or text.endswith(("...", "…")) or not _FINAL.search(text):
        return False
    said = said_words(text)
    return len(said) >= max(1, min_words) and said[-1] not in CONTINUATIONS


def said_words(text: str) -> list[str]:
    """The words of ``text``, one word said again and again counted once: Whisper hears a
    one-word answer twice ("No. No.", "Thanks. Thanks." in the benchmark), which made it
    read as a two-word sentence and skip the one-word rule."""
    said = words(text)
    return said[:1] if len(set(said)) == 1 else said


def unpunctuated_final(text: str, *, min_words: int = 1) -> bool:
    """Whether a transcript reads as finished but for its last punctuation mark, which
    Whisper sometimes leaves off a whole sentence ("Open the garage door"): no ellipsis,
    comma or dash at its end, and not ending on a word a sentence does not end on."""
    text = text.strip()
    if not text or _FINAL.search(text) or text[-1] in ",;:-–—…" or text.endswith(".."):
        return False
    said = said_words(text)
    return len(said) >= max(1, min_words) and said[-1] not in CONTINUATIONS


def marked_final(text: str, *, min_words: int) -> bool:
    """Whether Whisper ended ``text`` with a sentence's final mark (not an ellipsis), whatever
    its last word, on at least ``min_words`` words."""
    text = text.strip()
    if text.endswith(("...", "…")) or not _FINAL.search(text):
        return False
    return len(said_words(text)) >= max(1, min_words)
