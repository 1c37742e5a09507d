"""The person's proxy's events (gateway/proxy/events.py) as the page's messages (messages.py).

The proxy speaks in its own terms; this is the one place that knows both sides, so the proxy
never imports the page's wire format.
"""

from __future__ import annotations

from gateway.proxy.events import (
    AgentSaid,
    Discovery,
    FloorChanged,
    Flushed,
    Overlapped,
    PartialText,
    ProxyEvent,
    StateShown,
    Told,
    Transcribed,
    WakeWordHeard,
)
from gateway.server.messages import (
    AgentUtterance,
    FinalTranscript,
    FloorConversant,
    FloorUpdate,
    Flush,
    FoundManifest,
    FromGateway,
    Manifests,
    PageNotice,
    PartialTranscript,
    Playback,
    SessionState,
    StateUpdate,
    WakeHeard,
)


def page_message(event: ProxyEvent) -> FromGateway:
    """``event`` as the message the page is sent."""
    match event:
        case StateShown(state=state):
            return StateUpdate(SessionState(state))
        case PartialText(text=text):
            return PartialTranscript(text)
        case Transcribed():
            return FinalTranscript(
                event.text,
                id=event.id,
                confidence=event.confidence,
                typed=event.typed,
                command=event.command,
                to=event.to,
                to_name=event.to_name,
                why=event.why,
                private=event.private,
                replaces=event.replaces,
            )
        case AgentSaid(dialog_event=de) if de is not None:
            return AgentUtterance.of(de, speaker=event.speaker, private=event.private)
        case AgentSaid():
            return AgentUtterance(
                event.id, event.speaker_uri, event.speaker, event.text, private=event.private
            )
        case FloorChanged():
            return FloorUpdate(
                tuple(
                    FloorConversant(c.speaker_uri, c.service_url, c.name, c.role)
                    for c in event.conversants
                ),
                floor_granted=event.floor_granted,
                convener=event.convener,
            )
        case Flushed():
            return Flush()
        case Overlapped():
            return Playback(
                event.outcome,
                event.why,
                event.heard,
                event.reply,
                played_ms=event.played_ms,
                said=event.said,
            )
        case Told(text=text, reason=reason, agent=agent):
            return PageNotice(text, reason, agent=agent)
        case WakeWordHeard(model=model):
            return WakeHeard(model)
    raise TypeError(f"no page message for {type(event).__name__}")  # pragma: no cover


def manifests(found: Discovery) -> Manifests:
    """What ``discover`` found, as the page's ``manifests`` answer."""
    return Manifests(
        found.url,
        tuple(
            FoundManifest(
                f.service_url,
                f.speaker_uri,
                f.name,
                f.synopsis,
                f.keyphrases,
                f.score,
                f.recommended,
            )
            for f in found.found
        ),
        error=found.error,
    )
