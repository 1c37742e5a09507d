"""Whisper's known failures, recognised in its output: a loop (the text repeats itself), a
restart in the silence after the speech, and a fitted window that stopped early. Pure functions
of the text and word timings; :mod:`gateway.voice.stt` acts on them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from gateway.voice.words import words


class Timed(Protocol):
    """A word with its timing in the clip (:class:`gateway.voice.stt.Word` is one)."""

    @property
    def start(self) -> float: ...

    @property
    def end(self) -> float: ...


def words_key(text: str) -> tuple[str, ...]:
    """The words of ``text`` as compared (lower case, punctuation dropped)."""
    return tuple(words(text))


def repeats_itself(text: str, n: int = 3) -> bool:
    """True when some run of ``n`` words occurs twice: Whisper's loop on a short window ("...
    to the airport? How long does"). Real speech rarely repeats three words in one utterance,
    and when it does the price is one extra decode, not a wrong transcript.
    """
    words = words_key(text)
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    return len(grams) != len(set(grams))


def loop_start(words: list[str], n: int = 3) -> int | None:
    """Index of the word where a repeated run of ``n`` words first comes back, or None.

    "How far is the moon? How far is" → 4: the text before it is the sentence once.
    """
    keys = [tuple(words_key(w)) for w in words]
    seen: dict[tuple[tuple[str, ...], ...], int] = {}
    for i in range(len(keys) - n + 1):
        gram = tuple(keys[i : i + n])
        if not all(gram):
            continue  # punctuation-only "words" do not make a repetition
        if gram in seen:
            return i
        seen[gram] = i
    return None


def restart_at(words: list[str]) -> int | None:
    """Index of the word where Whisper began the utterance again after a sentence end, when
    everything from there on repeats its opening words ("Tell me a fun fact about octopuses.
    Tell me" → 7; "No. No." → 1; "Stop. Stop. Stop." → 1), or None.

    Measured in ``scripts/bench_turns.py``: with silence after the speech Whisper often starts
    over in it, too briefly for :func:`loop_start`'s three words. The restart then decides the
    turn: "… Tell me" reads as unfinished, and a complete request waited 900 ms for nothing.
    Someone who says "Stop. Stop." loses the second "Stop." — the same request; a new sentence
    that only begins like the first ("Call mom. Call dad.") is kept.
    """
    keys = [words_key(w) for w in words]
    ends = [i for i, w in enumerate(words) if w.strip().endswith((".", "!", "?"))]
    for end in ends:
        opening = [k for key in keys[: end + 1] for k in key]
        pieces: list[list[str]] = [[]]
        for i in range(end + 1, len(words)):
            pieces[-1] += keys[i]
            if i in ends and pieces[-1]:
                pieces.append([])
        pieces = [piece for piece in pieces if piece]
        if pieces and opening and all(piece == opening[: len(piece)] for piece in pieces):
            return end + 1
    return None


#: No spoken word lasts longer than this; a longer one in Whisper's word timings is a sign of
#: speech left out (see :func:`needs_full_window`).
MAX_WORD_S = 1.2


def needs_full_window(
    text: str, words: Sequence[Timed], *, speech_end_s: float, tolerance_s: float
) -> bool:
    """Whether a fitted-window result looks wrong and the full window should decode again.

    Wrong means: nothing heard although there is speech; the last word ends more than
    ``tolerance_s`` before the speech does (Whisper stopped after the first sentence); a word
    lasts longer than :data:`MAX_WORD_S` (Whisper stopped early and the alignment stretched its
    last word over the speech it left out — "I would like to go to the" for a clip that goes
    on "…train station", with "the" 2 s long); or the text repeats itself (Whisper looping
    until its token budget runs out).
    """
    if repeats_itself(text):
        return True
    if not words:
        return speech_end_s > tolerance_s
    if any(w.end - w.start > MAX_WORD_S for w in words):
        return True
    return words[-1].end < speech_end_s - tolerance_s
