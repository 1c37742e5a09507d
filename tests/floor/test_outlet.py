"""The floor host reaches the person's side only through :class:`PersonOutlet`, one outlet at a
time, and every outlet in the gateway has all of its methods."""

from __future__ import annotations

import inspect
from typing import Any

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.floor.host import FloorHost, user_identity
from gateway.floor.outlet import PersonOutlet
from gateway.ofp import Event, EventType, text_event
from gateway.proxy.session import _Outlet
from gateway.talk.text import Talk
from gateway.talk.voice import Overheard
from gateway.testing.outlet import Collector

#: What the protocol declares (its methods, not what Protocol itself carries).
DECLARED = {
    name
    for name, member in vars(PersonOutlet).items()
    if not name.startswith("_") and inspect.isfunction(member)
}


class Watched(Collector):
    """A collector that notes every attribute the host reads of it."""

    def __init__(self) -> None:
        super().__init__()
        self.read: set[str] = set()

    def __getattribute__(self, name: str) -> Any:
        if not name.startswith("_") and name not in ("read", "heard", "notices", "floors", "said"):
            object.__getattribute__(self, "read").add(name)
        return object.__getattribute__(self, name)


def test_the_protocol_declares_the_five_ways_to_the_person() -> None:
    assert {"delivered", "notified", "floor_changed", "person_said", "open_stream"} == DECLARED


def test_every_outlet_in_the_gateway_has_every_method() -> None:
    for outlet in (Collector, Talk, _Outlet, Overheard):
        missing = {m for m in DECLARED if not callable(getattr(outlet, m, None))}
        assert not missing, f"{outlet.__name__} lacks {missing}"


def _utterance(speaker_uri: str, text: str) -> Event:
    return Event(
        event_type=EventType.UTTERANCE,
        parameters={"dialog_event": text_event(speaker_uri, text)},
    )


async def test_the_host_reaches_the_person_only_through_the_outlet() -> None:
    directory = AgentDirectory(AddressPolicy([]))
    user = user_identity("user:1", name="You")
    first, second = Watched(), Watched()
    conv = FloorHost("c-outlet", user=user, resolve=directory.resolve, outlet=first)
    try:
        await conv.say([Event(event_type=EventType.INVITE, to={"serviceUrl": "builtin:parrot"})])
        assert await conv.wait_idle(10)
        assert first.floors and len(first.floors[-1]) == 2, "the parrot joined: a floor change"
        assert first.said and first.heard, "the invite went in; the parrot's greeting came back"

        # A proxy taking the conversation over (a page reloaded) takes all of it.
        conv.attach(second)
        heard_before = len(first.heard)
        await conv.say([_utterance(user.speaker_uri, "hello there")])
        assert await conv.wait_idle(10)
        texts = [e.dialog_event.text() for env in second.heard for e in env.events if e.dialog_event]
        assert any("hello there" in t for t in texts), texts
        assert len(second.said) == 1
        assert len(first.heard) == heard_before and len(first.said) == 1
        conv.show_floor()
        assert second.floors, "show_floor goes to the attached outlet"
    finally:
        await conv.close()
        await directory.aclose()
    assert first.read | second.read <= DECLARED, "the host read something the protocol lacks"
    assert {"delivered", "person_said", "floor_changed"} <= first.read | second.read
