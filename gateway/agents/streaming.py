"""Replies that stream: an in-process agent's sentences reach the person's proxy as they are made.

OFP 1.1.0 has no partial utterances: an agent's reply is one envelope. Inside the gateway,
though, an agent that generates its words (the assistant) can hand each sentence to the person's
proxy as soon as it is complete, so the first sentence is spoken while the rest is still being
written; the envelope with the whole utterance (the same dialog event id) follows as usual and
is what the floor routes and the records keep.

The floor host (:mod:`gateway.floor.host`) sets :data:`reply_streams` to its person's outlet's
``open_stream`` while it awaits an in-process agent; the agent calls it to open a :class:`ReplyStream`, and gets None
when nobody streams (``talk --text``, HTTP, a proxy not speaking). A proxy that stops listening
(barge-in) calls :meth:`ReplyStream.cancel`, which stops the generation, not only the playout.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar

#: Sentences one reply may stream (its text is capped far below this by the agent).
MAX_SENTENCES = 256


class ReplyStream:
    """One reply being generated: sentences in (the agent), sentences out (the proxy)."""

    def __init__(self, event_id: str, speaker_uri: str, speaker: str) -> None:
        self.event_id = event_id
        self.speaker_uri = speaker_uri
        self.speaker = speaker
        #: What has been put so far, joined.
        self.text = ""
        # Room for every sentence put allows and the closing None: put_nowait never overflows.
        self._queue: asyncio.Queue[str | None] = asyncio.Queue(maxsize=MAX_SENTENCES + 1)
        self._count = 0
        self._closed = False
        self._cancelled = False
        #: Cancelled: the words of it the person heard (an estimate to the word; "" for none).
        #: None while it was not cancelled: what was put is what was heard.
        self.heard: str | None = None
        self._on_cancel: list[Callable[[], object]] = []

    @property
    def id(self) -> str:
        """The reply's dialog event id (its envelope follows under the same)."""
        return self.event_id

    @property
    def cancelled(self) -> bool:
        """Whether the listener stopped listening (the agent should stop generating)."""
        return self._cancelled

    def put(self, sentence: str) -> bool:
        """Hand over one complete sentence; False once the stream is cancelled or full."""
        if self._cancelled or self._closed or self._count >= MAX_SENTENCES:
            return False
        self._count += 1
        self.text = f"{self.text} {sentence}".strip()
        self._queue.put_nowait(sentence)
        return True

    def close(self) -> None:
        """No more sentences."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(None)

    def cancel(self, heard: str = "") -> None:
        """The listener is gone (barge-in): stop the generation; nothing more is read.
        ``heard``: the words of it the person heard before it stopped (:attr:`heard`)."""
        if self._cancelled:
            return
        self._cancelled = True
        self.heard = heard
        for callback in self._on_cancel:
            callback()
        self.close()

    def on_cancel(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` when the listener cancels (at once if it already has)."""
        if self._cancelled:
            callback()
        else:
            self._on_cancel.append(callback)

    async def sentences(self) -> AsyncIterator[str]:
        """The sentences as they come, until the stream is closed or cancelled."""
        while not self._cancelled:
            sentence = await self._queue.get()
            if sentence is None or self._cancelled:
                return
            yield sentence


#: Opens a stream for a reply: ``(event_id, speaker_uri, speaker name)`` → the stream, or None.
StreamOpener = Callable[[str, str, str], ReplyStream | None]

#: The opener of whoever is awaiting the current in-process delivery (None: nobody streams).
reply_streams: ContextVar[StreamOpener | None] = ContextVar("reply_streams", default=None)
