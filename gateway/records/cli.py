"""The ``history`` and ``export`` commands of ``python -m gateway``, and ``--data``.

:func:`add_commands` registers them on the main parser's subparsers. Each sets ``func`` on the
parsed arguments: a callable taking the namespace and returning the exit code.
:func:`add_data_option` is ``--data``, which ``serve`` and ``talk`` take too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from gateway.records.base import Recorder
from gateway.records.errors import RecordsError
from gateway.records.export import FORMATS, export_conversation
from gateway.records.model import ConversationInfo, Record
from gateway.records.open import DATABASE_ENV, open_recorder
from gateway.records.paths import DATA_ENV, default_data_dir
from gateway.records.reading import read_envelope, rfc3339

#: Widest the listing lets a column of names or words grow before cutting it with "…".
_COLUMN = 40


def add_data_option(p: argparse.ArgumentParser) -> None:
    """``--data``: where the records are (``serve``, ``talk``, ``history``, ``export``)."""
    p.add_argument(
        "--data",
        metavar="DIR|URL",
        help="records folder, or a postgresql:// database several nodes can share (default: "
        f"${DATABASE_ENV}, else ${DATA_ENV}, else {default_data_dir()})",
    )


def add_commands(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``history`` (list, show, delete) and ``export`` on ``subparsers``."""
    history = subparsers.add_parser("history", help="list, show or delete recorded conversations")
    commands = history.add_subparsers(dest="history_command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="the recorded conversations, newest first")
    listing.add_argument("--json", action="store_true", default=None, help="print JSON instead of a table")
    _with_data(listing, _list)

    show = commands.add_parser("show", help="everything recorded of one conversation")
    show.add_argument("id", help="the conversation id (see `history list`)")
    show.add_argument("--json", action="store_true", default=None, help="print the records as JSON")
    _with_data(show, _show)

    delete = commands.add_parser("delete", help="remove a conversation and its audio")
    delete.add_argument("id", help="the conversation id (see `history list`)")
    _with_data(delete, _delete)

    export = subparsers.add_parser("export", help="write a conversation in another format")
    export.add_argument("id", help="the conversation id (see `history list`)")
    export.add_argument("--format", required=True, choices=FORMATS, help="the export format")
    export.add_argument(
        "--agent",
        metavar="SPEAKERURI",
        help="durable-agent-state: whose point of view (needed when there are several agents)",
    )
    export.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    _with_data(export, _export)


def _with_data(parser: argparse.ArgumentParser, run: Callable[[Recorder, Any], int]) -> None:
    add_data_option(parser)
    parser.set_defaults(func=lambda args: _run(run, args))


def _run(run: Callable[[Recorder, Any], int], args: argparse.Namespace) -> int:
    try:
        recorder = open_recorder(args.data)
    except RecordsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    try:
        return run(recorder, args)
    except RecordsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        recorder.close()


def _local(at: datetime) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M")


def _cut(text: str, width: int = _COLUMN) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _info_json(info: ConversationInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "title": info.title,
        "status": info.status,
        "startedAt": rfc3339(info.started_at),
        "updatedAt": rfc3339(info.updated_at),
        "endedAt": rfc3339(info.ended_at) if info.ended_at else None,
        "userSpeakerUri": info.user_speaker_uri,
        "firstWords": info.first_words,
        "messages": info.message_count,
        "agents": [{"speakerUri": uri, "name": info.conversants[uri]} for uri in info.agents],
    }


def _list(recorder: Recorder, args: argparse.Namespace) -> int:
    infos = recorder.list_conversations()
    if args.json:
        print(json.dumps([_info_json(i) for i in infos], indent=2, ensure_ascii=False, allow_nan=False))
        return 0
    if not infos:
        print(f"no conversations recorded in {recorder.location}")
        return 0
    rows = [
        (
            i.id,
            _local(i.started_at),
            str(i.message_count),
            _cut(", ".join(i.name_of(a) for a in i.agents) or "-"),
            _cut(i.title or i.first_words or "-"),
        )
        for i in infos
    ]
    header = ("ID", "STARTED", "MSGS", "AGENTS", "TITLE / FIRST WORDS")
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(4)]
    for row in [header, *rows]:
        cells = [cell.ljust(w) for cell, w in zip(row[:4], widths, strict=True)]
        print("  ".join([*cells, row[4]]))
    return 0


