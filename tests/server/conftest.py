"""A real `serve` process for protocol tests (module-scoped: models load once)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Served:
    url: str
    ws: str
    data: Path
    proc: subprocess.Popen

    def get(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)


def start_gateway(tmp: Path, *extra: str) -> Served:
    port = free_port()
    env = {**os.environ}
    env.pop("OFP_GATEWAY_ALLOW", None)
    # A file, not a pipe: nobody reads a pipe while the tests run, and a full one blocks the server.
    log = open(tmp / "serve.log", "w")  # noqa: SIM115 (lives as long as the process)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gateway",
            "-v",
            "serve",
            "--port",
            str(port),
            "--data",
            str(tmp),
            *extra,
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    served = Served(f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws", tmp, proc)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError((tmp / "serve.log").read_text())
        try:
            if served.get("/healthz")[0] == 200:
                return served
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("serve did not become ready")


def stop_gateway(served: Served) -> None:
    served.proc.terminate()
    try:
        served.proc.wait(15)
    except subprocess.TimeoutExpired:
        served.proc.kill()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    served = start_gateway(
        tmp_path_factory.mktemp("gw"),
        "--max-sessions",
        "3",
        "--allow-address",
        "127.0.0.0/8",
        "--audio-feature",
        "url",
    )
    yield served
    stop_gateway(served)
