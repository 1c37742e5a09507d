"""The one way the gateway splits a transcript into words, for comparing what was said.

Used to compare transcripts with each other (Whisper's loops and alternates), with a wake
phrase, with stop words, with agents' names, and to tell whether a transcript reads as finished.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    """Lower-case words: runs of letters, digits and apostrophes, punctuation dropped
    ("Don't stop, Floor!" → ``["don't", "stop", "floor"]``)."""
    return _WORD.findall(text.lower())


def edit_distance(a: Sequence[object], b: Sequence[object]) -> int:
    """Levenshtein distance (insertions, deletions, substitutions) between two sequences: of
    letters for strings, of words for lists of words."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
