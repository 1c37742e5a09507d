"""What the assistant remembers of a conversation, as chat messages within a token budget.

The conversation is a list of public utterances, labelled by who said them: the person's and
other agents' become ``user`` messages ("Clock: It is ten past five."), the assistant's own
``assistant`` messages. :func:`chat_messages` keeps the newest that fit ``budget`` tokens after
the system prompt; older ones are left out whole (a message cut in half misleads a model more
than a missing one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from gateway.llm.client import ChatMessage
from gateway.llm.grounding import Facts

#: Utterances kept per conversation before the oldest is forgotten (the budget trims further).
MAX_REMEMBERED = 64
#: Longest utterance kept, in characters (a pasted essay must not fill the budget alone).
MAX_UTTERANCE_CHARS = 2000
#: Characters per token in English for the budget: a conservative estimate (SmolLM2's and
#: GPT's tokenizers average about four), since servers' tokenizers differ and none is asked.
CHARS_PER_TOKEN = 3.5
#: Tokens each message costs beyond its text (role markers of the chat template).
MESSAGE_OVERHEAD = 4
#: The assistant's own answers given back to the model, newest first: the last exchange is kept
#: verbatim (what a follow-up such as "and Germany?" refers to), older answers are left out. A
#: small model copies its own earlier answers: SmolLM2-135M, given all of them, answered "what is
#: two plus two?" with the capital of France it had given two turns before.
OWN_ANSWERS = 1


def estimate_tokens(text: str) -> int:
    """A cheap upper-leaning estimate of ``text``'s length in tokens."""
    return int(len(text) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD


@dataclass(frozen=True)
class Said:
    """One utterance heard on the floor."""

    speaker: str
    text: str
    mine: bool
    event_id: str | None = None


class Transcript:
    """A conversation's utterances, newest last (bounded by :data:`MAX_REMEMBERED`)."""

    def __init__(self) -> None:
        self.said: deque[Said] = deque(maxlen=MAX_REMEMBERED)
        self.seen: deque[str] = deque(maxlen=MAX_REMEMBERED)
        #: What the person said about themselves (their name…), told to the model each time.
        self.facts = Facts()

    def add(self, speaker: str, text: str, *, mine: bool, event_id: str | None = None) -> None:
        """Remember an utterance; one already remembered by ``event_id`` is not added again
        (an invite's dialogHistory repeats what was heard)."""
        text = " ".join(text.split())[:MAX_UTTERANCE_CHARS]
        if not text or (event_id is not None and event_id in self.seen):
            return
        if event_id is not None:
            self.seen.append(event_id)
        self.said.append(Said(speaker, text, mine, event_id))

    def heard(self, event_id: str, text: str) -> None:
        """Utterance ``event_id`` was stopped part-way: only ``text`` of it was heard, and that
        is what is remembered ("": none of it, and it is forgotten)."""
        text = " ".join(text.split())[:MAX_UTTERANCE_CHARS]
        for i, said in enumerate(self.said):
            if said.event_id == event_id:
                if text:
                    self.said[i] = Said(said.speaker, text, said.mine, event_id)
                else:
                    del self.said[i]
                return


def chat_messages(system: str, said: Iterable[Said], budget: int) -> list[ChatMessage]:
    """The system prompt, then the newest utterances that fit ``budget`` tokens, oldest first,
    of the assistant's own answers only the newest :data:`OWN_ANSWERS`. The newest utterance (the
    question) is always kept."""
    kept: list[ChatMessage] = []
    used = estimate_tokens(system)
    own = 0
    for s in reversed(list(said)):
        if s.mine:
            own += 1
            if own > OWN_ANSWERS:
                continue
        content = s.text if s.mine else f"{s.speaker}: {s.text}"
        cost = estimate_tokens(content)
        if kept and used + cost > budget:
            break
        used += cost
        kept.append(ChatMessage("assistant" if s.mine else "user", content))
    kept.reverse()
    # Chat templates want turns to alternate and to start with the user: merge neighbours.
    merged: list[ChatMessage] = []
    for m in kept:
        if merged and merged[-1].role == m.role:
            merged[-1] = ChatMessage(m.role, f"{merged[-1].content}\n{m.content}")
        else:
            merged.append(m)
    while merged and merged[0].role == "assistant":
        merged.pop(0)
    return [ChatMessage("system", system), *merged]
