"""Parrot: says back what it heard, in text and in SSML (a pause, then the words emphasised).

Like every built-in it follows §2.1: what is addressed (``to``) to another conversant it leaves
alone, so in a room of agents it repeats only what is said to it — or to everyone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from xml.sax.saxutils import escape

from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, builtin_manifest, local_now
from gateway.agents.urls import BUILTIN_SCHEME


class Parrot(BuiltinAgent):
    """Repeats every utterance it answers: handy to test a voice path end to end."""

    greeting = "Hi, I'm Parrot. Say anything and I'll say it back."

    def __init__(
        self, service_url: str = f"{BUILTIN_SCHEME}parrot", *, now: Callable[[], datetime] = local_now
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
        if not said:
            return None
        ssml = (
            '<speak>You said: <break time="300ms"/>'
            f'<emphasis level="moderate">{escape(said)}</emphasis></speak>'
        )
        return Answer(f"You said: {said}", ssml)
