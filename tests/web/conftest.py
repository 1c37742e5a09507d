"""Headless Chromium (Debian's) against the page, with a fake microphone playing generated speech.

One browser per module; a fresh context (so fresh sessionStorage and permissions) per test.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import resample, write_wav
from tests.speech import piper_wav

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
CHROMIUM = os.environ.get("OFP_CHROMIUM", "/usr/bin/chromium")
#: What the fake microphone says, once per loop.
SPOKEN = "Please turn off the kitchen lights."
MIC_RATE = 48_000
#: Speech-free lead before the sentence, and the silence after it before the file loops.
LEAD_S, TAIL_S = 1.0, 7.0

BASE_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-gpu",
]

if not Path(CHROMIUM).exists():  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, proc: subprocess.Popen | None, log: Path | None, timeout: float) -> None:
    """Wait until ``url`` answers 200, failing early with the log if ``proc`` dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited:\n{log.read_text() if log else ''}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {timeout} s")


@dataclass
class Process:
    """A server subprocess and where it listens."""

    url: str
    proc: subprocess.Popen
    log: Path

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def spawn(args: list[str], log: Path, ready_path: str, port: int, timeout: float) -> Process:
    """Start ``python -m gateway ARGS`` with its output in ``log``; wait for ``ready_path``."""
    env = {k: v for k, v in os.environ.items() if k != "OFP_GATEWAY_ALLOW"}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    served = Process(f"http://127.0.0.1:{port}", proc, log)
    try:
        wait_http(served.url + ready_path, proc, log, timeout)
    except Exception:
        served.stop()
        raise
    return served


@pytest.fixture(scope="session")
def mic_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """48 kHz mono 16-bit: 1 s of silence, the sentence (piper), 7 s of silence; Chromium loops it."""
    pcm, rate = piper_wav(SPOKEN)
    speech = resample(pcm, rate, MIC_RATE)
    lead = np.zeros(int(LEAD_S * MIC_RATE), np.int16)
    tail = np.zeros(int(TAIL_S * MIC_RATE), np.int16)
    path = tmp_path_factory.mktemp("mic") / "mic.wav"
    write_wav(path, np.concatenate([lead, speech, tail]), MIC_RATE)
    return path


def launch(playwright: object, *extra: str) -> object:
    """Debian's Chromium, headless, with ``extra`` flags."""
    return playwright.chromium.launch(  # type: ignore[attr-defined]
        executable_path=CHROMIUM, headless=True, args=[*BASE_ARGS, *extra]
    )


@pytest.fixture(scope="module")
def playwright_instance() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright_instance: object, mic_wav: Path) -> Iterator[object]:
    """Chromium whose microphone plays ``mic_wav`` and whose permission prompts say yes.

    No ``--disable-features=WebRtcHideLocalIpsWithMdns`` is needed: once the page holds the
    microphone, Chromium offers real host addresses instead of ``*.local`` names.
    """
    b = launch(
        playwright_instance,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={mic_wav}",
    )
    yield b
    b.close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def static_site() -> Iterator[str]:
    """The page from a plain static server (no gateway): for tests of the page on its own."""
    handler = functools.partial(_QuietHandler, directory=str(WEB))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def agents_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    """The built-in agents over HTTP on loopback (``agents serve``)."""
    port = free_port()
    log = tmp_path_factory.mktemp("agents") / "agents.log"
    served = spawn(["agents", "serve", "--port", str(port)], log, "/", port, 30)
    yield served
    served.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Process]:
    """``serve`` with real models, records in a temp folder, loopback agents allowed."""
    port = free_port()
    data = tmp_path_factory.mktemp("gateway")
    served = spawn(
        [
            "serve",
            "--port",
            str(port),
            "--data",
            str(data),
            "--allow-address",
            "127.0.0.0/8",
            "--agent",
            "builtin:parrot",
        ],
        data / "serve.log",
        "/healthz",
        port,
        120,
    )
    yield served
    served.stop()
