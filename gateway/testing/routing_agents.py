"""Agents for routing tests through ``serve``: the built-in agents' own logic behind a real HTTP
server (:class:`~gateway.testing.wire_agents.WireAgent`), one of which can be made to hang, and a
generalist that answers anything without a language model.

A hung agent sits on every envelope with an utterance until it is let go: what a stuck agent
looks like to the gateway (after Limits.max_timeouts turns with a miss it is uninvited).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, builtin_manifest
from gateway.ofp import EventType, parse_envelope
from gateway.testing.wire_agents import Respond


class Generalist(BuiltinAgent):
    """Answers anything: "<name> heard: <what was said>" (its manifest says "anything", so the
    person's addressing falls back on it)."""

    def __init__(self, service_url: str, name: str = "Generalist") -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                name,
                "Answers questions and talks about anything.",
                [name.lower()],
                ["A general agent for tests."],
            )
        )
        self.greeting = f"Hi, I'm {name}."

    def answer(self, heard: Heard) -> Answer | None:
        """What it heard, said back with its name (so a test sees who answered)."""
        return Answer(f"{self.manifest.identification.display_name} heard: {heard.text}")


class Hang:
    """Whether an agent hangs now: :meth:`start` makes it sit on the person's utterances,
    :meth:`stop` lets them (and the next ones) through."""

    def __init__(self) -> None:
        self._free = asyncio.Event()
        self._free.set()

    def start(self) -> None:
        """From now on, utterances are held."""
        self._free.clear()

    def stop(self) -> None:
        """Let the held utterances go, and answer again."""
        self._free.set()

    async def wait(self) -> None:
        """Until the agent is let go (at once when it is not hanging)."""
        await self._free.wait()


def served(agent: BuiltinAgent, hang: Hang | None = None) -> Respond:
    """``agent`` behind a :class:`WireAgent`: each body parsed, handled, its reply returned.
    With ``hang``, an envelope with an utterance waits until the hang is over."""

    async def respond(body: dict[str, Any]) -> tuple[int, dict[str, Any] | None]:
        envelope = parse_envelope(json.dumps(body))
        if hang is not None and any(e.event_type is EventType.UTTERANCE for e in envelope.events):
            await hang.wait()
        reply = await agent.handle(envelope)
        return 200, reply.to_wire()

    return respond
