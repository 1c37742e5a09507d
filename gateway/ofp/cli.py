"""The ``validate`` command: strict conformance checks for agent developers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_validate_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``validate`` on the main parser."""
    p = sub.add_parser(
        "validate",
        help="check Open Floor envelopes strictly against the official 1.1.0 schemas "
        "(also manifests; OVON 0.9 with --lenient)",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="JSON files ('-' reads standard input)")
    p.add_argument("--json", action="store_true", default=None, help="print one JSON object")
    p.add_argument(
        "--lenient",
        action="store_true",
        default=None,
        help="report only what this gateway refuses (deviations become warnings); by default "
        "whatever the official schemas or the specification rule out is an error",
    )
    p.set_defaults(func=cmd_validate)


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
