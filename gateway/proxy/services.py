"""What the parts of a person's proxy use from outside the session: one typed object.

The session (gateway/proxy/session.py) builds one :class:`Services` from what it was given and
hands it to listening, uttering and speaking with their event sink: the parts receive no
functions, only this object and the sink, so a reader sees every way out of a part in two
types. A test builds its own (a fake clock, no fetching).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gateway.errors import GatewayError

if TYPE_CHECKING:
    from gateway.render.decode import Fetch
    from gateway.voice.wake import WakeListener


class NoFetching(GatewayError):
    """A reply asked for media at a URL, and this session was given no way to fetch it."""


@dataclass(frozen=True)
class Services:
    """The clock every part reads, media fetching (under the address policy), where the gateway
    serves the person's clips, and wake-word detectors on the network.

    The fields are what the session was given (None: that service is not there); the parts use
    the methods.
    """

    #: The one clock of a session: every stage of a turn is timed on it (a test's may be fake).
    clock: Callable[[], float] = time.monotonic
    #: Fetches a media URL: its bytes and content type (None: nothing is fetched).
    fetcher: Fetch | None = None
    #: Where the gateway serves the clip of an utterance, by its event id (for the ``url`` audio
    #: mode; None: not served).
    clips: Callable[[str], str] | None = None
    #: Builds a wake-word detector on the network by its name (None: detectors run in process).
    wakes: Callable[[str], WakeListener] | None = None

    def now(self) -> float:
        """The session's clock, now."""
        return self.clock()

    async def fetch(self, url: str) -> tuple[bytes, str]:
        """The bytes at ``url`` and their content type."""
        if self.fetcher is None:
            raise NoFetching(f"this session fetches no media ({url})")
        return await self.fetcher(url)

    def audio_url(self, event_id: str) -> str | None:
        """Where the gateway serves the clip of utterance ``event_id`` (None: not served)."""
        return None if self.clips is None else self.clips(event_id)

    def wake_listener(self, name: str) -> WakeListener | None:
        """A wake-word detector on the network for ``name`` (None: none; the in-process
        detector is used)."""
        return None if self.wakes is None else self.wakes(name)
