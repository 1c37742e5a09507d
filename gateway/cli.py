"""Command line: ``python -m gateway <command>`` (also installed as ``ofp-gateway``).

Commands: ``serve`` (the browser gateway), ``talk`` (a conversation from the terminal),
``validate`` (check envelopes), ``agents serve`` (the built-in agents over HTTP), ``history`` and
``export`` (conversation records).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gateway import __version__
from gateway.errors import EXIT_GATEWAY_ERROR, GatewayError, one_line

if TYPE_CHECKING:
    from gateway.records.base import Recorder


def _add_allow(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--allow-address",
        action="append",
        default=[],
        metavar="CIDR",
        help="let agents be reached at these addresses although they are loopback/private "
        "(repeatable; also OFP_GATEWAY_ALLOW=cidr,cidr). Example: 127.0.0.0/8",
    )


def _add_data(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--data",
        metavar="DIR|URL",
        help="records folder or postgresql:// database (default: $OFP_GATEWAY_DATABASE_URL, "
        "else $OFP_GATEWAY_DATA, else a per-user folder)",
    )


def _directory_factory(args: argparse.Namespace) -> Any:
    from gateway.agents.directory import AgentDirectory
    from gateway.agents.policy import AddressPolicy

    policy = AddressPolicy.from_env_and_args(args.allow_address)
    return lambda: AgentDirectory(policy)


def _recorder(args: argparse.Namespace) -> Recorder | None:
    """The recorder ``--data``/``--no-record`` ask for; raises ``RecordsError`` (with what to do)
    when the folder or database cannot be used."""
    if getattr(args, "no_record", False):
        return None
    from gateway.records.base import open_recorder

    return open_recorder(args.data)


# ---------------------------------------------------------------------------------------- validate
def cmd_validate(args: argparse.Namespace) -> int:
    """Check each file; exit 1 when any has a problem (strict unless ``--lenient``)."""
    from gateway.ofp.jsonio import dumps
    from gateway.ofp.lint import check

    results = []
    all_ok = True
    for name in args.files:
        path = Path(name)
        try:
            data = sys.stdin.buffer.read() if name == "-" else path.read_bytes()
        except OSError as exc:
            report_dict: dict[str, Any] = {
                "valid": False,
                "acceptedLeniently": False,
                "problems": [
                    {
                        "path": "$",
                        "message": f"cannot read: {exc.strerror}",
                        "hint": "check the file name",
                    }
                ],
                "warnings": [],
            }
            results.append({"file": name, **report_dict})
            all_ok = False
            continue
        report = check(data, strict=not args.lenient)
        all_ok &= report.valid
        results.append({"file": name, **report.as_dict()})
    if args.json:
        print(dumps({"valid": all_ok, "files": results}, indent=2, ensure_ascii=True))
        return 0 if all_ok else 1
    for r in results:
        status = "OK" if r["valid"] else "INVALID"
        extra = (
            f" ({r.get('dialect')} {r.get('version') or ''}".rstrip()
            + f", {r.get('events', 0)} events)"
            if r["valid"] and r.get("dialect") != "manifest"
            else ""
        )
        print(f"{r['file']}: {status}{extra}")
        for p in r["problems"]:
            print(f"  error   {_printable(p['path'])}: {_printable(p['message'])}")
            if p["hint"]:
                print(f"          hint: {p['hint']}")
        if r["problems"]:
            # Strict errors do not always mean the gateway refuses the envelope: say which.
            accepted = "yes" if r["acceptedLeniently"] else "no"
            print(f"  accepted leniently: {accepted}")
        for w in r["warnings"]:
            print(f"  warning {_printable(w['path'])}: {_printable(w['message'])}")
            if w["hint"]:
                print(f"          hint: {w['hint']}")
    return 0 if all_ok else 1


def _printable(text: str) -> str:
    """Paths and messages quote the input, which may hold anything: control characters are
    escaped so that a finding prints on one line of any terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


# -------------------------------------------------------------------------------------------- talk
def _talk_usage_error(args: argparse.Namespace) -> str | None:
    """Why these ``talk`` options cannot go together, or None. An option that would be parsed
    and then ignored is refused instead."""
    if args.text is None and args.wav is None:
        return 'give --text "..." (or --wav FILE)'
    if args.text is not None:
        given = [o for o, on in (("--out", args.out), ("--fast", args.fast)) if on]
        given += ["--wake"] if args.wake != "off" else []
        if given:
            return f"{', '.join(given)} only work with --wav (a recording), not with --text"
    if args.no_record and args.data:
        return "--data names where to record, --no-record says not to: give one of them"
    if args.wake != "off" and not args.wake.startswith("phrase:"):
        from gateway.catalogue import ModelNotAvailable, wake_words

        try:
            known = wake_words()
        except ModelNotAvailable as exc:
            return str(exc)
        if args.wake not in known:
            return f"unknown wake word {args.wake!r}: use one of {', '.join(known)}, phrase:TEXT"
    return None


