"""What the parts of ``server/`` are handed of the node they run on.

The :class:`~gateway.server.app.Gateway` owns the node's shared state and runs its life; the
parts below it — one page's connection, the HTTP routes, readiness — take a :class:`Node`, the
handle this module describes, rather than importing ``app.py``: the imports run downward only
(app → connection, routes, readiness → node → rooms → settings).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Protocol

from gateway.server.rooms import Page, RoomRegistry, RoomServices

if TYPE_CHECKING:
    from gateway.proxy.models import VoiceModels
    from gateway.proxy.session import VoiceSession
    from gateway.server.access import ClipSigner, HostPolicy


class Client(Page, Protocol):
    """A page being served (a :class:`~gateway.server.connection.PageConnection`)."""

    #: Its voice session, once its hello is read; None before and after.
    session: VoiceSession | None
    #: The visitor's address for the per-address limit (None: this machine's own client).
    address: str | None


class Node(RoomServices, Protocol):
    """One ``serve`` process's shared state, as its parts see it."""

    models: VoiceModels
    rooms: RoomRegistry
    @property
    def clients(self) -> Collection[Client]:
        """The pages being served."""
        ...

    hosts: HostPolicy
    signer: ClipSigner
    #: The time rooms are detached and reaped on.
    clock: Callable[[], float]
    #: The models are loaded: sessions may be admitted.
    ready: bool
    #: Refusing new sessions before leaving (server/readiness.py).
    draining: bool

    def refusal(self) -> str | None:
        """Why a new session cannot be served well now, or None to admit it."""
