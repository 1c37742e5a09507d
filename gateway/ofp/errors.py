"""The exceptions of the Open Floor data model.

Parsing raises exactly one kind of error, :class:`EnvelopeError`, whatever is wrong with the
input (broken JSON, wrong types, missing required parts, absurd nesting). Callers catch that.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.errors import GatewayError


class OFPError(GatewayError):
    """Base class of every error raised by :mod:`gateway.ofp`."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a document, located by a JSON path such as ``$.openFloor.events[0]``."""

    path: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        text = f"{self.path}: {self.message}"
        return f"{text} (hint: {self.hint})" if self.hint else text


class EnvelopeError(OFPError, ValueError):
    """The input is not an envelope (or manifest, or dialog event) this gateway can understand.

    ``problems`` lists each defect with its JSON path and, where one helps, a hint.
    """

    def __init__(self, problems: list[Problem] | Problem | str) -> None:
        if isinstance(problems, str):
            problems = [Problem("$", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: list[Problem] = problems
        super().__init__("; ".join(str(p) for p in problems) or "invalid envelope")