def _describe(info: ConversationInfo, record: Record) -> str:
    """One line of `history show` for a record: a kind column, then what happened."""
    if record.kind == "floor":
        names = ", ".join(info.name_of(c.get("speakerUri", "")) for c in record.data["conversants"])
        granted = ", ".join(info.name_of(u) for u in record.data["floorGranted"])
        convener = record.data.get("convener")
        text = f"floor  conversants: {names or '-'}; floor: {granted or '-'}"
        return text + (f"; convener: {info.name_of(convener)}" if convener else "")
    if record.kind == "audio":
        return f"audio  {record.data['bytes']} bytes for {record.data['dialogEventId']}"
    if record.kind == "heard":
        return f"heard  {_describe_heard(record.data)}"
    return f"{record.direction:<5}  {_describe_envelope(info, record)}"


def _describe_heard(data: dict[str, Any]) -> str:
    """A ``heard`` record: a reply stopped part-way and what of it was heard, or speech over
    an agent that was not a turn."""
    outcome = str(data.get("outcome", "?"))
    played = data.get("playedMs")
    if outcome == "replaced":
        part = f' "{_cut(str(data.get("text") or ""), 60)}"' if data.get("text") else ""
        return (
            f"replaced {data.get('utterance')}{part} by {data.get('by')}: the person went on, "
            "the whole request takes its place"
        )
    if outcome == "stopped":
        said = data.get("said") or ""
        reply = data.get("reply") or "the reply"
        return f'stopped {reply} after {played} ms; the person heard "{_cut(said, 60)}"'
    text = data.get("text") or ""
    return f'{outcome} over the agent, not a turn: "{_cut(text, 60)}"' if text else outcome


def _describe_envelope(info: ConversationInfo, record: Record) -> str:
    peer = info.name_of(record.peer or "")
    envelope = read_envelope(record)
    if envelope is None:
        route = f"{peer} → floor" if record.direction == "in" else f"floor → {peer}"
        return f"{route}: (unreadable envelope)"
    sender = envelope.sender.speaker_uri
    if record.direction == "in":
        route = f"{peer} → floor"
    else:
        route = f"floor → {peer} (from {info.name_of(sender)})"
    parts = []
    for ev in envelope.events:
        de = ev.dialog_event
        target = (ev.to.speaker_uri or ev.to.service_url) if ev.to else None
        if de is None:
            parts.append(ev.event_type.value + (f" → {info.name_of(target)}" if target else ""))
            continue
        said = f'"{_cut(de.text(), 60)}"' if de.text() else "(no text)"
        extras = [k for k, f in de.features.items() if f.mime_type != "text/plain"]
        said += f" +{'+'.join(extras)}" if extras else ""
        if ev.is_private and target:
            said += f" (private to {info.name_of(target)})"
        # Name the speaker only when it is not the sender, which the route already names.
        parts.append(
            said if de.speaker_uri == sender else f"{info.name_of(de.speaker_uri)}: {said}"
        )
    return f"{route}: " + "; ".join(parts or ["(no events)"])


def _show(recorder: Recorder, args: argparse.Namespace) -> int:
    conversation = recorder.get_conversation(args.id)
    info = conversation.info
    if args.json:
        records = [
            {
                "seq": r.seq,
                "at": rfc3339(r.at),
                "kind": r.kind,
                "direction": r.direction,
                "peer": r.peer,
                "data": r.data,
            }
            for r in conversation.records
        ]
        doc = {"conversation": _info_json(info), "records": records}
        print(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False))
        return 0
    ended = f", ended {_local(info.ended_at)} ({info.status})" if info.ended_at else " (active)"
    print(f"{info.id}  {info.title or info.first_words or ''}".rstrip())
    print(f"started {_local(info.started_at)}{ended}; {info.message_count} messages")
    print("agents: " + (", ".join(f"{info.name_of(a)} <{a}>" for a in info.agents) or "-"))
    for record in conversation.records:
        print(f"{record.at.astimezone():%H:%M:%S}  {_describe(info, record)}")
    return 0


def _delete(recorder: Recorder, args: argparse.Namespace) -> int:
    if not recorder.delete_conversation(args.id):
        raise RecordsError(
            f"no conversation {args.id!r} in {recorder.location}; "
            "`python -m gateway history list` shows the ones there are"
        )
    print(f"deleted {args.id}")
    return 0


def _export(recorder: Recorder, args: argparse.Namespace) -> int:
    conversation = recorder.get_conversation(args.id, with_audio=True)
    doc = export_conversation(conversation, args.format, args.agent)
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise RecordsError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(text)
    return 0
