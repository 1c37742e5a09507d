"""The page's copy of the names rendered as JavaScript (gateway/server/protocol_js.py)."""

from __future__ import annotations

import enum

from gateway.server.protocol_js import render_js


class _Mood(enum.StrEnum):
    CALM = "calm"
    BUSY = "busy"


def test_names_become_frozen_objects_in_the_order_given() -> None:
    js = render_js(["hello", "text"], ["welcome"], _Mood)
    assert (
        'export const TO_GATEWAY = Object.freeze({\n  hello: "hello",\n  text: "text",\n});' in js
    )
    assert 'export const FROM_GATEWAY = Object.freeze({\n  welcome: "welcome",\n});' in js
    assert 'export const STATES = Object.freeze({\n  calm: "calm",\n  busy: "busy",\n});' in js
    assert js.startswith("// The page <-> gateway message names")
