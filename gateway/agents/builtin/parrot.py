"""Parrot: says back what it heard, in text and in SSML (a pause, then the words emphasised).

It repeats only what is addressed to it (``to`` naming it), or anything in a conversation with no
one else: in a room of agents, repeating every public utterance is not an answer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from xml.sax.saxutils import escape

from gateway.agents.builtin.base import (
    Answer,
    BuiltinAgent,
    Heard,
    builtin_manifest,
    local_now,
    one_to_one,
)
from gateway.agents.urls import BUILTIN_SCHEME


class Parrot(BuiltinAgent):
    """Repeats what is said to it: handy to test a voice path end to end."""

    greeting = "Hi, I'm Parrot. Say anything and I'll say it back."

    def __init__(
        self,
        service_url: str = f"{BUILTIN_SCHEME}parrot",
        *,
        now: Callable[[], datetime] = local_now,
    ) -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                "Parrot",
                "Says back whatever you say to it.",
                ["parrot", "repeat after me", "echo", "say it back"],
                ["Repeats what you say, to test that you are heard and answered."],
            ),
            now=now,
        )

    def answer(self, heard: Heard) -> Answer | None:
        """``You said: …`` with an SSML rendering of the same."""
        said = heard.text.strip()
        if not said or not (heard.addressed or one_to_one(heard.envelope)):
            return None
        ssml = (
            '<speak>You said: <break time="300ms"/>'
            f'<emphasis level="moderate">{escape(said)}</emphasis></speak>'
        )
        return Answer(f"You said: {said}", ssml)
