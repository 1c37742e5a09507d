"""Where one utterance's time went, from the person's last word to the reply's first audio."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Timing:
    """Monotonic times of one utterance's way through the gateway."""

    last_voiced: float
    endpoint: float = 0.0
    transcript: float = 0.0
    sent: float = 0.0
    reply: float | None = None
    first_audio: float | None = None
    speculative: bool = False
    early_end: bool = False
    decode_s: float = 0.0
    queued_s: float = 0.0
    #: The turn-taker's decision (see :class:`EndTurn`): why the turn ended, the silence the
    #: rule chose, and the silence at which the verdict arrived.
    end_reason: str = "end silence"
    wait_ms: int | None = None
    verdict_ms: int | None = None
    #: The semantic signal's P(finished) at the pause that ended the turn, and what its call
    #: cost (None: not consulted, or no answer in time).
    semantic: float | None = None
    semantic_ms: float | None = None
    #: The turn went on from the one before it (:attr:`EndTurn.continues`): one request.
    continued: bool = False

    def as_ms(self) -> dict[str, float | bool | str | None]:
        """The stages in milliseconds (``None`` where that stage never happened)."""

        def ms(a: float | None, b: float | None) -> float | None:
            return None if a is None or b is None else round((b - a) * 1000, 1)

        return {
            "endpoint": ms(self.last_voiced, self.endpoint),
            "stt": ms(self.endpoint, self.transcript),
            "agent": ms(self.sent, self.reply),
            "ttsFirstAudio": ms(self.reply, self.first_audio),
            "total": ms(self.last_voiced, self.first_audio),
            "decode": round(self.decode_s * 1000, 1),
            "queued": round(self.queued_s * 1000, 1),
            "speculative": self.speculative,
            "earlyEnd": self.early_end,
            "endReason": self.end_reason,
            "waitMs": self.wait_ms,
            "verdictMs": self.verdict_ms,
            "semantic": None if self.semantic is None else round(self.semantic, 4),
            "semanticMs": None if self.semantic_ms is None else round(self.semantic_ms, 1),
            "continued": self.continued,
        }