def cmd_talk(args: argparse.Namespace) -> int:
    from gateway.records.errors import RecordsError
    from gateway.talk.text import run_talk

    if not args.agent:
        args.agent = ["builtin:parrot"]
    problem = _talk_usage_error(args)
    if problem is not None:
        print(f"talk: {problem}", file=sys.stderr)
        return 2

    def show(speaker: str, text: str) -> None:
        if not args.json:
            print(f"{speaker}: {text}", flush=True)

    from gateway.agents.directory import UnknownAgent
    from gateway.agents.errors import AgentError

    try:
        recorder = _recorder(args)
    except RecordsError as exc:  # e.g. --data names a folder that cannot be written
        print(f"talk: {exc}", file=sys.stderr)
        return 2
    try:
        if args.text is not None:
            if not args.json:
                print(f"you: {args.text}", flush=True)
            result = run_talk(
                args.text,
                args.agent,
                directory_factory=_directory_factory(args),
                recorder=recorder,
                timeout=args.timeout,
                on_line=show,
            )
        else:
            from gateway.talk.voice import TalkInputError, run_talk_wav

            try:
                result = run_talk_wav(
                    args,
                    directory_factory=_directory_factory(args),
                    recorder=recorder,
                    on_line=show,
                )
            except TalkInputError as exc:
                print(f"talk: {exc}", file=sys.stderr)
                return 2
    except (AgentError, UnknownAgent) as exc:
        print(f"talk: {exc}", file=sys.stderr)
        return 2
    finally:
        if recorder is not None:
            recorder.close()
    if args.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False, allow_nan=False))
    elif not result.completed:
        print(f"(gave up waiting after {args.timeout:g} s)", file=sys.stderr)
    return 0 if result.completed else 1


# ------------------------------------------------------------------------------------ agents serve
def cmd_agents_serve(args: argparse.Namespace) -> int:
    from gateway.agents.server import run_agents_server

    run_agents_server(args.host, args.port, names=args.name or None)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command."""
    parser = argparse.ArgumentParser(prog="ofp-gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"ofp-gateway {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "validate",
        help="check Open Floor envelopes strictly against the official 1.1.0 schemas "
        "(also manifests; OVON 0.9 with --lenient)",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON files ('-' reads standard input)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--lenient",
        action="store_true",
        help="report only what this gateway refuses (deviations become warnings); by default "
        "whatever the official schemas or the specification rule out is an error",
    )
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("talk", help="hold a conversation with agents from the terminal")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--text", help="what you say")
    src.add_argument("--wav", metavar="IN.wav", help="say what this recording says")
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="URL|builtin:NAME",
        help="an agent to invite (repeatable; default builtin:parrot)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object with every envelope")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for replies (30)")
    p.add_argument("--out", metavar="reply.wav", help="with --wav: write the reply audio here")
    p.add_argument("--fast", action="store_true", help="with --wav: do not pace input in real time")
    p.add_argument(
        "--wake",
        default="off",
        metavar="NAME",
        help="with --wav: a wake word (hey_jarvis, okay_nabu, alexa, hey_mycroft, "
        "phrase:TEXT); only speech after it becomes an utterance",
    )
    p.add_argument("--no-record", action="store_true", help="keep no record of this conversation")
    _add_allow(p)
    _add_data(p)
    p.set_defaults(func=cmd_talk)

    p = sub.add_parser("agents", help="the built-in agents")
    asub = p.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    ps = asub.add_parser("serve", help="serve the built-in agents over HTTP")
    ps.add_argument("--host", default="127.0.0.1")
    ps.add_argument("--port", type=int, default=8081)
    ps.add_argument("--name", action="append", help="serve only this agent (repeatable)")
    ps.set_defaults(func=cmd_agents_serve)

    try:
        from gateway.records.cli import add_commands
    except ImportError:  # records are optional only while the package is being built
        pass
    else:
        add_commands(sub)

    try:
        from gateway.server.cli import add_serve_command
    except ImportError:
        pass
    else:
        add_serve_command(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a command; returns the process exit code: the command's own, or
    :data:`~gateway.errors.EXIT_GATEWAY_ERROR` after a :class:`~gateway.errors.GatewayError`
    (its message on one line of stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    # Started from the command line, the process is the command's own: ``serve`` may restart
    # it (under jemalloc). Called with arguments by another program, it is not.
    args.own_process = argv is None
    try:
        return int(args.func(args))
    except GatewayError as exc:
        # A failure the gateway explains (a model not installed, records it cannot open...):
        # its message is the help, a traceback would bury it. Anything else is a bug and keeps
        # its traceback.
        print(f"{parser.prog}: {one_line(exc)}", file=sys.stderr)
        return EXIT_GATEWAY_ERROR
