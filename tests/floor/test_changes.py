"""What a change of the floor means (gateway/floor/changes.py), sans I/O: the host records,
revokes and notifies on what the watch says, tested here without a host."""

from __future__ import annotations

from gateway.floor.changes import FloorChange, FloorWatch, Snapshot
from gateway.floor.notices import ConvenerGone
from tests.floor.helpers import floor_with


def snap(*conversants: str, granted: tuple[str, ...] = (), convener: str | None = None) -> Snapshot:
    return Snapshot(conversants, granted, convener)


def test_the_first_floor_is_a_change_and_an_unchanged_one_is_not() -> None:
    watch = FloorWatch()
    assert watch.seen(snap("user")) == FloorChange(conversants_changed=False)
    assert watch.seen(snap("user")) is None
    assert watch.seen(snap("user"), force=True) == FloorChange(conversants_changed=False)


def test_a_restored_floor_is_not_new() -> None:
    watch = FloorWatch(snap("user", "clock"))
    assert watch.seen(snap("user", "clock")) is None
    assert watch.seen(snap("user")) == FloorChange(conversants_changed=True)


def test_conversants_joining_or_leaving_is_a_change_of_conversants_the_floor_alone_is_not() -> None:
    watch = FloorWatch(snap("user"))
    assert watch.seen(snap("user", "clock")) == FloorChange(conversants_changed=True)
    assert watch.seen(snap("user", "clock", granted=("clock",))) == FloorChange(False)
    assert watch.seen(snap("user")) == FloorChange(conversants_changed=True)


def test_the_convener_gone_is_told_once_by_its_speaker_uri() -> None:
    watch = FloorWatch(snap("user", "chair", convener="chair"))
    change = watch.seen(snap("user", "chair"))  # it lost the role (failed), still on the floor
    assert change == FloorChange(False, ConvenerGone("chair"))
    assert watch.seen(snap("user")) == FloorChange(conversants_changed=True)  # told already


def test_a_convener_being_appointed_that_leaves_is_not_news() -> None:
    watch = FloorWatch(snap("user", "chair", convener="chair"))
    watch.appointing = "chair"
    assert watch.seen(snap("user")) == FloorChange(conversants_changed=True)
    watch = FloorWatch(snap("user", "chair", convener="chair"))
    watch.appointing = "another"
    assert watch.seen(snap("user")) == FloorChange(True, ConvenerGone("chair"))


def test_a_snapshot_is_the_floor_as_it_is() -> None:
    floor = floor_with("user", "chair", "clock", convener="chair")
    s = Snapshot.of(floor)
    assert s.convener == "tag:chair"
    assert s.conversants == tuple(i.speaker_uri for i in floor.conversants)
    assert s.floor_granted == tuple(floor.floor_granted)
