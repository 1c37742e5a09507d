"""Assistant: an Open Floor agent whose words come from a language model.

Any OpenAI-compatible chat endpoint will do (``--llm-url``: Ollama, llama.cpp's server, vLLM,
OpenAI); without one it runs on the embedded llama.cpp with SmolLM2-135M
(:mod:`gateway.llm`). Its memory is the conversation: every public utterance it hears on the
floor, other agents' too, labelled by speaker, plus the ``dialogHistory`` of its invite, trimmed
to a token budget (:mod:`gateway.llm.memory`). It answers as every built-in does (§2.1, see
:mod:`gateway.agents.builtin.base`): what is addressed to it, and a person's unaddressed
utterances.

In process, the answer streams (:mod:`gateway.agents.streaming`): each sentence is handed to the
person's proxy as soon as it is complete, and a barge-in stops the generation. The reply
envelope, over HTTP or in process, holds the whole utterance: OFP 1.1.0 has no partial
utterances.

A failure of the model (unreachable, 401, 500, a stall, garbage) is never the conversation's:
the person hears a short apology, what was already said stands, and the failure is counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime

from gateway.agents.builtin.base import (
    MAX_CONVERSATIONS,
    Answer,
    BuiltinAgent,
    Heard,
    builtin_manifest,
    local_now,
)
from gateway.agents.builtin.clock import person_offset
from gateway.agents.streaming import ReplyStream, StreamOpener, reply_streams
from gateway.agents.urls import BUILTIN_SCHEME
from gateway.floor.opening import is_greeting
from gateway.llm.client import Capped, ChatMessage
from gateway.llm.errors import LlmError
from gateway.llm.grounding import acknowledgement, grounding
from gateway.llm.memory import Transcript, chat_messages
from gateway.llm.model import LanguageModel
from gateway.llm.persona import Persona, load_persona
from gateway.llm.settings import LlmSettings
from gateway.llm.speakable import SentenceSplitter, speakable
from gateway.ofp import Conversation, Envelope, EventType, Sender, text_event
from gateway.ofp.timestamps import rfc3339

#: What the person hears when the model fails before saying anything.
APOLOGY = "Sorry, I can't answer that right now."
#: What the person hears when the model fails part-way through an answer.
APOLOGY_CUT = "Sorry, I lost my train of thought."
#: Stands in the base class's reply for the answer being generated (never sent).
_PENDING = "\x00pending"


class Assistant(BuiltinAgent):
    """A language-model agent (see the module docstring)."""

    def __init__(
        self,
        service_url: str = f"{BUILTIN_SCHEME}assistant",
        *,
        settings: LlmSettings | None = None,
        model: LanguageModel | None = None,
        persona: Persona | None = None,
        now: Callable[[], datetime] = local_now,
    ) -> None:
        self.model = model or LanguageModel(settings)
        self.persona = persona or load_persona(self.model.settings.persona_file)
        p = self.persona
        super().__init__(
            builtin_manifest(
                service_url, p.name, p.synopsis, list(p.keyphrases), list(p.descriptions)
            ),
            now=now,
        )
        self.greeting = p.greeting
        self._transcripts: OrderedDict[str, Transcript] = OrderedDict()

    async def handle(self, envelope: Envelope) -> Envelope:
        """Remember what was said, decide (as every built-in) whether to answer, then generate
        the answer, streaming it when the person's proxy listens in process."""
        self._remember(envelope)
        events = self.respond(envelope)
        for i, event in enumerate(events):
            de = event.dialog_event
            if (
                event.event_type is EventType.UTTERANCE
                and de is not None
                and de.text() not in (_PENDING, self.greeting)
            ):  # an answer not from the model: remembered as said all the same
                self._transcript(envelope.conversation.id).add(
                    self.persona.name, de.text(), mine=True, event_id=de.id
                )
            if event.event_type is EventType.UTTERANCE and de is not None and de.text() == _PENDING:
                private = event.to is not None and bool(event.to.private)
                system = self.system_prompt(envelope)
                text, reply = await self._generate(
                    envelope.conversation.id, de.id, private=private, system=system
                )
                final = text_event(self.speaker_uri, text, start_time=rfc3339(self._now()))
                events[i] = event.model_copy(
                    update={
                        "parameters": event.parameters.model_copy(
                            update={"dialog_event": final.model_copy(update={"id": de.id})}
                        )
                    }
                )
                # Its memory holds what the person heard: a reply stopped part-way (while it
                # was generated, or later while it played) is remembered as far as it was
                # played; the record keeps all that was sent.
                transcript = self._transcript(envelope.conversation.id)
                heard = reply.heard
                transcript.add(
                    self.persona.name, text if heard is None else heard, mine=True, event_id=de.id
                )
                reply.when_stopped(functools.partial(transcript.heard, de.id))
        ident = self.manifest.identification
        return Envelope(
            conversation=Conversation(id=envelope.conversation.id),
            sender=Sender(speaker_uri=ident.speaker_uri, service_url=ident.service_url),
            events=events,
        )

    def answer(self, heard: Heard) -> Answer | None:
        """Every question is answered by the model (:meth:`handle` fills the words in), but
        the person stating facts about themselves is acknowledged ("Nice to meet you, Ada.") and
        asking what they said is told it from those facts ("Your name is Ada."), without the
        model (gateway/llm/grounding.py)."""
        if not heard.text.strip():
            return None
        facts = self._transcript(heard.envelope.conversation.id).facts
        said = acknowledgement(heard.text) or facts.recall(heard.text)
        return Answer(said) if said is not None else Answer(_PENDING)

    async def aclose(self) -> None:
        """Forget every conversation and let go of the model."""
        await super().aclose()
        self._transcripts.clear()
        await self.model.aclose()

    # -- the conversation -------------------------------------------------------------------

    def _transcript(self, conv_id: str) -> Transcript:
        transcript = self._transcripts.pop(conv_id, None) or Transcript()
        self._transcripts[conv_id] = transcript
        if len(self._transcripts) > MAX_CONVERSATIONS:
            self._transcripts.popitem(last=False)
        return transcript

    def _remember(self, envelope: Envelope) -> None:
        """The public utterances of ``envelope`` and the dialogHistory of an invite to this
        agent, by speaker name."""
        names = {
            c.identification.speaker_uri: c.identification.display_name
            for c in envelope.conversation.conversants or ()
        }
        transcript = self._transcript(envelope.conversation.id)
        conversants = envelope.conversation.conversants
        # The person's own words (role "user"; with no conversants listed, a 1:1 conversation
        # with whoever sent it) are where their facts come from.
        people = (
            {envelope.sender.speaker_uri}
            if conversants is None
            else {
                c.identification.speaker_uri
                for c in conversants
                if (c.identification.role or "").lower() == "user"
            }
        )
        greeting = is_greeting(envelope)
        for event in envelope.events:
            said = []
            if event.event_type is EventType.INVITE and self._for_me(event):
                said = list(event.parameters.dialog_history or [])
            elif (event.event_type is EventType.UTTERANCE and not event.is_private) or (
                event.event_type is EventType.UTTERANCE and self._for_me(event)
            ):
                said = [event.dialog_event] if event.dialog_event is not None else []
            for de in said:
                mine = de.speaker_uri == self.speaker_uri
                if greeting and de.speaker_uri not in people:
                    # Other agents' greetings are left out: a small model takes them for its
                    # own (SmolLM2-135M answered every question with the parrot's greeting).
                    continue
                name = self.persona.name if mine else names.get(de.speaker_uri, "Someone")
                new = de.id not in transcript.seen
                transcript.add(name, de.text(), mine=mine, event_id=de.id)
                if new and not mine and de.speaker_uri in people:
                    transcript.facts.hear(de.text())

    def system_prompt(self, envelope: Envelope) -> str:
        """The persona's prompt, then what grounds the answer (gateway/llm/grounding.py): the
        date and time where the person is (the UTC offset of their utterance's ``startTime``,
        else this machine's), the other agents on the floor, what the person told it."""
        asked = [
            e.dialog_event.span.start_time
            for e in envelope.events
            if e.event_type is EventType.UTTERANCE
            and e.dialog_event is not None
            and e.dialog_event.speaker_uri != self.speaker_uri
        ]
        zone = person_offset(asked[-1] if asked else None)
        now = self._now()
        now = now if zone is None else now.astimezone(zone)
        agents = [
            (c.identification.display_name, c.identification.synopsis)
            for c in envelope.conversation.conversants or ()
            if c.identification.speaker_uri != self.speaker_uri
            and (c.identification.role or "").lower() != "user"
        ]
        facts = self._transcript(envelope.conversation.id).facts.sentences()
        told = grounding(now, agents=agents, facts=facts, extra=self.persona.context)
        return f"{self.persona.prompt}\n{told}"

    # -- the answer -------------------------------------------------------------------------

    async def _generate(
        self, conv_id: str, event_id: str, *, private: bool, system: str
    ) -> tuple[str, _Reply]:
        """The answer to the conversation so far: streamed sentence by sentence to the
        person's proxy when one listens, returned whole; an apology on failure. With it, the
        reply (what the person heard of it, when they stop it)."""
        reply = _Reply(None if private else reply_streams.get(), event_id, self)
        task = asyncio.ensure_future(self._sentences(conv_id, reply, system))
        reply.on_cancel = task.cancel
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our own caller was cancelled, not the generation by a barge-in
        except LlmError as err:
            if not isinstance(err, Capped):
                self.model.failed(err)
                reply.say(APOLOGY_CUT if reply.said else APOLOGY)
            else:
                self.model.capped += 1
        finally:
            reply.close()
        return " ".join(reply.said) or APOLOGY, reply

    async def messages(self, conv_id: str, system: str) -> list[ChatMessage]:
        """What the model is asked: ``system``, then the conversation within the memory budget
        (a subclass may change it: scripts/bench_dialogue.py's follow-up rewriting)."""
        transcript = self._transcript(conv_id)
        return chat_messages(system, transcript.said, self.model.settings.memory_tokens)

    async def _sentences(self, conv_id: str, reply: _Reply, system: str) -> None:
        """Stream the model's answer into ``reply``, one sentence at a time."""
        messages = await self.messages(conv_id, system)
        splitter = SentenceSplitter()
        most = self.model.settings.max_sentences
        deltas = self.model.stream(messages)
        try:
            async for delta in deltas:
                for raw in splitter.feed(delta):
                    reply.say(speakable(raw))
                if len(reply.said) >= most:
                    raise Capped(f"the answer was cut at {most} sentences")
        finally:
            # Closing the stream closes the HTTP response, which stops the server generating.
            with contextlib.suppress(Exception):
                await deltas.aclose()
        # Only an answer that ended is finished by its last words: one cut off (a failure, the
        # cap, a barge-in) ends at its last complete sentence.
        reply.say(speakable(splitter.flush()))


