"""The one way the gateway splits a transcript into words, for comparing what was said.

Used to compare transcripts with each other (Whisper's loops and alternates), with a wake
phrase, with stop words, and to tell whether a transcript reads as finished.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[\w']+")


def words(text: str) -> list[str]:
    """Lower-case words: runs of letters, digits and apostrophes, punctuation dropped
    ("Don't stop, Floor!" → ``["don't", "stop", "floor"]``)."""
    return _WORD.findall(text.lower())
