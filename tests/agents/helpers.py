"""Real aiohttp servers on 127.0.0.1 for the transport tests, and envelope builders."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from gateway.agents import AddressPolicy
from gateway.ofp import (
    Conversant,
    Conversation,
    Envelope,
    Event,
    EventType,
    Identification,
    Parameters,
    Sender,
    To,
    text_event,
)

USER = "tag:test.user,2025:alice"
LOOPBACK = AddressPolicy(["127.0.0.0/8"])


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """Run ``app`` on a free port of 127.0.0.1; yields its base URL (no trailing slash)."""
    # A short shutdown: handlers that sleep on purpose must not hold up the test's end.
    runner = web.AppRunner(app, shutdown_timeout=0.1, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


def utterance(
    text: str,
    *,
    speaker: str = USER,
    to: To | None = None,
    conversation: str = "conv-1",
    conversants: list[Conversant] | None = None,
) -> Envelope:
    """An envelope carrying one utterance."""
    return Envelope(
        conversation=Conversation(id=conversation, conversants=conversants),
        sender=Sender(speaker_uri=speaker),
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                to=to,
                parameters=Parameters(dialog_event=text_event(speaker, text)),
            )
        ],
    )


def conversant(speaker_uri: str, role: str | None, service_url: str = "") -> Conversant:
    """A conversant entry as the floor would list it."""
    return Conversant(
        identification=Identification(
            speaker_uri=speaker_uri,
            service_url=service_url or f"https://example.org/{speaker_uri.rsplit(':', 1)[-1]}",
            organization="test",
            conversational_name=speaker_uri.rsplit(":", 1)[-1],
            role=role,
        )
    )


def events_of(envelope: Envelope, kind: EventType) -> list[Event]:
    """The events of one type in ``envelope``."""
    return [e for e in envelope.events if e.event_type is kind]


def texts(envelope: Envelope) -> list[str]:
    """The text of every utterance in ``envelope``."""
    return [e.dialog_event.text() for e in events_of(envelope, EventType.UTTERANCE)]
