"""The reference deployment on one machine: PostgreSQL, HAProxy and gateway nodes on loopback.

``python -m gateway.cluster`` (or ``scripts/cluster``) starts it and prints the URL; the cluster
tests and ``scripts/bench_cluster.py`` drive the same :class:`LocalCluster`. A real deployment runs
the same three parts on their own machines: see ``docs/deployment.md``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from gateway.cluster.haproxy import Backend, HAProxy
from gateway.cluster.postgres import TempPostgres, free_port
from gateway.errors import ClusterUnavailable


def free_ports(n: int, avoid: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """``n`` distinct free ports on loopback, none in ``avoid``: held open together while they
    are chosen, since ports chosen one at a time may come back the same."""
    held: list[socket.socket] = []
    try:
        ports: list[int] = []
        while len(ports) < n:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            held.append(s)
            port = int(s.getsockname()[1])
            if port not in avoid:
                ports.append(port)
        return ports
    finally:
        for s in held:
            s.close()


@dataclass
class Node:
    """One ``serve`` process of the cluster."""

    name: str
    port: int
    log: Path
    #: Where the node takes agents' posts (HAProxy's inbound frontend leads there).
    inbound_port: int = 0
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The node's own address (behind HAProxy; people use the cluster's URL)."""
        return f"http://127.0.0.1:{self.port}"

    def readiness(self) -> tuple[int, dict[str, object]]:
        """``/readyz`` of this node: HTTP status and its JSON."""
        try:
            with urllib.request.urlopen(self.url + "/readyz", timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    @property
    def alive(self) -> bool:
        """Whether the process is running."""
        return self.proc is not None and self.proc.poll() is None


@dataclass
class LocalCluster:
    """PostgreSQL (temporary, unless ``database`` names one), ``nodes`` gateway nodes, HAProxy.

    ``serve_args`` go to every node. ``check_ms`` is HAProxy's health-check interval: a dead node
    is out of rotation after two failed checks. With ``speech_server``, one ``speech serve``
    process holds the speech models for every node (``--stt``/``--tts``/``--wake-service``),
    as one speech box does for the nodes of docs/deployment.md.
    """

    nodes_count: int = 2
    port: int = 0
    #: HAProxy's frontend for agents' posts to the nodes' inbound endpoints.
    inbound_port: int = 0
    database: str | None = None
    serve_args: tuple[str, ...] = ()
    check_ms: int = 500
    workdir: Path | None = None
    postgres: TempPostgres | None = None
    haproxy: HAProxy | None = None
    nodes: list[Node] = field(default_factory=list)
    speech_server: bool = False
    speech: Node | None = None

    @property
    def url(self) -> str:
        """Where people reach the gateway: HAProxy."""
        assert self.haproxy is not None
        return self.haproxy.url

    @property
    def database_url(self) -> str:
        """The records database every node shares."""
        if self.database:
            return self.database
        assert self.postgres is not None
        return self.postgres.url

    def start(self, timeout: float = 240.0) -> LocalCluster:
        """Start everything and wait until HAProxy reaches a ready node."""
        self.workdir = self.workdir or Path(tempfile.mkdtemp(prefix="ofp-cluster-"))
        self.port = self.port or free_port()
        self.inbound_port = self.inbound_port or free_port()
        if self.database is None:
            self.postgres = TempPostgres().start()
        if self.speech_server:
            self.start_speech(timeout)
        # Every node has two ports (the page's, the agents' inbound): chosen together, so that
        # no two of them are the same port.
        ports = free_ports(2 * self.nodes_count, avoid={self.port, self.inbound_port})
        self.nodes = [
            Node(
                f"node{i + 1}",
                ports[2 * i],
                self.workdir / f"node{i + 1}.log",
                ports[2 * i + 1],
            )
            for i in range(self.nodes_count)
        ]
        for node in self.nodes:
            self.start_node(node)
        self.haproxy = HAProxy(
            self.port,
            [Backend(n.name, "127.0.0.1", n.port, n.inbound_port) for n in self.nodes],
            check_ms=self.check_ms,
            inbound_port=self.inbound_port,
        ).start()
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            self.wait_ready(node, max(1.0, deadline - time.monotonic()))
        self.haproxy.wait_serving()
        return self

    def start_node(self, node: Node) -> None:
        """Start (or restart) one node's ``serve`` process."""
        env = {**os.environ}
        env.pop("OFP_GATEWAY_DATA", None)
        log = open(node.log, "ab")  # noqa: SIM115 (lives with the process)
        node.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gateway",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(node.port),
                "--data",
                self.database_url,
                "--public-url",
                f"http://127.0.0.1:{self.port}",
                "--node",
                node.name,
                "--inbound-port",
                str(node.inbound_port),
                "--inbound-url",
                f"http://127.0.0.1:{self.inbound_port}",
                *self.speech_args,
                *self.serve_args,
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )

    @property
    def speech_address(self) -> str | None:
        """The speech server's ``wyoming://`` address (None: the nodes run speech themselves)."""
        return f"wyoming://127.0.0.1:{self.speech.port}" if self.speech else None

    @property
    def speech_args(self) -> list[str]:
        """What each node is told of the speech server."""
        address = self.speech_address
        if address is None:
            return []
        return ["--stt", address, "--tts", address, "--wake-service", address]

    def start_speech(self, timeout: float) -> None:
        """Start the speech server and wait until it describes itself."""
        from gateway.speech.link import ServiceLink

        assert self.workdir is not None
        self.speech = node = Node("speech", free_port(), self.workdir / "speech.log")
        log = open(node.log, "ab")  # noqa: SIM115 (lives with the process)
        node.proc = subprocess.Popen(
            [
                *[sys.executable, "-m", "gateway", "speech", "serve"],
                *["--uri", f"tcp://127.0.0.1:{node.port}"],
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        link = ServiceLink("speech", f"wyoming://127.0.0.1:{node.port}")
        while time.monotonic() < deadline:
            if not node.alive:
                raise ClusterUnavailable(
                    f"the speech server exited:\n{node.log.read_text(errors='replace')}"
                )
            with contextlib.suppress(Exception):
                if _describes(link):
                    return
            time.sleep(0.3)
        raise ClusterUnavailable(f"the speech server was not ready in {timeout:.0f} s")

    def wait_ready(self, node: Node, timeout: float) -> None:
        """Wait until the node's ``/readyz`` says ready; :class:`ClusterUnavailable` if it exits
        or is not ready in ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not node.alive:
                raise ClusterUnavailable(
                    f"{node.name} exited:\n{node.log.read_text(errors='replace')}"
                )
            with contextlib.suppress(OSError, ValueError):
                if node.readiness()[0] == 200:
                    return
            time.sleep(0.3)
        raise ClusterUnavailable(f"{node.name} was not ready in {timeout:.0f} s")

    def kill(self, node: Node) -> None:
        """SIGKILL: the node dies at once, as in a crash."""
        assert node.proc is not None
        node.proc.send_signal(signal.SIGKILL)
        node.proc.wait(10)

    def drain(self, node: Node, timeout: float = 60.0) -> int:
        """SIGTERM: the node drains and exits; returns its exit code."""
        assert node.proc is not None
        node.proc.send_signal(signal.SIGTERM)
        return node.proc.wait(timeout)

    def stop(self) -> None:
        """Stop HAProxy, the nodes and PostgreSQL."""
        if self.haproxy is not None:
            self.haproxy.stop()
        for node in self.nodes:
            if node.alive:
                assert node.proc is not None
                node.proc.send_signal(signal.SIGINT)
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(15)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait()
        if self.speech is not None and self.speech.alive:
            assert self.speech.proc is not None
            self.speech.proc.terminate()
            try:
                self.speech.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.speech.proc.kill()
                self.speech.proc.wait()
        if self.postgres is not None:
            self.postgres.stop()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _describes(link: object) -> bool:
    """Whether the speech server answers ``describe`` (blocking; its own event loop)."""
    import asyncio

    from gateway.speech.link import ServiceLink

    assert isinstance(link, ServiceLink)

    async def ask() -> bool:
        fresh = ServiceLink(link.kind, link.address, link.settings)
        try:
            await fresh.describe()
            return True
        finally:
            await fresh.close()

    return asyncio.run(ask())
