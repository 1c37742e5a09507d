"""One export for every path: the ``export`` command and the server's ``/export/`` route.

Both call :func:`export_conversation`, so they accept and refuse the same requests with the same
messages. A refusal is an :class:`ExportRefused` whose ``status`` is the HTTP status the server
answers with (the command prints the message and exits 1).
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from gateway.records.errors import RecordsError
from gateway.records.export_durable import to_durable_agent_state
from gateway.records.export_mplp import to_mplp_dialog
from gateway.records.model import ConversationInfo, StoredConversation

#: The export formats, the default first.
FORMATS = ("mplp-dialog", "durable-agent-state")


class ExportRefused(RecordsError):
    """The export cannot be made as asked; the message says why and what to ask instead."""

    def __init__(self, message: str, status: HTTPStatus = HTTPStatus.BAD_REQUEST) -> None:
        super().__init__(message)
        self.status = status


def choose_agent(info: ConversationInfo, agent: str | None) -> str:
    """Whose point of view a durable-agent-state export takes.

    ``agent`` if it took part in the conversation; with none given, the only agent. Refused (404)
    for a speaker who took no part, (400) when there are several agents and none was chosen.
    """
    known = ", ".join(info.agents) or "none"
    if agent:
        if agent not in info.conversants:
            raise ExportRefused(
                f"{agent!r} took no part in conversation {info.id!r}; its agents are: {known}",
                HTTPStatus.NOT_FOUND,
            )
        return agent
    if len(info.agents) == 1:
        return info.agents[0]
    raise ExportRefused(
        f"conversation {info.id!r} has {len(info.agents)} agents ({known}); "
        "choose whose state to export with --agent SPEAKERURI (agent=SPEAKERURI in a URL)"
    )


def export_conversation(
    conversation: StoredConversation, fmt: str, agent: str | None = None
) -> dict[str, Any]:
    """``conversation`` as a document of format ``fmt`` (one of :data:`FORMATS`).

    ``agent`` (a speaker URI) is whose point of view ``durable-agent-state`` takes, see
    :func:`choose_agent`; ``mplp-dialog`` covers everyone and refuses an ``agent`` it would
    otherwise silently ignore. Raises :class:`ExportRefused`.
    """
    if fmt == "mplp-dialog":
        if agent:
            raise ExportRefused(
                "mplp-dialog covers every conversant: drop the agent, or ask for "
                "durable-agent-state to take one agent's point of view"
            )
        return to_mplp_dialog(conversation)
    if fmt == "durable-agent-state":
        return to_durable_agent_state(conversation, choose_agent(conversation.info, agent))
    raise ExportRefused(f"unknown format {fmt!r}: use {' or '.join(FORMATS)}")
