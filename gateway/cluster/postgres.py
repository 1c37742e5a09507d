"""A throw-away PostgreSQL server from Debian's ``postgresql`` package, in a temporary folder.

Debian installs the server programs in ``/usr/lib/postgresql/NN/bin``, off ``PATH``. The server
refuses to run as root, so when we are root it runs as an unprivileged user (Debian's
``postgres`` account if the package made one, else ``nobody``) through ``runuser``, in a folder
under ``/tmp`` that user owns: a folder under a root-only parent (pytest's ``tmp_path``) would be
out of its reach. It listens on loopback only and trusts local connections: it holds test data and
lives as long as the process that started it.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from gateway.errors import ClusterUnavailable

#: Where Debian puts the server programs, one folder per major version.
DEBIAN_PG_ROOT = Path("/usr/lib/postgresql")


class PostgresUnavailable(ClusterUnavailable):
    """PostgreSQL is not installed here or would not start; the message says what to do."""


def server_bin() -> Path:
    """The newest ``/usr/lib/postgresql/NN/bin`` holding ``initdb``, else ``initdb`` on PATH."""
    versions = sorted(
        (p for p in DEBIAN_PG_ROOT.glob("*/bin") if (p / "initdb").is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if versions:
        return versions[-1]
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise PostgresUnavailable(
        "PostgreSQL is not installed: `apt-get install postgresql` (Debian puts initdb in "
        "/usr/lib/postgresql/NN/bin)"
    )


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _unprivileged_user() -> str | None:
    """None when we are not root (run as ourselves), else an account the server accepts."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise PostgresUnavailable("running as root and no unprivileged account (postgres, nobody)")


class TempPostgres:
    """Start with :meth:`start`, stop with :meth:`stop` (the folder is removed).

    ``fsync`` off suits tests (nothing survives the folder anyway); a benchmark of write cost
    keeps it on, as a real deployment does.
    """

    def __init__(
        self, *, port: int | None = None, fsync: bool = True, database: str = "gateway"
    ) -> None:
        self.port = port or free_port()
        self.fsync = fsync
        self.database = database
        self.user = "gateway"
        self.root: Path | None = None
        self.proc: subprocess.Popen[bytes] | None = None
        self._argv: list[str] = []

    @property
    def url(self) -> str:
        """The connection URL of the database (no password: loopback is trusted)."""
        return f"postgresql://{self.user}@127.0.0.1:{self.port}/{self.database}"

    def _as_owner(self, argv: list[str], account: str | None) -> list[str]:
        return ["runuser", "-u", account, "--", *argv] if account else argv

    def start(self, timeout: float = 60.0) -> TempPostgres:
        """initdb, start the server, create the database; raises :class:`PostgresUnavailable`."""
        bindir = server_bin()
        account = _unprivileged_user()
        self.root = Path(tempfile.mkdtemp(prefix="ofp-pg-"))
        data, sockets = self.root / "data", self.root / "run"
        sockets.mkdir()
        if account:
            entry = pwd.getpwnam(account)
            for path in (self.root, sockets):
                os.chown(path, entry.pw_uid, entry.pw_gid)
        init = subprocess.run(
            self._as_owner(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    self.user,
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                    "--no-instructions",
                ],
                account,
            ),
            capture_output=True,
            text=True,
            check=False,
        )
        if init.returncode != 0:
            self.stop()
            raise PostgresUnavailable(f"initdb failed: {init.stderr.strip() or init.stdout}")
        if account:
            (self.root / "server.log").touch()
            os.chown(self.root / "server.log", pwd.getpwnam(account).pw_uid, -1)
        self._argv = self._as_owner(
            [
                str(bindir / "postgres"),
                "-D",
                str(data),
                "-p",
                str(self.port),
                "-h",
                "127.0.0.1",
                "-k",
                str(sockets),
                "-c",
                f"fsync={'on' if self.fsync else 'off'}",
                "-c",
                "max_connections=100",
                "-c",
                "shared_buffers=64MB",
            ],
            account,
        )
        self._launch(timeout)
        created = subprocess.run(
            [
                str(bindir / "createdb"),
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                self.user,
                self.database,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        if created.returncode != 0:
            self.stop()
            raise PostgresUnavailable(f"createdb failed: {created.stderr.strip()}")
        return self

    def _launch(self, timeout: float) -> None:
        """Start the server process on the existing folder and wait until it answers."""
        assert self.root is not None
        bindir = server_bin()
        log = open(self.root / "server.log", "ab")  # noqa: SIM115 (lives with the server)
        self.proc = subprocess.Popen(
            self._argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C to the tests reaches us, and we stop it cleanly
        )
        deadline = time.monotonic() + timeout
        while True:
            ready = subprocess.run(
                [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)],
                capture_output=True,
                check=False,
            )
            if ready.returncode == 0:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                text = (self.root / "server.log").read_text(errors="replace")
                self.stop()
                raise PostgresUnavailable(f"postgres did not start:\n{text}")
            time.sleep(0.1)

    def halt(self) -> None:
        """Stop the server (fast shutdown), keeping its folder: :meth:`resume` starts it again,
        with its data (a database outage, for the fault tests)."""
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(20)

    def resume(self, timeout: float = 60.0) -> None:
        """Start the server :meth:`halt` stopped, on the same port and data."""
        self._launch(timeout)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        if self.proc is not None and self.proc.poll() is None:
            # SIGINT is PostgreSQL's "fast" shutdown (SIGTERM's "smart" one waits for clients).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
