"""The one way the gateway splits a transcript into words, for comparing what was said.

Used to compare transcripts with each other (Whisper's loops and alternates), with a wake
phrase, with stop words, with agents' names, and to tell whether a transcript reads as finished.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

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


@dataclass(frozen=True)
class Reading:
    """The likeliest reading of a clip in a closed list of words (``within`` of
    ``gateway.voice.stt.SpeechToText.transcribe_partial``), and how much less likely Whisper
    finds it than what it wrote.

    Attributes:
        text: the reading ("Oh, cool." where Whisper wrote "Cohen.").
        gap: the decode's log-probability (natural log, the whole text and its end) less the
            reading's, both scored by the same model on the same audio and prompt: 0 or more
            when the decode is likelier (it was the beam's best), below 0 when the reading is
            (a beam search can miss it). A word Whisper half-heard leaves a small gap; a
            request read right leaves several nats ("Next." against "Okay.": ~6).
    """

    text: str
    gap: float