class _Reply:
    """One answer's sentences, and the stream they go to.

    The stream is opened at the first sentence, not when the question arrives: an open stream
    holds the person's place in their reply queue, and a generation still waiting for the model
    (one slot, 12 people asking) must not keep another agent's finished reply from being heard.
    """

    def __init__(self, opener: StreamOpener | None, event_id: str, agent: Assistant) -> None:
        self._opener = opener
        self._event_id = event_id
        self._agent = agent
        self._stream: ReplyStream | None = None
        self.said: list[str] = []
        self.on_cancel: Callable[[], object] | None = None

    def say(self, sentence: str) -> None:
        if not sentence:
            return
        self.said.append(sentence)
        if self._stream is None and self._opener is not None:
            agent = self._agent
            self._stream = self._opener(self._event_id, agent.speaker_uri, agent.persona.name)
            self._opener = None
            if self._stream is not None and self.on_cancel is not None:
                self._stream.on_cancel(self.on_cancel)
        if self._stream is not None:
            self._stream.put(sentence)

    @property
    def heard(self) -> str | None:
        """What the person heard of it, when they stopped it (None: not stopped)."""
        return None if self._stream is None else self._stream.heard

    def when_stopped(self, callback: Callable[[str], object]) -> None:
        """Call ``callback`` with what was heard if the person stops it later (while it still
        plays); not if it was stopped already."""
        stream = self._stream
        if stream is not None and stream.heard is None:
            stream.on_cancel(lambda: callback(stream.heard or ""))

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
