"""Floor events in words (gateway/proxy/floor_events.py)."""

from __future__ import annotations

from gateway.ofp import Event, EventType
from gateway.proxy.floor_events import describe, reason_words


def _name(uri: str | None) -> str:
    return {"tag:user": "you", "tag:clock": "Clock"}.get(uri or "", "someone")


def test_reasons_in_words() -> None:
    assert reason_words("@timedOut") == "it timed out"
    assert reason_words("@brokenPolicy kept interrupting") == "a broken policy; kept interrupting"
    assert reason_words("@custom_token") == "custom_token"
    assert reason_words(None) == ""
    assert len(reason_words("x" * 5000)) == 200


def test_each_told_event() -> None:
    def ev(kind: EventType, **kw) -> Event:
        return Event(event_type=kind, **kw)

    assert describe(ev(EventType.BYE), "Parrot", _name) == "Parrot left the conversation."
    assert (
        describe(ev(EventType.DECLINE_INVITE, reason="@outOfDomain"), "Weather", _name)
        == "Weather declined the invitation (it is out of its domain)."
    )
    assert describe(ev(EventType.YIELD_FLOOR), "Clock", _name) == "Clock yielded the floor."
    assert (
        describe(ev(EventType.REVOKE_FLOOR, to={"speakerUri": "tag:clock"}), "Chair", _name)
        == "Chair took the floor from Clock."
    )
    assert (
        describe(
            ev(EventType.UNINVITE, to={"speakerUri": "tag:x"}, reason="@error"), "Chair", _name
        )
        == "Chair removed someone from the conversation (an error)."
    )
    assert describe(ev(EventType.GRANT_FLOOR), "Floor", _name) is None
