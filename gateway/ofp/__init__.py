"""The Open Floor data model: envelopes, events, dialog events and manifests (pydantic v2).

Parse leniently with :func:`parse_envelope`; emit strictly with :meth:`Envelope.to_wire`.
This package imports nothing from the rest of the gateway.
"""

from gateway.ofp.dialog import DialogEvent, Feature, Span, Token, text_event
from gateway.ofp.envelope import (
    VERSION,
    Conversant,
    Conversation,
    Envelope,
    Event,
    EventType,
    Parameters,
    Sender,
    To,
    envelope_from_body,
    load_json,
    parse_manifest,
    reason_tokens,
)
from gateway.ofp.errors import EnvelopeError, OFPError, Problem
from gateway.ofp.manifest import Capability, Identification, Manifest, SupportedLayers
from gateway.ofp.ovon import from_ovon, to_ovon
from gateway.ofp.parse import parse_envelope

__all__ = [
    "VERSION",
    "Capability",
    "Conversant",
    "Conversation",
    "DialogEvent",
    "Envelope",
    "EnvelopeError",
    "Event",
    "EventType",
    "Feature",
    "Identification",
    "Manifest",
    "OFPError",
    "Parameters",
    "Problem",
    "Sender",
    "Span",
    "SupportedLayers",
    "To",
    "Token",
    "envelope_from_body",
    "from_ovon",
    "load_json",
    "parse_envelope",
    "parse_manifest",
    "reason_tokens",
    "text_event",
    "to_ovon",
]
