"""A person's side for tests: an outlet of the floor host that keeps what reaches it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gateway.agents.streaming import ReplyStream
    from gateway.floor import Floor
    from gateway.floor.notices import Notice
    from gateway.ofp import Envelope


@dataclass
class Collector:
    """A :class:`gateway.floor.outlet.PersonOutlet` that keeps every envelope delivered to the
    person (``heard``), every notice, the conversants' speaker URIs after each floor change
    (``floors``) and the person's own envelopes (``said``). Replies are not streamed to it."""

    heard: list[Envelope] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    floors: list[tuple[str, ...]] = field(default_factory=list)
    said: list[Envelope] = field(default_factory=list)

    async def delivered(self, envelope: Envelope) -> None:
        self.heard.append(envelope)

    async def notified(self, notice: Notice) -> None:
        self.notices.append(notice)

    def floor_changed(self, floor: Floor) -> None:
        self.floors.append(tuple(i.speaker_uri for i in floor.conversants))

    def person_said(self, envelope: Envelope) -> None:
        self.said.append(envelope)

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        return None


if TYPE_CHECKING:
    from gateway.floor.outlet import PersonOutlet

    #: Checked by mypy: the collector is a whole outlet (a method the host gained and the
    #: collector lacks fails the type check, not a test at run time).
    _WHOLE: type[PersonOutlet] = Collector
