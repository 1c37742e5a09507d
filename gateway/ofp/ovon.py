"""OVON 0.9 envelopes (the ``ovon`` key): read into the 1.1 model, and written for 0.9 agents.

Read: ``whisper`` becomes a private utterance, ``sender.from`` the service URL (and, lacking
anything better, the speaker URI), ``speakerId`` the dialog event's ``speakerUri``, ``to`` as a
URL string or ``{url}`` a ``to.serviceUrl``; ``responseCode`` and ``persistentState`` are dropped;
0.9.2's manifest events map to ``getManifests`` / ``publishManifests``.

Write: an agent that spoke 0.9 is answered in 0.9.0, the version every 0.9 reader accepts. Events
0.9 cannot express (floor events, manifests) are left out, since a 0.9 agent could not act on them.
"""

from __future__ import annotations

from typing import Any

from gateway.ofp.envelope import Envelope, EventType

OVON_VERSION = "0.9.0"


def _target(value: Any) -> str | None:
    if isinstance(value, str) and value:
        return value
    if isinstance(value, dict):
        url = value.get("url") or value.get("serviceUrl")
        return url if isinstance(url, str) and url else None
    return None


def _params(ev: dict[str, Any]) -> dict[str, Any]:
    params = ev.get("parameters")
    return params if isinstance(params, dict) else {}


def from_ovon(body: Any) -> Any:
    """Rewrite an OVON 0.9 envelope body as a 1.1 ``openFloor`` body (a plain dict)."""
    if not isinstance(body, dict):
        return body
    out: dict[str, Any] = {"schema": body.get("schema") or {"version": "0.9"}}
    conv = body.get("conversation")
    out["conversation"] = {"id": conv.get("id")} if isinstance(conv, dict) else conv
    sender = body.get("sender")
    sender_to: str | None = None
    if isinstance(sender, dict):
        frm = sender.get("from") or sender.get("serviceUrl")
        out["sender"] = {"speakerUri": sender.get("speakerUri") or frm, "serviceUrl": frm}
        sender_to = _target(sender.get("to"))
    else:
        out["sender"] = sender
    raw = body.get("events")
    if not isinstance(raw, list):
        out["events"] = raw
        return out

    invitee = next(
        (
            _target(ev.get("to")) or _target(_params(ev).get("to"))
            for ev in raw
            if isinstance(ev, dict) and ev.get("eventType") == "invite"
        ),
        None,
    )
    events: list[Any] = []
    for ev in raw:
        if not isinstance(ev, dict):
            events.append(ev)
            continue
        kind = ev.get("eventType")
        params = _params(ev)
        to = _target(ev.get("to")) or _target(params.get("to"))
        new: dict[str, Any] = {"eventType": kind}
        if kind in ("utterance", "whisper"):
            new["eventType"] = "utterance"
            new["parameters"] = {"dialogEvent": params.get("dialogEvent")}
            if kind == "whisper":
                target = to or invitee or sender_to
                if target is None:
                    # A whisper with nobody named cannot be routed privately; keep it out.
                    new["eventType"] = "whisper"
                else:
                    new["to"] = {"serviceUrl": target, "private": True}
            elif to:
                new["to"] = {"serviceUrl": to, "private": bool(ev.get("private"))}
        elif kind == "invite":
            if to:
                new["to"] = {"serviceUrl": to}
            if isinstance(params.get("dialogHistory"), list):
                new["parameters"] = {"dialogHistory": params["dialogHistory"]}
        elif kind in ("requestManifest", "findAssistant"):
            new["eventType"] = "getManifests"
            new["parameters"] = {
                "recommendScope": "internal" if kind == "requestManifest" else "external"
            }
            if to or sender_to:
                new["to"] = {"serviceUrl": to or sender_to}
        elif kind in ("publishManifest", "proposeAssistant"):
            new["eventType"] = "publishManifests"
            found = params.get("manifest") or params.get("manifests") or []
            new["parameters"] = {
                "servicingManifests": found if isinstance(found, list) else [found]
            }
        else:
            new = dict(ev)
            if to:
                new["to"] = {"serviceUrl": to}
        if "reason" in ev:
            new["reason"] = ev["reason"]
        events.append(new)
    out["events"] = events
    return out


def to_ovon(envelope: Envelope) -> dict[str, Any]:
    """Write ``envelope`` as an OVON 0.9.0 envelope (validates against the 0.9.0 schema)."""

    sender = envelope.sender.service_url or envelope.sender.speaker_uri
    events: list[dict[str, Any]] = []
    for ev in envelope.events:
        if ev.event_type is EventType.UTTERANCE and ev.dialog_event is not None:
            de = ev.dialog_event.to_wire()
            de.setdefault("speakerId", de.get("speakerUri"))
            kind = "whisper" if ev.is_private else "utterance"
            events.append({"eventType": kind, "parameters": {"dialogEvent": de}})
        elif ev.event_type is EventType.INVITE:
            url = ev.to.service_url if ev.to else None
            events.append(
                {"eventType": "invite", "parameters": {"to": {"url": url}} if url else {}}
            )
        elif ev.event_type is EventType.BYE:
            events.append({"eventType": "bye"})
    return {
        "ovon": {
            "schema": {"version": OVON_VERSION},
            "conversation": {"id": envelope.conversation.id},
            "sender": {"from": sender},
            "events": events,
        }
    }
