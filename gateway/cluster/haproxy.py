"""HAProxy (Debian's ``haproxy``) in front of gateway nodes: the configuration, and a process.

What the configuration does, and why (``docs/deployment.md`` explains it for operators):

* ``mode http``: HAProxy understands the WebSocket upgrade on ``/ws`` and then tunnels the
  connection; ``timeout tunnel`` is how long an idle WebSocket may stay (the page pings every 15 s).
* Sticky per session: a cookie (``OFPNODE``) names the node that served the page, so its WebSocket
  and its rejoins go to the node holding its conversation. When that node is down, ``option
  redispatch`` sends the page to another, which takes the conversation up from the records.
* Health checks on ``/readyz``: 200 only when the node would serve a new person well; a node that
  is loading models, full or draining answers 503 and gets no new people.
* Agents' posts (the inbound endpoint, docs/floor.md): a second frontend in front of each node's
  ``--inbound-port``. An inbound URL names the node that holds its conversation
  (``/ofp/in/NODE/TOKEN``), and HAProxy sends the post to that node, whichever node the agent's
  connection would otherwise have reached.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from gateway.errors import ClusterUnavailable


class HAProxyUnavailable(ClusterUnavailable):
    """HAProxy is not installed or would not start; the message says what to do."""


@dataclass(frozen=True)
class Backend:
    """One gateway node: its name (also its cookie value) and where it listens."""

    name: str
    host: str
    port: int
    #: The node's ``--inbound-port`` (None: it takes no agents' posts through HAProxy).
    inbound_port: int | None = None


def inbound_config(inbound_port: int, backends: list[Backend], *, host: str = "127.0.0.1") -> str:
    """The inbound frontend: each agent's post to the node its URL names."""
    nodes = [b for b in backends if b.inbound_port is not None]
    rules = "\n".join(f"    use-server {b.name} if {{ path_beg /ofp/in/{b.name}/ }}" for b in nodes)
    servers = "\n".join(f"    server {b.name} {b.host}:{b.inbound_port}" for b in nodes)
    return f"""
frontend inbound
    bind {host}:{inbound_port}
    default_backend inbound

backend inbound
    # An inbound URL is /ofp/in/NODE/TOKEN: the node holding the conversation takes the post.
{rules}
{servers}
"""


def config(
    port: int,
    backends: list[Backend],
    *,
    host: str = "127.0.0.1",
    check_ms: int = 1000,
    inbound_port: int | None = None,
) -> str:
    """The HAProxy configuration for ``backends`` behind ``host:port`` (and, with
    ``inbound_port``, their inbound endpoints behind ``host:inbound_port``)."""
    servers = "\n".join(
        f"    server {b.name} {b.host}:{b.port} cookie {b.name} check" for b in backends
    )
    inbound = inbound_config(inbound_port, backends, host=host) if inbound_port is not None else ""
    return f"""\
global
    maxconn 4096

defaults
    mode http
    option http-server-close
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # An open WebSocket: the page pings every 15 s, so a minute of silence means it is gone.
    timeout tunnel 60s
    timeout client-fin 5s
    # A connection refused by a dead node is retried at once on another (1: on the first retry;
    # a retry on the same server would wait a second first), where the hello rejoins.
    option redispatch 1
    retries 2

frontend gateway
    bind {host}:{port}
    default_backend nodes

backend nodes
    balance leastconn
    # Sticky per session: the page's requests and WebSocket go to the node that served it.
    cookie OFPNODE insert indirect nocache httponly
    # /readyz is 200 only when a new person would be served well (503: loading models, full,
    # draining). websockets speaks HTTP/1.1 only, so the check sends 1.1 with a Host.
    option httpchk
    http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host {host}:{port}
    http-check expect status 200
    default-server inter {check_ms} fall 2 rise 1
{servers}
{inbound}"""


class HAProxy:
    """HAProxy in the foreground, with its configuration in a temporary folder."""

    def __init__(
        self,
        port: int,
        backends: list[Backend],
        *,
        check_ms: int = 1000,
        inbound_port: int | None = None,
    ) -> None:
        self.port = port
        self.backends = backends
        self.check_ms = check_ms
        self.inbound_port = inbound_port
        self.root: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """Where people reach the gateway."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def inbound_url(self) -> str | None:
        """Where agents post to the gateway (None without an inbound frontend)."""
        return None if self.inbound_port is None else f"http://127.0.0.1:{self.inbound_port}"

    def start(self, timeout: float = 20.0) -> HAProxy:
        """Write the configuration, check it, start HAProxy and wait until it answers."""
        binary = shutil.which("haproxy") or (
            "/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None
        )
        if binary is None:
            raise HAProxyUnavailable("HAProxy is not installed: `apt-get install haproxy`")
        self.root = Path(tempfile.mkdtemp(prefix="ofp-haproxy-"))
        cfg = self.root / "haproxy.cfg"
        cfg.write_text(
            config(self.port, self.backends, check_ms=self.check_ms, inbound_port=self.inbound_port)
        )
        checked = subprocess.run([binary, "-c", "-f", str(cfg)], capture_output=True, text=True)
        if checked.returncode != 0:
            raise HAProxyUnavailable(f"haproxy refused its configuration: {checked.stderr}")
        log = open(self.root / "haproxy.log", "wb")  # noqa: SIM115 (lives with the process)
        self.proc = subprocess.Popen(
            [binary, "-db", "-f", str(cfg)], stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise HAProxyUnavailable((self.root / "haproxy.log").read_text(errors="replace"))
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), 1),
            ):
                return self
            time.sleep(0.1)
        raise HAProxyUnavailable("haproxy did not listen in time")

    def wait_serving(self, timeout: float = 30.0) -> None:
        """Wait until a request through HAProxy reaches a node (one passed its health check)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                urllib.request.urlopen(self.url + "/healthz", timeout=2).close()
                return
            time.sleep(0.2)
        raise HAProxyUnavailable("no gateway node passed HAProxy's health check in time")

    def stop(self) -> None:
        """Stop HAProxy and remove its folder."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None
