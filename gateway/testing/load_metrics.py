"""What a load or soak run reads off a served gateway: its process in ``/proc``, the machine's
busy time, and the histograms of ``/metrics`` between two scrapes."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class ProcSample:
    """One reading of a process from ``/proc``."""

    cpu_s: float
    rss_mb: float
    threads: int
    fds: int


def thread_cpu(pid: int) -> dict[int, tuple[float, int]]:
    """Every thread of a process: CPU seconds so far (user + system) and its nice value."""
    ticks = os.sysconf("SC_CLK_TCK")
    out: dict[int, tuple[float, int]] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:  # the thread ended
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        out[int(task.name)] = ((int(fields[11]) + int(fields[12])) / ticks, int(fields[16]))
    return out


def read_proc(pid: int) -> ProcSample:
    """CPU seconds used so far, resident memory, threads and open file descriptors."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime + stime
    status = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return ProcSample(
        cpu_s=cpu,
        rss_mb=int(status["VmRSS"].split()[0]) / 1024,
        threads=int(status["Threads"]),
        fds=len(os.listdir(f"/proc/{pid}/fd")),
    )


def machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (``/proc/stat``), to see other work."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class ServedGateway:
    """A ``serve`` process started for the run (parrot only), or one already running."""

    def __init__(self, url: str, pid: int, proc: subprocess.Popen[bytes] | None = None) -> None:
        self.url = url.rstrip("/")
        self.ws = self.url.replace("http", "ws", 1) + "/ws"
        self.pid = pid
        self.proc = proc
        self._data: str | None = None

    @classmethod
    def start(cls, *extra: str, log: Path | None = None) -> ServedGateway:
        """Start ``serve`` on a free port with a throwaway records folder; wait until ready."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        data = tempfile.mkdtemp(prefix="ofp-load-")
        out = open(log or Path(data) / "serve.log", "wb")  # noqa: SIM115 (the process owns it)
        proc = subprocess.Popen(
            [
                *(sys.executable, "-m", "gateway", "serve", "--port", str(port), "--data", data),
                *("--agent", "builtin:parrot", *extra),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        gateway = cls(f"http://127.0.0.1:{port}", proc.pid, proc)
        gateway._data = data
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"serve exited with {proc.returncode}; see {out.name}")
            with contextlib.suppress(OSError):
                if gateway.get("/healthz").startswith("ok"):
                    return gateway
            time.sleep(0.3)
        proc.kill()
        raise RuntimeError("serve did not become ready in 120 s")

    def get(self, path: str) -> str:
        """GET a path of the gateway as text."""
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            body: bytes = r.read()
        return body.decode()

    def metrics(self) -> dict[str, float]:
        """``/metrics`` as a flat ``{"name{labels}": value}`` dict."""
        flat = {}
        for family in text_string_to_metric_families(self.get("/metrics")):
            for s in family.samples:
                labels = ",".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
                flat[f"{s.name}{{{labels}}}" if labels else s.name] = s.value
        return flat

    def stop(self) -> None:
        """Stop the process this script started (SIGTERM, then SIGKILL after 20 s)."""
        if self.proc is None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self._data:
            shutil.rmtree(self._data, ignore_errors=True)


def histogram_quantile(
    before: dict[str, float], after: dict[str, float], name: str, q: float
) -> float:
    """The ``q`` quantile of what histogram ``name`` observed between two scrapes, interpolated
    inside the bucket it falls in (as Prometheus' ``histogram_quantile`` does)."""
    bounds = sorted(
        (float(key.split("le=")[1].rstrip("}")), after[key] - before.get(key, 0.0))
        for key in after
        if key.startswith(f"{name}_bucket{{")
    )
    total = bounds[-1][1] if bounds else 0.0
    if total <= 0:
        return 0.0
    rank, lower, below = q * total, 0.0, 0.0
    for upper, count in bounds:
        if count >= rank:
            if upper == float("inf"):
                return lower
            return lower + (upper - lower) * (rank - below) / max(count - below, 1e-9)
        lower, below = upper, count
    return lower


def stage_metrics(scrape: dict[str, float], stage: str) -> dict[str, float]:
    """The buckets of one stage of ``ofp_gateway_stage_seconds``, renamed ``s_bucket{le=…}``."""
    prefix = "ofp_gateway_stage_seconds_bucket{le="
    return {
        f"s_bucket{{le={key[len(prefix) :].split(',')[0]}}}": value
        for key, value in scrape.items()
        if key.startswith(prefix) and key.endswith(f"stage={stage}}}")
    }


def delta(start: dict[str, float], end: dict[str, float], name: str) -> int:
    """How much counter ``name`` grew between two scrapes."""
    return round(end.get(name, 0) - start.get(name, 0))
