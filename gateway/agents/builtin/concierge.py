"""Concierge: knows the other agents, recommends them, and brings them in when asked.

It answers ``getManifests`` with scored manifests (discovery, §1.17-1.18) and, asked in
conversation ("talk to the clock", "I want the time"), says so and sends an ``invite`` with the
recent dialog as ``dialogHistory``: the delegation pattern of §0.3.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import datetime

from gateway.agents.builtin.base import Answer, BuiltinAgent, Heard, builtin_manifest, local_now
from gateway.agents.urls import BUILTIN_SCHEME, same_service_url
from gateway.ofp import Envelope, Event, EventType, Manifest, Parameters, To

#: Lowest :func:`match_score` at which the concierge brings an agent in.
DELEGATE_SCORE = 0.5

_LISTING = re.compile(
    r"\b(help|what can you do|(what|which) (other )?(agents|assistants)|who (else )?(is|can))\b"
)
# Words that say nothing about which agent is wanted ("can I talk to the clock please").
_STOPWORD_TEXT = """
a an and any are at be bring by can could do does for from get give have hi hello how i in is it
let like me my need of on or please some speak talk tell that the there this to want we what
whats which who with would you your
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry meaning, lower-cased and crudely singular."""
    words = [w.replace("'", "") for w in re.findall(r"[a-z0-9]+(?:'[a-z]+)?", text.lower())]
    return {
        w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
        for w in words
        if w not in _STOPWORDS
    }


def match_score(text: str, manifest: Manifest) -> float:
    """How well ``manifest`` fits a request, from 0.0 to 1.0.

    Naming the agent scores 1.0, a whole keyphrase 0.8; otherwise the share of the request's
    words found in the keyphrases, descriptions and synopsis, scaled to at most 0.6 so that a
    loose overlap never outranks being asked for by name or keyphrase.
    """
    asked = content_words(text)
    if not asked:
        return 0.0
    ident = manifest.identification
    if content_words(ident.conversational_name) & asked:
        return 1.0
    phrases = [k for cap in manifest.capabilities for k in cap.keyphrases]
    if any((words := content_words(p)) and words <= asked for p in phrases):
        return 0.8
    texts = [*phrases, *(d for cap in manifest.capabilities for d in cap.descriptions)]
    vocabulary = content_words(" ".join([*texts, ident.synopsis]))
    return round(0.6 * len(asked & vocabulary) / len(asked), 2)


class Concierge(BuiltinAgent):
    """A discovery agent over a fixed ``directory`` of other agents' manifests."""

    greeting = "Hello, I'm the Concierge. I can bring in other agents; ask me which there are."

    def __init__(
        self,
        directory: Sequence[Manifest],
        service_url: str = f"{BUILTIN_SCHEME}concierge",
        *,
        now: Callable[[], datetime] = local_now,
    ) -> None:
        super().__init__(
            builtin_manifest(
                service_url,
                "Concierge",
                "Finds the right agent for you and brings it in.",
                ["concierge", "agents", "help", "find an agent", "directory"],
                ["Recommends and invites the other agents of this gateway."],
                roles={"discovery": True},
            ),
            now=now,
        )
        self.directory: tuple[Manifest, ...] = tuple(directory)

    def manifests_for(self, scope: str, task: str) -> list[Manifest]:
        """Itself for 'internal'/'all', the directory for 'external'/'all'; each scored against
        ``task`` and best first when there is a task (without one there is nothing to score)."""
        candidates = [self.manifest] if scope in ("internal", "all") else []
        if scope in ("external", "all"):
            candidates += self.directory
        if not task.strip():
            return candidates
        scored = [m.model_copy(update={"score": match_score(task, m)}) for m in candidates]
        return sorted(scored, key=lambda m: m.score or 0.0, reverse=True)

    def answer(self, heard: Heard) -> Answer | None:
        """List the agents, or bring in the one asked for; silent on other public talk."""
        if _LISTING.search(heard.text.lower()):
            return Answer(self._listing())
        best = max(self.directory, key=lambda m: match_score(heard.text, m), default=None)
        if best is None or match_score(heard.text, best) < DELEGATE_SCORE:
            return Answer(self._listing()) if heard.addressed else None
        name = best.identification.display_name
        if _present(best, heard.envelope):
            return Answer(f"{name} is already here.") if heard.addressed else None
        history = list(heard.memory.history)
        if not history or history[-1].id != heard.dialog_event.id:
            history.append(heard.dialog_event)  # a private request is not in the public history
        invite = Event(
            event_type=EventType.INVITE,
            to=To(
                service_url=best.identification.service_url,
                speaker_uri=best.identification.speaker_uri,
            ),
            parameters=Parameters(dialog_history=history),
        )
        return Answer(f"I'll bring in {name}.", extra=[invite])

    def _listing(self) -> str:
        if not self.directory:
            return "There are no other agents here yet."
        names = [m.identification.display_name for m in self.directory]
        either = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        about = " ".join(
            f"{m.identification.display_name}: {m.identification.synopsis.strip()}"
            for m in self.directory
            if m.identification.synopsis.strip()
        )
        example = names[0].lower()
        return f"I can bring in {either}. {about} Just say, for example, talk to the {example}."


def _present(manifest: Manifest, envelope: Envelope) -> bool:
    ident = manifest.identification
    return any(
        c.identification.speaker_uri == ident.speaker_uri
        or same_service_url(c.identification.service_url, ident.service_url)
        for c in envelope.conversation.conversants or ()
    )
