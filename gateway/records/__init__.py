"""Conversation records: a durable store and two exports.

Two stores implement the :class:`Recorder` protocol: SQLite in a data folder, clips as files
beside it (:class:`SQLiteRecorder`, the embedded default) and PostgreSQL, clips in the database
(:class:`~gateway.records.postgres.PostgresRecorder`, for several gateway nodes);
:func:`open_recorder` (:mod:`gateway.records.open`) picks one from ``--data``. The host writes as
events happen; the CLI (:mod:`gateway.records.cli`) and the page read them back and export them as agent-framework durable
agent state (:func:`to_durable_agent_state`) or an MPLP Dialog (:func:`to_mplp_dialog`).
"""

from gateway.records.base import Recorder
from gateway.records.errors import RecordsError
from gateway.records.export_durable import to_durable_agent_state
from gateway.records.export_mplp import to_mplp_dialog
from gateway.records.model import ConversationInfo, Holder, Record, StoredConversation
from gateway.records.open import DATABASE_ENV, is_database_url, open_recorder
from gateway.records.paths import DATA_ENV, default_data_dir, resolve_data_dir
from gateway.records.store import SQLiteRecorder

__all__ = [
    "DATABASE_ENV",
    "DATA_ENV",
    "ConversationInfo",
    "Holder",
    "Record",
    "Recorder",
    "RecordsError",
    "SQLiteRecorder",
    "StoredConversation",
    "default_data_dir",
    "is_database_url",
    "open_recorder",
    "resolve_data_dir",
    "to_durable_agent_state",
    "to_mplp_dialog",
]
