"""When an agent that fails or times out is told about, kept, or removed from the conversation.

One slow answer (a cold start, a long search) costs an agent a notice, not its place: it is
uninvited with ``@timedOut`` after :attr:`FailureBounds.max_timeouts` person turns in a row in
which it timed out (counted once per turn: one turn may send a slow agent several envelopes),
and with its failure's token (``@error``) after :attr:`FailureBounds.max_failures` failures in a
row, or at once when its address is refused by policy. Any answer wipes the slate.

Sans-I/O: :class:`Strikes` is one agent's record, told each failure and answer; the floor's host
(gateway/floor/host.py) delivers what its :class:`Verdict` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


@dataclass(frozen=True)
class FailureBounds:
    """How many strikes an agent gets (defaults: ``Limits.max_failures``, ``max_timeouts``)."""

    #: Consecutive failed deliveries before an agent is uninvited with its failure's token.
    max_failures: int = 3
    #: Consecutive person turns with a timeout before an agent is uninvited with @timedOut.
    max_timeouts: int = 2


class Verdict(Enum):
    """What the floor does about one failure."""

    #: Uninvite the agent and tell the person (notices.AgentRemoved).
    REMOVE = "remove"
    #: It timed out, first time this turn: tell the person it is slow (notices.AgentSlow).
    SLOW = "slow"
    #: It timed out again in a turn it was already reported slow: nothing to say.
    QUIET = "quiet"
    #: It failed; it stays: tell the person it had a problem (notices.AgentFailed).
    PROBLEM = "problem"


@dataclass
class Strikes:
    """One agent's failures and timeouts in a row (see the module's docstring)."""

    failures: int = 0
    #: Person turns in a row in which this agent timed out, and the last such turn.
    misses: int = 0
    missed_turn: int = -1

    def failed(
        self, *, timed_out: bool, refused: bool, turn: int, bounds: FailureBounds
    ) -> Verdict:
        """The agent failed in the person's turn ``turn``: ``timed_out`` (it did not answer in
        time), ``refused`` (its address is refused by policy), or another failure."""
        self.failures += 1
        first_this_turn = True
        if timed_out:
            first_this_turn = self.missed_turn != turn
            if first_this_turn:
                self.misses += 1
                self.missed_turn = turn
        if (
            (timed_out and self.misses >= bounds.max_timeouts)
            or refused
            or self.failures >= bounds.max_failures
        ):
            return Verdict.REMOVE
        if timed_out:
            return Verdict.SLOW if first_this_turn else Verdict.QUIET
        return Verdict.PROBLEM

    def answered(self) -> None:
        """The agent answered (even with nothing to say): its slate is clean."""
        self.failures = 0
        self.misses = 0
