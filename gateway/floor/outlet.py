"""Where the floor host sends what concerns the person: one typed outlet.

The person's side of a conversation (the voice session's proxy, ``talk``, a test's collector)
implements :class:`PersonOutlet`; :meth:`gateway.floor.host.FloorHost.attach` binds one, and a
proxy that takes the conversation over (a page reloaded) replaces the old one in one call. The
host calls nothing else of the person's side, so a new way of reaching the person is one
method here, and every outlet that lacks it fails ``mypy``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from gateway.agents.streaming import ReplyStream
    from gateway.floor.manager import Floor
    from gateway.floor.notices import Notice
    from gateway.ofp import Envelope


class PersonOutlet(Protocol):
    """What the floor host tells the person's side, in the floor's order."""

    async def delivered(self, envelope: Envelope) -> None:
        """An envelope the floor delivers to the person. Awaited: the next delivery to the
        person waits for it (the person's mailbox keeps the floor's order)."""
        ...

    async def notified(self, notice: Notice) -> None:
        """Something the gateway itself tells the person (an agent failed, "One moment…")."""
        ...

    def floor_changed(self, floor: Floor) -> None:
        """The floor changed: who is on it, who holds it, the convener. ``floor`` goes on
        changing: read what is needed now."""
        ...

    def person_said(self, envelope: Envelope) -> None:
        """The person's own envelope, as it goes into the floor (after refused invites are
        taken out)."""
        ...

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        """A stream for an in-process agent's reply (:mod:`gateway.agents.streaming`), so its
        sentences reach the person before the reply envelope is complete; None: not streamed
        (the reply comes whole)."""
        ...
