"""What each agent is sent of an envelope the floor delivers.

* The person's voice (the ``audio`` feature of their utterances) goes only to an agent whose
  manifest asks for audio in (``supportedLayers.input``): a voice is personal, and most agents
  read the text, words and confidence only (:func:`voice_only_if_wanted`).
* The person's ``serviceUrl`` (in ``sender`` and in ``conversants``) is the agent's own inbound
  URL, so it can post to the person later (gateway/floor/inbound.py; :func:`person_reached_at`).

Sans-I/O: pure functions of the delivery; the floor's host (gateway/floor/host.py) applies them
to each delivery before it sends it.
"""

from __future__ import annotations

from gateway.floor.manager import Delivery
from gateway.ofp import Manifest


def wants_audio(manifest: Manifest) -> bool:
    """Whether an agent's manifest says it takes audio in (``supportedLayers.input``)."""
    return any(
        c.supported_layers is not None
        and any(layer.lower().startswith("audio") for layer in c.supported_layers.input)
        for c in manifest.capabilities
    )


def voice_only_if_wanted(manifest: Manifest, d: Delivery, person: str) -> Delivery:
    """``d`` without the ``person``'s voice (the ``audio`` feature of their utterances) unless
    the recipient's ``manifest`` asks for audio."""
    env = d.envelope
    if wants_audio(manifest) or not any(
        e.dialog_event is not None
        and e.dialog_event.speaker_uri == person
        and "audio" in e.dialog_event.features
        for e in env.events
    ):
        return d
    events = []
    for e in env.events:
        de = e.dialog_event
        if de is not None and de.speaker_uri == person and "audio" in de.features:
            features = {k: v for k, v in de.features.items() if k != "audio"}
            de = de.model_copy(update={"features": features})
            e = e.model_copy(
                update={"parameters": e.parameters.model_copy(update={"dialog_event": de})}
            )
        events.append(e)
    return Delivery(d.recipient, env.model_copy(update={"events": events}), d.awaits_reply)


def person_reached_at(d: Delivery, person: str, url: str) -> Delivery:
    """``d`` with the ``person``'s serviceUrl (in ``sender`` and in ``conversants``) made
    ``url``, the recipient's inbound URL."""
    env = d.envelope
    sender = env.sender
    if sender.speaker_uri == person:
        sender = sender.model_copy(update={"service_url": url})
    conv = env.conversation
    if conv.conversants:
        conversants = [
            c.model_copy(
                update={"identification": c.identification.model_copy(update={"service_url": url})}
            )
            if c.identification.speaker_uri == person
            else c
            for c in conv.conversants
        ]
        conv = conv.model_copy(update={"conversants": conversants})
    return Delivery(
        d.recipient,
        env.model_copy(update={"sender": sender, "conversation": conv}),
        d.awaits_reply,
    )
