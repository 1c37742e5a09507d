"""``ofp-gateway speech serve`` given an address it cannot listen at says so on one line, at
once (before the models' seconds of loading), with the gateway's error exit — not a traceback
after the models have loaded."""

from __future__ import annotations

import socket
import subprocess
import sys

from gateway.errors import EXIT_GATEWAY_ERROR
from gateway.testing.processes import ROOT


def _speech_serve(uri: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway", "speech", "serve", "--uri", uri],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )


def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = _speech_serve(f"tcp://127.0.0.1:{port}")
    assert done.returncode == EXIT_GATEWAY_ERROR
    assert "Traceback" not in done.stderr
    assert f"cannot listen at tcp://127.0.0.1:{port}" in done.stderr
    assert "--uri" in done.stderr
    assert "loading speech models" not in done.stderr  # it did not load them first


def test_an_address_not_on_this_machine_is_a_clear_error() -> None:
    done = _speech_serve("tcp://203.0.113.9:10300")  # TEST-NET-3: never a local address
    assert done.returncode == EXIT_GATEWAY_ERROR
    assert "Traceback" not in done.stderr
    assert "cannot listen at tcp://203.0.113.9:10300" in done.stderr
