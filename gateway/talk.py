"""``python -m gateway talk``: one real conversation from the command line.

The person's proxy invites the agents, waits for their greetings, says the utterance, waits for
the replies and reports who said what. Everything goes through the same floor, agents and records
as the browser gateway.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gateway.conversation import Conversation, Notice, user_identity
from gateway.directory import AgentDirectory
from gateway.ofp import Envelope, Event, EventType, Sender, text_event

#: Seconds to wait for a remote agent's manifest before inviting it anyway.
MANIFEST_TIMEOUT = 3.0


@dataclass
class TalkResult:
    """What happened in one ``talk`` run."""

    conversation_id: str
    sent: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (speaker name, text)
    notices: list[Notice] = field(default_factory=list)
    reply_text: str = ""
    completed: bool = True

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "conversationId": self.conversation_id,
            "sent": self.sent,
            "received": self.received,
            "replyText": self.reply_text,
            "lines": [{"speaker": s, "text": t} for s, t in self.lines],
            "notices": [
                {"text": n.text, "reason": n.reason, "agent": n.agent} for n in self.notices
            ],
            "completed": self.completed,
        }


def _speaker_name(env: Envelope, speaker_uri: str) -> str:
    for c in env.conversation.conversants or []:
        if c.identification.speaker_uri == speaker_uri:
            return c.identification.display_name
    return speaker_uri


async def talk_text(
    text: str,
    agents: list[str],
    *,
    directory: AgentDirectory,
    recorder: Any = None,
    timeout: float = 30.0,
    on_line: Any = None,
) -> TalkResult:
    """Hold one text conversation; ``on_line(speaker, text)`` is called as lines arrive."""
    conv_id = f"conv:{uuid.uuid4()}"
    result = TalkResult(conv_id)
    phase = {"after_utterance": False}
    replies: list[str] = []

    def heard(env: Envelope) -> None:
        result.received.append(env.to_wire())
        for ev in env.events:
            de = ev.dialog_event
            if ev.event_type is EventType.UTTERANCE and de is not None:
                name = _speaker_name(env, de.speaker_uri)
                line = de.text()
                result.lines.append((name, line))
                if phase["after_utterance"]:
                    replies.append(line)
                if on_line:
                    on_line(name, line)

    def noticed(n: Notice) -> None:
        result.notices.append(n)
        if on_line:
            on_line("!", n.text)

    user = user_identity()
    if recorder is not None:
        recorder.conversation_started(
            conv_id, at=datetime.now(UTC), title=text[:80], user_speaker_uri=user.speaker_uri
        )
    conv = Conversation(
        conv_id,
        user=user,
        resolve=directory.resolve,
        on_user=heard,
        on_notice=noticed,
        recorder=recorder,
    )
    try:
        resolved = [(url, directory.resolve(url)) for url in agents]
        # Learn remote agents' names first, all at once and briefly: a slow manifest must not
        # hold up the conversation (the agent keeps a name made from its URL instead).
        fetches = [
            asyncio.wait_for(
                agent.fetch_manifest(conv_id, Sender(speaker_uri=user.speaker_uri)),
                MANIFEST_TIMEOUT,
            )
            for _, agent in resolved
            if hasattr(agent, "fetch_manifest")
        ]
        await asyncio.gather(*fetches, return_exceptions=True)
        invites = []
        for url, agent in resolved:
            conv.know(agent.manifest.identification)
            invites.append(Event(event_type=EventType.INVITE, to={"serviceUrl": url}))
        if invites:
            env = await conv.say(invites)
            result.sent.append(env.to_wire())
            result.completed &= await conv.wait_idle(timeout)
        phase["after_utterance"] = True
        utterance = Event(
            event_type=EventType.UTTERANCE,
            parameters={
                "dialog_event": text_event(
                    user.speaker_uri, text, start_time=datetime.now(UTC).isoformat()
                )
            },
        )
        result.lines.append((user.display_name, text))
        env = await conv.say([utterance])
        result.sent.append(env.to_wire())
        result.completed &= await conv.wait_idle(timeout)
    finally:
        await conv.close()
        if recorder is not None:
            recorder.conversation_ended(
                conv_id, at=datetime.now(UTC), status="completed" if result.completed else "timeout"
            )
    result.reply_text = " ".join(r for r in replies if r)
    return result


def run_talk(
    text: str,
    agents: list[str],
    *,
    directory_factory: Any,
    recorder: Any,
    timeout: float,
    on_line: Any = None,
) -> TalkResult:
    """Blocking wrapper for the CLI."""

    async def main() -> TalkResult:
        directory = directory_factory()
        try:
            return await talk_text(
                text,
                agents,
                directory=directory,
                recorder=recorder,
                timeout=timeout,
                on_line=on_line,
            )
        finally:
            await directory.aclose()

    return asyncio.run(main())
