"""Faults a test or benchmark can inject into a real `serve`: its records on a small disk of its
own (a tmpfs mounted in a mount namespace only the gateway sees) that fills up and frees again.

Root only (``unshare -m`` and ``mount``): :func:`can_mount` says whether this machine allows it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gateway.testing.processes import READY_TIMEOUT_S, ROOT, Served, free_port, wait_http

FILLER = ".filler"


@functools.cache
def can_mount() -> bool:
    """Whether a private tmpfs can be mounted here (root, and unshare allowed)."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("nsenter"):
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt && umount /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


class SmallDisk:
    """``serve`` with ``--data`` on a tmpfs of ``size_mb`` only it sees."""

    def __init__(self, data: Path, log: Path, *extra: str, size_mb: int = 16) -> None:
        self.data = data
        data.mkdir(parents=True, exist_ok=True)
        port = free_port()
        # --make-rprivate: the tmpfs never shows outside the gateway's namespace.
        script = (
            f'mount --make-rprivate / && mount -t tmpfs -o size={size_mb}m tmpfs "$1" '
            '&& shift && exec "$@"'
        )
        args = [
            "unshare", "-m", "sh", "-c", script, "sh", str(data),
            sys.executable, "-m", "gateway", "-v", "serve", "--port", str(port),
            "--data", str(data), *extra,
        ]  # fmt: skip
        env = {k: v for k, v in os.environ.items() if k != "OFP_GATEWAY_ALLOW"}
        with log.open("w") as out:
            proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        self.served = Served(f"http://127.0.0.1:{port}", proc, log, None)
        try:
            wait_http(self.served.url + "/healthz", proc, log, READY_TIMEOUT_S)
        except BaseException:
            self.served.stop()
            raise

    def _inside(self, command: str) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["nsenter", "-t", str(self.served.pid), "-m", "sh", "-c", command],
            capture_output=True,
            check=False,
        )

    def fill(self) -> None:
        """Fill the disk: every write of the store fails with "database or disk is full"."""
        self._inside(f'cat /dev/zero > "{self.data}/{FILLER}"')  # stops at ENOSPC

    def free(self) -> None:
        """Make room again."""
        self._inside(f'rm -f "{self.data}/{FILLER}"')

    def copy_out(self, dest: Path) -> Path:
        """A copy of the records database (with its write-ahead log) where the tests can read it."""
        dest.mkdir(parents=True, exist_ok=True)
        done = self._inside(f'cp "{self.data}"/records.sqlite3* "{dest}/"')
        assert done.returncode == 0, done.stderr
        return dest

    def stop(self) -> None:
        """Stop the gateway (its tmpfs goes with its namespace)."""
        self.served.stop()
