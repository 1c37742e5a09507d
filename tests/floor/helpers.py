"""Compact builders for floor tests."""

from __future__ import annotations

from typing import Any

from gateway.floor import Delivery, Floor
from gateway.ofp import Envelope, Event, EventType, Identification, Sender, text_event

CONV = "conv-1"
MANAGER = Identification(
    speaker_uri="tag:gateway,2025:floor",
    service_url="http://gw/floor",
    organization="test",
    conversational_name="Floor",
    synopsis="floor",
)


def ident(name: str, *, convener: bool = False) -> Identification:
    return Identification(
        speaker_uri=f"tag:{name}",
        service_url=f"https://{name}.example/ofp",
        organization=name,
        conversational_name=name.title(),
        synopsis=f"{name} agent",
        open_floor_roles={"convener": convener},
    )


def ev(
    kind: str,
    *,
    to: str | None = None,
    private: bool = False,
    text: str = "hi",
    speaker: str = "tag:x",
    reason: str | None = None,
    to_url: str | None = None,
) -> Event:
    data: dict[str, Any] = {"eventType": kind}
    if to or to_url:
        data["to"] = {k: v for k, v in (("speakerUri", to), ("serviceUrl", to_url)) if v}
        if private:
            data["to"]["private"] = True
    if reason:
        data["reason"] = reason
    if kind == "utterance":
        data["parameters"] = {"dialogEvent": text_event(speaker, text).wire()}
    return Event.model_validate(data)


def env(sender: str, *events: Event) -> Envelope:
    return Envelope(
        conversation={"id": CONV}, sender=Sender(speaker_uri=sender), events=list(events)
    )


def floor_with(*names: str, convener: str | None = None) -> Floor:
    floor = Floor(CONV, manager=MANAGER)
    for n in names:
        floor.join(ident(n), convener=(n == convener))
    return floor


def by_recipient(deliveries: list[Delivery]) -> dict[str, list[str]]:
    """recipient name → event types it received, in order."""
    out: dict[str, list[str]] = {}
    for d in deliveries:
        out.setdefault(d.recipient.speaker_uri.removeprefix("tag:"), []).extend(
            e.event_type.value for e in d.envelope.events
        )
    return out


def types(kind: str) -> EventType:
    return EventType(kind)
