"""``python -m gateway talk``: one real conversation from the command line.

The person's proxy invites the agents, waits for their greetings, says each utterance (each
``--text`` in order, or each line typed at the terminal), waits for the replies after each and
reports who said what. Each utterance is addressed as on the page (gateway/proxy/addressing.py):
"Clock, …" goes to the clock, a question to the agent best placed to answer it. Everything goes
through the same floor, agents and records as the browser gateway.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Callable, Iterable
from contextvars import Token
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gateway.agents.directory import AgentDirectory
from gateway.agents.urls import split_dialect
from gateway.agents.wire import WireListener, listen, stop_listening
from gateway.errors import ConfigError
from gateway.floor.host import FloorHost, limits, user_identity
from gateway.floor.notices import Notice
from gateway.ofp import Envelope, EnvelopeError, Event, EventType, Parameters, To, text_event
from gateway.ofp.jsonio import loads_external
from gateway.ofp.timestamps import rfc3339_in
from gateway.proxy.addressing import Addressing, Choice, candidates
from gateway.proxy.floor_events import TOLD, describe
from gateway.talk.settings import TalkSettings

if TYPE_CHECKING:
    from gateway.agents.streaming import ReplyStream
    from gateway.floor import Floor
    from gateway.records.base import Recorder

#: ``on_line(speaker, text)``: a line of the conversation as it happens (the terminal prints it).
LineSink = Callable[[str, str], None]
#: Makes the conversation's agent directory, inside the running event loop.
DirectoryFactory = Callable[[], AgentDirectory]


class NothingSaid(ConfigError):
    """``talk`` was given no ``--text``, no ``--wav``, and no line came from the terminal."""


@dataclass
class TalkResult:
    """What happened in one ``talk`` run."""

    conversation_id: str
    #: Every body sent to an agent and every body an agent sent back, as it was on the wire
    #: (parsed JSON; for in-process built-ins, the envelopes handed over and returned).
    sent: list[Any] = field(default_factory=list)
    received: list[Any] = field(default_factory=list)
    #: The person's side: what the person said into the floor, and what the floor delivered to
    #: them (the gateway's rewrite, with its conversation section).
    said: list[dict[str, Any]] = field(default_factory=list)
    heard: list[dict[str, Any]] = field(default_factory=list)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (speaker name, text)
    notices: list[Notice] = field(default_factory=list)
    reply_text: str = ""
    completed: bool = True
    #: Voice runs only: what was heard, where the reply audio went, and stage timings.
    transcript: str | None = None
    reply_audio: str | None = None
    timings_ms: dict[str, Any] | None = None
    utterances: list[dict[str, Any]] = field(default_factory=list)
    #: Each utterance of the person: whom it went to (``None``: everyone) and why.
    addressed: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """The ``--json`` object."""
        return {
            "conversationId": self.conversation_id,
            "sent": self.sent,
            "received": self.received,
            "said": self.said,
            "heard": self.heard,
            "replyText": self.reply_text,
            "lines": [{"speaker": s, "text": t} for s, t in self.lines],
            "notices": [
                {"text": n.text, "reason": n.reason, "agent": n.agent} for n in self.notices
            ],
            "completed": self.completed,
            "addressed": self.addressed,
            **(
                {
                    "transcript": self.transcript,
                    "replyAudio": self.reply_audio,
                    "timingsMs": self.timings_ms,
                    "utterances": self.utterances,
                }
                if self.transcript is not None
                else {}
            ),
        }


def _speaker_name(env: Envelope, speaker_uri: str) -> str:
    for c in env.conversation.conversants or []:
        if c.identification.speaker_uri == speaker_uri:
            return c.identification.display_name
    return speaker_uri


class Talk:
    """A conversation held from the terminal: the person's side collects what happens."""

    def __init__(
        self,
        directory: AgentDirectory,
        recorder: Recorder | None = None,
        on_line: LineSink | None = None,
        *,
        max_agent_exchanges: int | None = None,
        slow_notice_s: float | None = None,
    ) -> None:
        self.directory = directory
        self.recorder = recorder
        self.on_line = on_line
        self.result = TalkResult(f"conv:{uuid.uuid4()}")
        self.user = user_identity()
        self.replies: list[str] = []
        self.after_utterance = False
        self.conv = FloorHost(
            self.result.conversation_id,
            user=self.user,
            resolve=directory.resolve,
            outlet=self,
            recorder=recorder,
            limits=limits(max_agent_exchanges, slow_notice_s),
        )
        self.addressing = Addressing()
        self._names: dict[str, str] = {}
        self._wire_token: Token[WireListener | None] | None = None

    def wire(self, direction: str, agent_url: str, body: bytes) -> None:
        """One body that went to (``sent``) or came from (``received``) an agent."""
        try:  # the boundary's reading (surrogates made U+FFFD; notes: logged by the parse)
            value: Any = loads_external(body, notes=[])
        except EnvelopeError:  # not JSON this gateway reads: keep what was on the wire, as text
            value = body.decode("utf-8", errors="replace")
        (self.result.sent if direction == "sent" else self.result.received).append(value)

    def heard(self, env: Envelope) -> None:
        """Every envelope delivered to the person."""
        self.result.heard.append(env.to_wire())
        for c in env.conversation.conversants or []:
            self._names[c.identification.speaker_uri] = c.identification.display_name
        for ev in env.events:
            if ev.event_type in TOLD:
                self._tell(env, ev)
                continue
            de = ev.dialog_event
            if ev.event_type is EventType.UTTERANCE and de is not None:
                name = _speaker_name(env, de.speaker_uri)
                line = de.text()
                self.result.lines.append((name, line))
                if self.after_utterance:
                    self.replies.append(line)
                if self.on_line:
                    self.on_line(name, line)

    # The person's outlet (gateway.floor.outlet.PersonOutlet): what the floor host tells talk.
    async def delivered(self, envelope: Envelope) -> None:
        """An envelope delivered to the person: :meth:`heard`."""
        self.heard(envelope)

    async def notified(self, notice: Notice) -> None:
        """What the gateway tells the person: :meth:`noticed`."""
        self.noticed(notice)

    def floor_changed(self, floor: Floor) -> None:
        """Nothing: talk's transcript has no floor to show (agents joining are lines)."""

    def person_said(self, envelope: Envelope) -> None:
        """The person's envelope as the floor received it, for ``--json``."""
        self.result.said.append(envelope.to_wire())

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        """None: talk takes agents' replies whole."""
        return None

    def _tell(self, env: Envelope, event: Event) -> None:
        """A floor event an agent sent (it left, yielded, removed another…), in words."""
        sender = env.sender.speaker_uri
        if sender == self.conv.floor.manager.speaker_uri:
            return  # the floor's own come as notices from the host
        me = self.user.speaker_uri

        def name_of(uri: str | None) -> str:
            return "you" if uri == me else self._names.get(uri or "", "someone")

        text = describe(event, self._names.get(sender, "An agent"), name_of)
        if text is not None:
            self.noticed(Notice(text, event.reason or "", sender))

    def noticed(self, n: Notice) -> None:
        """What the gateway tells the person."""
        self.result.notices.append(n)
        if self.on_line:
            self.on_line("!", n.text)

    async def start(
        self, agents: list[str], title: str, timeout: float, convener: str | None = None
    ) -> None:
        """Invite the agents and wait for their greetings."""
        # Every exchange with an agent from here on (in this task and the delivery tasks it
        # starts) is reported to self.wire; finish() stops it.
        self._wire_token = listen(self.wire)
        if self.recorder is not None:
            self.recorder.conversation_started(
                self.result.conversation_id,
                at=datetime.now(UTC),
                title=title[:80],
                user_speaker_uri=self.user.speaker_uri,
            )
        for url in agents:
            self.directory.resolve(url)  # an unknown or refused address fails here, clearly
        # Learn remote agents' names first, all at once and briefly: a slow manifest must not
        # hold up the conversation (the agent keeps a name made from its URL instead).
        known = await asyncio.gather(*(self.conv.learn_manifest(url) for url in agents))
        # Invited by the serviceUrl they call themselves (an ovon+ prefix is for the directory).
        invites = [
            Event(
                event_type=EventType.INVITE,
                to=To(service_url=ident.service_url if ident else split_dialect(url)[0]),
            )
            for url, ident in zip(agents, known, strict=True)
        ]
        if invites:
            await self.conv.say(invites)
            idle = await self.conv.wait_idle(timeout)  # awaited first: see utter
            self.result.completed &= idle
        if convener:
            self.directory.resolve(convener)  # an unknown or refused address fails here, clearly
            await self.conv.appoint_convener(convener, timeout=timeout)
        self.after_utterance = True

    def choose(self, text: str) -> Choice:
        """Whom ``text`` is for, among the agents on the floor now."""
        return self.addressing.choose(
            text, candidates(self.conv.agents()), routing=self.conv.routing
        )

    async def utter(self, text: str, timeout: float) -> None:
        """Say ``text`` (addressed as on the page) and wait for the replies."""
        choice = self.choose(text)
        self.result.lines.append((self.user.display_name, text))
        self.result.addressed.append(
            {
                "text": text,
                "to": choice.to.speaker_uri if choice.to else None,
                "toName": choice.to.name if choice.to else None,
                "why": choice.why,
            }
        )
        if self.on_line:
            self.on_line("you", text)
            self.on_line("  to", f"{choice.to.name if choice.to else 'everyone'} ({choice.why})")
        utterance = Event(
            event_type=EventType.UTTERANCE,
            to=choice.event_to(),
            parameters=Parameters(
                dialog_event=text_event(self.user.speaker_uri, text, start_time=rfc3339_in())
            ),
        )
        await self.conv.say([utterance], then=choice.then)
        # Awaited first: a notice during the wait may clear `completed` (talk --wav's failing
        # speech service), and `x &= await …` would write back the value read before the wait.
        idle = await self.conv.wait_idle(timeout)
        self.result.completed &= idle

    async def finish(self) -> TalkResult:
        """Say goodbye to the agents (bounded: see Limits.bye_timeout_s), close the conversation
        and return what happened."""
        try:
            await self.conv.end()
        finally:
            await self.conv.close()
            if self._wire_token is not None:
                stop_listening(self._wire_token)
                self._wire_token = None
        if self.recorder is not None:
            self.recorder.conversation_ended(
                self.result.conversation_id,
                at=datetime.now(UTC),
                status="completed" if self.result.completed else "timeout",
            )
        self.result.reply_text = " ".join(r for r in self.replies if r)
        return self.result


