"""What the server does about the records store failing (:mod:`gateway.records.kept`): write the
waiting records out every second, tell the people in words when the state changes, and show it
on ``/readyz`` and ``/metrics``.

``/readyz`` stays 200 while records fail: the conversations go on (talking does not need the
store), and with PostgreSQL every node fails alike, so taking this one out of a balancer would
only refuse people without saving anything. The body says ``"records": {"state": "failing"…}``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol

from gateway.records.kept import KeptRecords, RecordsHealth
from gateway.server.message_codec import Message
from gateway.server.messages import PageNotice

if TYPE_CHECKING:
    from gateway.server.metrics import Metrics
    from gateway.server.node import Node


class Listener(Protocol):
    """A page that can be told something (a :class:`~gateway.server.connection.PageConnection`)."""

    async def send(self, message: Message) -> None:
        """Send one message to the page."""


log = logging.getLogger(__name__)

#: The ``reason`` of the notices about records.
REASON = "@records"


def notice(health: RecordsHealth) -> PageNotice:
    """What the person is told when the records' state becomes ``health.state``."""
    if health.state == "failing":
        text = (
            "The conversation record cannot be saved right now. What is said is kept in memory "
            "and will be saved when the record store recovers; the conversation goes on."
        )
    elif health.state == "dropping":
        text = (
            "The conversation record still cannot be saved, and the memory kept for it is full: "
            "what is said from now on is not being kept. The conversation goes on."
        )
    elif health.dropped:
        text = (
            "The conversation record is saved again, but some of what was said while it was "
            "full could not be kept."
        )
    else:
        text = "The conversation record is saved again; nothing said was lost."
    return PageNotice(text, REASON)


def tell_pages(clients: Iterable[Listener], health: RecordsHealth) -> None:
    """Tell every connected page (the listener :class:`KeptRecords` calls)."""
    message = notice(health)
    loop = asyncio.get_running_loop()
    for client in list(clients):
        task = loop.create_task(client.send(message))
        _sending.add(task)
        task.add_done_callback(_sending.discard)


def health(node: Node) -> RecordsHealth | None:
    """How the node's records are doing (None: it keeps none)."""
    records = node.recorder
    return records.health() if isinstance(records, KeptRecords) else None


async def tell_newcomer(node: Node, client: Listener) -> None:
    """A page opened while records fail hears it at once."""
    now = health(node)
    if now is not None and now.state != "ok":
        await client.send(notice(now))


def observe(metrics: Metrics, health: RecordsHealth) -> None:
    """Set the records gauges of ``/metrics``."""
    metrics.records_failing.set(0 if health.state == "ok" else 1)
    metrics.records_pending.set(health.pending)
    metrics.records_dropped.set(health.dropped)
    metrics.records_episodes.set(health.episodes)


async def keep_flushing(records: KeptRecords) -> None:
    """Write the waiting records out, every ``records.retry_s``, for as long as the server runs."""
    while True:
        await asyncio.sleep(records.retry_s)
        try:
            records.flush()
        except Exception:  # the task must not die: the next second tries again
            log.exception("records: writing the waiting records out failed")


#: Sends in flight (a task must be referenced until done); at most one per page per change.
_sending: set[asyncio.Task[None]] = set()
