"""``python -m gateway.cluster``: start the reference deployment locally (see docs/deployment.md)."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time

from gateway.cluster.local import LocalCluster
from gateway.errors import GatewayError
from gateway.options import from_options
from gateway.server.settings import GatewaySettings


def _default() -> LocalCluster:
    """People's URL is where a single ``serve`` would be; the rest is LocalCluster's own."""
    return LocalCluster(port=GatewaySettings().port)


def build_parser() -> argparse.ArgumentParser:
    """The options; their defaults are :func:`_default`'s (argparse's are None)."""
    default = _default()
    p = argparse.ArgumentParser(
        prog="python -m gateway.cluster",
        description="HAProxy in front of gateway nodes sharing PostgreSQL records, on loopback.",
    )
    p.add_argument("--port", type=int, help=f"HAProxy's port, people's URL ({default.port})")
    p.add_argument(
        "--nodes",
        dest="nodes_count",
        type=int,
        metavar="N",
        help=f"gateway nodes ({default.nodes_count})",
    )
    p.add_argument(
        "--database",
        metavar="URL",
        help="an existing postgresql:// database (default: a temporary server)",
    )
    p.add_argument(
        "--speech-server",
        dest="speech_server",
        action="store_true",
        default=None,
        help="one `speech serve` process holds the speech models for every node (--stt/--tts/"
        "--wake-service), as a speech box does (docs/deployment.md)",
    )
    p.add_argument("serve_args", nargs="*", help="passed to every `serve` (after --)")
    return p


def from_args(args: argparse.Namespace) -> LocalCluster:
    """The cluster the options ask for (each option's ``dest`` is the field it sets); an
    option not given keeps the default."""
    return from_options(_default(), args)


def main(argv: list[str] | None = None) -> int:
    """Start PostgreSQL, HAProxy and gateway nodes on loopback; stop them on Ctrl-C."""
    cluster = from_args(build_parser().parse_args(argv))
    print("starting PostgreSQL, the gateway nodes and HAProxy…", file=sys.stderr, flush=True)
    try:
        cluster.start()
    except (GatewayError, OSError, subprocess.SubprocessError) as exc:
        # A server that is not installed or would not start (its log is in the message), a
        # program or port that cannot be had.
        cluster.stop()
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except BaseException:  # a bug, or Ctrl-C while starting: leave no server behind
        cluster.stop()
        raise
    print(f"ofp-gateway cluster is ready: open {cluster.url}/ in a browser", flush=True)
    for node in cluster.nodes:
        print(
            f"  {node.name}: {node.url} (pid {node.proc.pid if node.proc else '-'}), log {node.log}"
        )
    if cluster.speech is not None:
        print(f"  speech server: {cluster.speech_address}, log {cluster.speech.log}")
    print(f"  records: {cluster.database_url}")
    print("  drain a node: kill -TERM PID; stop everything: Ctrl-C", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