async def _lines(texts: Iterable[str] | AsyncIterator[str]) -> AsyncIterator[str]:
    if isinstance(texts, AsyncIterator):
        async for t in texts:
            yield t
    else:
        for t in texts:
            yield t


async def terminal_lines(prompt: bool | None = None) -> AsyncIterator[str]:
    """The lines typed at the terminal (or piped in), until end of input; blank ones skipped.
    ``prompt`` (default: when the input is a terminal) shows ``you> `` on stderr before each."""
    stdin = sys.stdin
    try:
        interactive = stdin.isatty() if prompt is None else prompt
    except (OSError, ValueError):
        interactive = False
    while True:
        if interactive:
            print("you> ", end="", file=sys.stderr, flush=True)
        try:
            line = await asyncio.to_thread(stdin.readline)
        except (OSError, ValueError):  # no input at all (closed, or a test runner's)
            return
        if not line:
            return
        if line.strip():
            yield line.strip()


async def talk_text(
    texts: str | Iterable[str] | AsyncIterator[str],
    agents: list[str],
    *,
    directory: AgentDirectory,
    recorder: Recorder | None = None,
    timeout: float = TalkSettings.timeout_s,
    on_line: LineSink | None = None,
    convener: str | None = None,
    max_agent_exchanges: int | None = None,
    slow_notice_s: float | None = None,
) -> TalkResult:
    """Hold one text conversation: each of ``texts`` (one string, several, or lines as they
    come) is an utterance, said once the replies to the one before have come;
    ``on_line(speaker, text)`` is called as lines arrive. :class:`NothingSaid` when no text
    came at all."""
    if isinstance(texts, str):
        texts = [texts]
    talk = Talk(
        directory,
        recorder,
        on_line,
        max_agent_exchanges=max_agent_exchanges,
        slow_notice_s=slow_notice_s,
    )
    said = 0
    try:
        title = next(iter(texts), "") if isinstance(texts, list | tuple) else ""
        await talk.start(agents, title or "a conversation from the terminal", timeout, convener)
        async for text in _lines(texts):
            await talk.utter(text, timeout)
            said += 1
    finally:
        result = await talk.finish()
    if not said:
        raise NothingSaid(
            'nothing was said: give --text "..." (repeatable), --wav FILE, or type lines'
        )
    return result


def run_talk(
    settings: TalkSettings,
    *,
    directory_factory: DirectoryFactory,
    recorder: Recorder | None,
    on_line: LineSink | None = None,
) -> TalkResult:
    """``talk --text`` from the command line: blocking."""

    async def main() -> TalkResult:
        directory = directory_factory()
        try:
            return await talk_text(
                settings.texts or terminal_lines(),
                list(settings.agents),
                directory=directory,
                recorder=recorder,
                timeout=settings.timeout_s,
                on_line=on_line,
                convener=settings.convener,
                max_agent_exchanges=settings.max_agent_exchanges,
                slow_notice_s=settings.slow_notice_s,
            )
        finally:
            await directory.aclose()

    return asyncio.run(main())
