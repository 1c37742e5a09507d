"""Readiness for a load balancer, and draining a node.

``GET /readyz`` answers ``200 ready`` only when a new person would be served well; otherwise
``503`` with why: ``loading models`` (starting), ``full`` (``--max-sessions`` reached, or speech
recognition behind), ``draining`` (leaving), ``speech service down`` (a ``--stt``/``--tts``/
``--wake-service`` server cannot be reached; ``speechServices`` names it). A balancer's health check on it sends new people to
other nodes (``docs/deployment.md``). ``/healthz`` stays the liveness check.

Draining (SIGUSR1 to ``serve``, or SIGTERM when its records are shared in PostgreSQL): refuse new sessions at once, let the turns in progress
finish (a person mid-utterance, an agent thinking, a reply being spoken) for at most
``drain_s``, then close every page's WebSocket with 1012 ("service restart"). The pages reconnect
(through the balancer, to another node), which takes their conversations up from the records:
a drained node does not end them.
"""

from __future__ import annotations

import asyncio
import json
import time
from http import HTTPStatus
from typing import TYPE_CHECKING

from gateway.server import records_watch

if TYPE_CHECKING:
    from gateway.server.node import Node
    from gateway.speech.link import ServiceLink

#: Session states in which a turn is under way (see ``VoiceSession.state``).
BUSY_STATES = frozenset({"hearing", "thinking", "speaking"})
#: Close code and reason a drained node sends its pages: reconnecting helps.
HANDOVER_CODE = 1012
HANDOVER_REASON = "this gateway node is restarting; reconnecting to another"


def readiness(gateway: Node) -> tuple[HTTPStatus, bytes]:
    """The ``/readyz`` answer: status and a JSON body naming the state."""
    if not gateway.ready:
        state = "loading models"
    elif gateway.draining:
        state = "draining"
    elif gateway.refusal() is not None:
        state = "full"
    elif any(link.down for link in speech_services(gateway)):
        state = "speech service down"
    else:
        state = "ready"
    body: dict[str, object] = {
        "state": state,
        "node": gateway.node,
        "sessions": len(gateway.clients),
        "maxSessions": gateway.settings.max_sessions,
        "conversations": len(gateway.rooms),
    }
    links = speech_services(gateway)
    if links:
        # Which remote speech service is down, and why (``--stt``/``--tts``/``--wake-service``).
        body["speechServices"] = [
            {
                "service": link.kind,
                "address": link.address,
                "up": not link.down,
                **({"reason": link.down_reason} if link.down else {}),
            }
            for link in links
        ]
    if (records := records_watch.health(gateway)) is not None:
        # Failing records do not make the node unready: see server/records_watch.py.
        body["records"] = records.to_dict()
    status = HTTPStatus.OK if state == "ready" else HTTPStatus.SERVICE_UNAVAILABLE
    return status, (json.dumps(body, allow_nan=False) + "\n").encode()


def speech_services(gateway: Node) -> list[ServiceLink]:
    """The speech services on the network the gateway's models use (none: all in process)."""
    return list(gateway.models.services)


def turns_in_progress(gateway: Node) -> int:
    """Pages whose person is speaking, waiting for an answer or hearing one."""
    busy = 0
    for client in gateway.clients:
        session = client.session
        if session is None:
            continue
        if session.state in BUSY_STATES or not session.conversation.floor_idle:
            busy += 1
    return busy


async def drain(gateway: Node, timeout_s: float) -> int:
    """Refuse new sessions, wait up to ``timeout_s`` for the turns in progress, then hand every
    page over (close 1012). Returns how many turns were still under way when time ran out."""
    gateway.draining = True
    deadline = time.monotonic() + timeout_s
    while (busy := turns_in_progress(gateway)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    for client in list(gateway.clients):
        await client.ws.close(HANDOVER_CODE, HANDOVER_REASON)
    return busy
