"""What a change of the floor means, sans I/O: whether there is one to record and show, whether
its conversants changed (those that left lose their inbound URLs), and whether the convener is
gone (the person is told the floor keeps order itself now).

The floor's host (gateway/floor/host.py) hands :class:`FloorWatch` a :class:`Snapshot` after
each step and carries out what the :class:`FloorChange` says: it records, revokes, notifies.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.floor.manager import Floor
from gateway.floor.notices import ConvenerGone


@dataclass(frozen=True)
class Snapshot:
    """The floor at one moment: who is on it (speaker URIs, in joining order), who holds it,
    the convener (None: the floor manager keeps order)."""

    conversants: tuple[str, ...]
    floor_granted: tuple[str, ...]
    convener: str | None

    @classmethod
    def of(cls, floor: Floor) -> Snapshot:
        """The floor as it is now."""
        return cls(
            tuple(i.speaker_uri for i in floor.conversants),
            tuple(floor.floor_granted),
            floor.convener,
        )


@dataclass(frozen=True)
class FloorChange:
    """What changed since the last snapshot: the conversants (some may have left), and the
    convener gone (the notice for the person; None: it is not)."""

    conversants_changed: bool
    convener_gone: ConvenerGone | None = None


class FloorWatch:
    """The floor's last known state (``restored``: taken up from the records, so nothing of it
    is new) and what each new one changes."""

    def __init__(self, restored: Snapshot | None = None) -> None:
        self._last = restored
        #: The convener being invited (its speaker URI) until it has joined or not: its leaving
        #: is not news (appointing it says whether it joined).
        self.appointing: str | None = None

    def seen(self, now: Snapshot, *, force: bool = False) -> FloorChange | None:
        """The floor is ``now``: what changed (None: nothing, unless ``force``: a change to
        record even so, such as a convener appointed)."""
        last, self._last = self._last, now
        if now == last and not force:
            return None
        if last is None:
            return FloorChange(conversants_changed=False)
        gone = None
        if last.convener and not now.convener and last.convener != self.appointing:
            gone = ConvenerGone(last.convener)
        return FloorChange(now.conversants != last.conversants, gone)
