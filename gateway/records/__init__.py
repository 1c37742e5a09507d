"""Conversation records: a durable store (SQLite, clips as files beside it) and two exports.

The host writes through :class:`Recorder` as events happen; the CLI (:mod:`gateway.records.cli`)
and the page read them back and export them as agent-framework durable agent state
(:func:`to_durable_agent_state`) or an MPLP Dialog (:func:`to_mplp_dialog`).
"""

from gateway.records.errors import RecordsError
from gateway.records.export_durable import to_durable_agent_state
from gateway.records.export_mplp import to_mplp_dialog
from gateway.records.paths import DATA_ENV, default_data_dir, resolve_data_dir
from gateway.records.store import ConversationInfo, Record, Recorder, StoredConversation

__all__ = [
    "DATA_ENV",
    "ConversationInfo",
    "Record",
    "Recorder",
    "RecordsError",
    "StoredConversation",
    "default_data_dir",
    "resolve_data_dir",
    "to_durable_agent_state",
    "to_mplp_dialog",
]
