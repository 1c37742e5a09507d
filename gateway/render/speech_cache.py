"""What the synthesizer said before, kept as finished audio: a bounded, least-recently-used cache.

Some texts are spoken again and again word for word: the parrot's "You said:", a greeting's first
sentence, the floor's "One moment…". Each costs a Piper synthesis (about 100 ms of a core for a
second of speech on the project's VM, and more when the workers queue at 20 people), and, when it
opens a reply, the listener waits for it before hearing anything. Kept, the second time costs
nothing and the reply's first audio is ready at once, while the rest of the reply is synthesized
behind it.

Only short texts are kept (``max_chars``): what is said again word for word is short, while a
long text is rarely repeated and would push the short ones out. ``scripts/load.py``'s requests
(21–44 characters) stay above the default, so its figures never count the person's own words
coming back from the cache. Pure logic: no I/O, no clock; :class:`gateway.render.tts.Synthesizer`
drives it.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SpeechCacheSettings:
    """The synthesizer's cache of short texts it said before (``serve``).

    Attributes:
        entries: texts kept (least recently used out first); 0 turns the cache off. 64 short
            texts at 48 kHz are at most ~12 MB.
        max_chars: only texts this short are kept (a prefix, a greeting's first sentence, a
            notice). The load benchmark's requests are longer, so its figures do not count
            the person's words coming back from the cache.
    """

    entries: int = 64
    max_chars: int = 20

    def __post_init__(self) -> None:
        if self.entries < 0 or self.max_chars < 0:
            raise ValueError("speech cache entries and max_chars must be 0 or more")


class SpeechCache:
    """Finished audio (a tuple of int16 chunks) by key, for texts of at most ``max_chars``."""

    def __init__(self, settings: SpeechCacheSettings | None = None) -> None:
        self.settings = settings or SpeechCacheSettings()
        self._kept: OrderedDict[Hashable, tuple[np.ndarray, ...]] = OrderedDict()
        #: Texts served from the cache / synthesized because they were not in it (kept or not).
        self.hits = 0
        self.misses = 0

    def keeps(self, text: str) -> bool:
        """Whether ``text`` is short enough to be kept (and the cache is on)."""
        return self.settings.entries > 0 and 0 < len(text) <= self.settings.max_chars

    def get(self, key: Hashable) -> tuple[np.ndarray, ...] | None:
        """The audio kept under ``key`` (now the most recently used), or None (a miss)."""
        audio = self._kept.get(key)
        if audio is None:
            self.misses += 1
            return None
        self._kept.move_to_end(key)
        self.hits += 1
        return audio

    def put(self, key: Hashable, chunks: list[np.ndarray]) -> None:
        """Keep ``chunks`` (a whole text's audio; copied, read-only) under ``key``, dropping the
        least recently used entry beyond ``entries``."""
        if self.settings.entries == 0:
            return
        kept = []
        for chunk in chunks:
            copy = np.array(chunk, copy=True)
            copy.flags.writeable = False  # every listener gets the same arrays
            kept.append(copy)
        self._kept[key] = tuple(kept)
        self._kept.move_to_end(key)
        while len(self._kept) > self.settings.entries:
            self._kept.popitem(last=False)

    def __len__(self) -> int:
        return len(self._kept)
