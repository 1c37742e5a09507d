"""What the floor knows about who answers: the agents not answering right now, and whom the last
hand-over went to. The person's proxy reads it when it chooses an addressee
(gateway/proxy/addressing.py); the floor's host writes it (gateway/floor/host.py). Sans-I/O: no
clock, no I/O, one per conversation (docs/floor.md, "Hand-overs and agents not answering").
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Agents remembered as not answering (one conversation holds at most Limits.max_agents agents;
#: this bounds the map even if agents come and go).
MAX_NOT_ANSWERING = 64


@dataclass
class Routing:
    """One conversation's routing facts (see the module's docstring)."""

    #: Speaker URI → why the floor holds it as not answering ("timed out", "failed", "slow").
    not_answering: dict[str, str] = field(default_factory=dict)
    #: The agent the last hand-over went to: the person is talking with it now (taken once).
    handed_to: str | None = None

    def missed(self, speaker_uri: str, why: str) -> None:
        """An agent did not answer (a timeout, a failure, the slow notice): unaddressed
        utterances go to the next agent placed until it answers again."""
        self.not_answering.pop(speaker_uri, None)
        self.not_answering[speaker_uri] = why
        while len(self.not_answering) > MAX_NOT_ANSWERING:
            del self.not_answering[next(iter(self.not_answering))]

    def slow(self, speaker_uri: str, *, remote: bool) -> None:
        """An agent is still handling what the person said when "One moment…" is due. A remote
        agent this slow is held as not answering (the person's next unaddressed words go to
        the next agent placed) until it answers. Not an in-process one: it is only waiting for
        a shared model or CPU, which routing around would not shorten."""
        if remote:
            self.missed(speaker_uri, "it is slow to answer")

    def answered(self, speaker_uri: str) -> None:
        """An agent answered an envelope (even with nothing to say): it is answering again."""
        self.not_answering.pop(speaker_uri, None)

    def handed_over(self, speaker_uri: str) -> None:
        """The person's last utterance went on to ``speaker_uri`` (it answers now)."""
        self.handed_to = speaker_uri

    def take_handed_to(self) -> str | None:
        """Whom the last hand-over went to, once (then forgotten)."""
        taken, self.handed_to = self.handed_to, None
        return taken
