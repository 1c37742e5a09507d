"""Whether the person is kept waiting for an answer, and on whom ("One moment…").

While the person waits for an answer longer than ``Limits.slow_notice_s``, the floor says once
"One moment…", naming the agents still handling what the person said (the notice is about the
first of them), even when another agent has answered; with none known but deliveries still
queued and no answer yet, it is a bare "One moment…". An answer that has begun to reach the
person (an in-process agent's reply streaming sentence by sentence) is not slow.

Sans-I/O: :class:`Patience` is told what the person said, who is handling it, and when an
answer reaches them; the floor's host (gateway/floor/host.py) keeps the clock and asks it for the
notice when the time is up.
"""

from __future__ import annotations

from gateway.floor.notices import Waiting
from gateway.ofp import Identification


class Patience:
    """The person's wait for an answer in one conversation (see the module's docstring).
    ``manager``: the floor manager's speaker URI (a bare "One moment…" is about the floor)."""

    def __init__(self, manager: str) -> None:
        self.manager = manager
        #: The agents handling what the person said right now, by delivery.
        self._handling: dict[int, Identification] = {}
        #: Whether an answer to the person's last utterance has reached them (or begun to).
        self._heard = False

    def person_spoke(self) -> None:
        """The person said something: no answer to it yet."""
        self._heard = False

    def handling(self, delivery: int, agent: Identification) -> None:
        """``agent`` is handling what the person said (``delivery``: a key for the delivery)."""
        self._handling[delivery] = agent

    def handled(self, delivery: int) -> None:
        """The delivery is done (answered, failed or timed out)."""
        self._handling.pop(delivery, None)

    def answer_reached(self) -> None:
        """An agent's utterance reached the person."""
        self._heard = True

    def answer_began(self, speaker_uri: str) -> None:
        """An agent's answer began to reach the person (its reply streams): it is not slow."""
        self._heard = True
        for key, ident in list(self._handling.items()):
            if ident.speaker_uri == speaker_uri:
                del self._handling[key]

    @property
    def answering(self) -> list[Identification]:
        """The agents still handling what the person said, each once, first first."""
        return list({i.speaker_uri: i for i in self._handling.values()}.values())

    def notice(self, *, pending: bool) -> Waiting | None:
        """What the floor says now that the person has waited long enough (None: nothing, as
        they are not kept waiting). ``pending``: deliveries are still queued or in flight."""
        slow = self.answering
        if not slow:
            if not pending or self._heard:
                return None  # answered, or nothing pending: no one is kept waiting
            return Waiting(self.manager)
        return Waiting(slow[0].speaker_uri, tuple(i.display_name for i in slow))
