"""Real processes the tests and the benchmark scripts start: ``serve`` and ``agents serve`` on a
free loopback port, each waited for until it answers over HTTP.

One way to start the gateway for everything that needs a real one, so a change to how ``serve``
starts (an option, the readiness path, the log) is made once.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The one copy: the cluster library (``scripts/cluster``) needs it at run time, so it lives in
# the package and the tests use it rather than keep their own.
from gateway.cluster.postgres import free_port

#: A gateway that answers with the built-in parrot and may reach agents on loopback: what most
#: tests of a served gateway start with.
PARROT_ON_LOOPBACK = ("--allow-address", "127.0.0.0/8", "--agent", "builtin:parrot")

__all__ = [
    "PARROT_ON_LOOPBACK",
    "ROOT",
    "Served",
    "describes",
    "free_port",
    "metric_samples",
    "serving",
    "spawn",
    "start_agents",
    "start_gateway",
    "stop_gateway",
    "untraced",
    "wait_http",
]

ROOT = Path(__file__).resolve().parents[2]
#: Loading the speech models takes ~10 s on an idle 2-core machine, several times that when
#: other tests share the cores.
READY_TIMEOUT_S = 120.0


def wait_http(
    url: str, proc: subprocess.Popen[bytes] | None, log: Path | None, timeout: float
) -> None:
    """Wait until ``url`` answers 200, failing early with the log if ``proc`` dies."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited:\n{log.read_text() if log else ''}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
            if r.status == 200:
                return
        time.sleep(0.2)
    raise RuntimeError(f"{url} not ready after {timeout} s")


@dataclass
class Served:
    """A server subprocess, where it listens, its output and (for ``serve``) its records."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path
    data: Path | None = None

    @property
    def ws(self) -> str:
        """The page's WebSocket."""
        return self.url.replace("http://", "ws://", 1) + "/ws"

    @property
    def pid(self) -> int:
        """The process id (to read its CPU, memory and threads from ``/proc``)."""
        return self.proc.pid

    def get(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        """GET ``path``: status, body and headers (an HTTP error status is returned, not raised)."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as r:
                return r.status, r.read(), dict(r.headers)
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers)

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as a flat ``{"name{labels}": value}`` dict."""
        return metric_samples(self.get("/metrics")[1])

    def stop(self, timeout: float = 15) -> None:
        """SIGTERM (a gateway drains and says bye), then SIGKILL after ``timeout`` seconds."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def metric_samples(exposition: bytes | str) -> dict[str, float]:
    """Every sample of a Prometheus exposition as ``{"name{k=v,...}": value}`` (labels sorted)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = exposition.decode() if isinstance(exposition, bytes) else exposition
    flat = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
            flat[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
    return flat


def spawn(
    args: list[str],
    log: Path,
    port: int,
    *,
    ready: str = "/healthz",
    timeout: float = READY_TIMEOUT_S,
    data: Path | None = None,
) -> Served:
    """Start ``python -m gateway ARGS`` with its output in ``log``; wait until ``ready`` answers.

    ``OFP_GATEWAY_ALLOW`` is removed from the environment so that what a test allows is what
    its arguments say, whatever the developer's shell holds.
    """
    env = {k: v for k, v in os.environ.items() if k != "OFP_GATEWAY_ALLOW"}
    # A file, not a pipe: nobody reads a pipe while the tests run, and a full one blocks the server.
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gateway", *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    served = Served(f"http://127.0.0.1:{port}", proc, log, data)
    try:
        wait_http(served.url + ready, proc, log, timeout)
    except BaseException:
        served.stop()
        raise
    return served


def start_gateway(
    data: Path,
    *extra: str,
    log: Path | None = None,
    verbose: bool = True,
    timeout: float = READY_TIMEOUT_S,
) -> Served:
    """``serve`` on a free port with its records in ``data`` and its output in ``log`` (default
    ``data/serve.log``; ``-v`` unless not ``verbose``), started with ``extra`` arguments;
    returned once ``/healthz`` answers."""
    port = free_port()
    args = [*(["-v"] if verbose else []), "serve", "--port", str(port), "--data", str(data), *extra]
    return spawn(args, log or data / "serve.log", port, timeout=timeout, data=data)


def stop_gateway(served: Served) -> None:
    """Stop a gateway from :func:`start_gateway`."""
    served.stop()


@contextlib.contextmanager
def serving(data: Path | None, *extra: str, **options: Any) -> Iterator[Served]:
    """:func:`start_gateway` (``options`` are its keywords) for a ``with`` block, stopped at its
    end; ``data`` None: a temporary folder, removed after."""
    with contextlib.ExitStack() as stack:
        if data is None:
            data = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ofp-serve-")))
        served = start_gateway(data, *extra, **options)
        try:
            yield served
        finally:
            served.stop()


def start_agents(log: Path, *extra: str, timeout: float = 30) -> Served:
    """The built-in agents over HTTP (``agents serve``) on a free port; its listing answers."""
    port = free_port()
    args = ["agents", "serve", "--port", str(port), *extra]
    return spawn(args, log, port, ready="/", timeout=timeout)


def describes(port: int) -> bool:
    """Whether a Wyoming server on ``port`` answers ``describe`` with ``info``."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as s:
        s.settimeout(5)
        s.sendall(b'{"type": "describe"}\n')
        return b'"info"' in s.recv(4096)
    return False


@contextlib.contextmanager
def untraced() -> Iterator[None]:
    """Processes started inside run outside coverage's tracer (a ``--cov`` run measures the
    subprocesses): it slows a gateway several times over, and a load run on a gateway that
    cannot keep up in real time says nothing."""
    config = os.environ.pop("COVERAGE_PROCESS_CONFIG", None)
    try:
        yield
    finally:
        if config is not None:
            os.environ["COVERAGE_PROCESS_CONFIG"] = config
