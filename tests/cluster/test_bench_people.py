"""``scripts/bench_cluster.py --people N`` as a person runs it, small: two people through
HAProxy on the local cluster's two nodes (PostgreSQL, HAProxy, two ``serve``), one on each. The
figures are the benchmark's (docs/performance.md); here, what must hold whatever the machine:
each node really had its share (its own session count), every turn was answered, and each node's
figures and the machine's CPU are in the report."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gateway.cluster.postgres import PostgresUnavailable, server_bin

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # PostgreSQL, HAProxy, two serve processes, speech in real time


def _cluster_here() -> None:
    try:
        server_bin()
        missing = None if shutil.which("haproxy") else "no haproxy"
    except PostgresUnavailable as exc:
        missing = str(exc)
    if missing:
        reason = f"NO POSTGRESQL OR HAPROXY HERE, cluster benchmark not run: {missing}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)


@pytest.fixture(scope="module")
def report() -> dict:
    """Not under coverage's tracer: a gateway slowed several times over cannot keep up."""
    _cluster_here()
    done = subprocess.run(
        [
            sys.executable, "scripts/bench_cluster.py", "--people", "2", "--seconds", "8",
            "--webrtc-every", "0", "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "COVERAGE_PROCESS_CONFIG"},
    )  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_each_node_has_its_share_through_haproxy(report: dict) -> None:
    nodes = report["nodes"]
    assert [n["node"] for n in nodes] == ["node1", "node2"]
    for node in nodes:
        # The node counted the one person the balancer sent it by the cookie, not two or none.
        assert node["connected"] == 1 and node["gatewaySessions"] == 1, node
        assert node["refused"] == 0


def test_every_turn_is_answered_and_each_node_measured(report: dict) -> None:
    assert report["people"] == 2 and report["refused"] == 0
    assert report["turns"] == sum(n["turns"] for n in report["nodes"]) > 0
    assert report["missed"] == 0
    for node in report["nodes"]:
        assert node["turns"] > 0 and node["p95Ms"] is not None, node
        assert node["cpuPercent"] > 0 and node["rssMb"] > 0
    assert report["nodesCpuPercent"] == pytest.approx(
        sum(n["cpuPercent"] for n in report["nodes"]), abs=0.2
    )
    assert report["machineCpuPercent"] is not None
    assert len(report["loadBefore"]) == 3 and len(report["loadAfter"]) == 3


def test_fewer_people_than_nodes_is_a_clear_error() -> None:
    done = subprocess.run(
        [sys.executable, "scripts/bench_cluster.py", "--people", "1", "--nodes", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 2
    assert "--people must be at least --nodes" in done.stderr
    assert "Traceback" not in done.stderr
