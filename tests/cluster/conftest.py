"""A cluster on loopback for the whole module: PostgreSQL, HAProxy and two ``serve`` nodes."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator

import pytest

from gateway.cluster.haproxy import HAProxyUnavailable
from gateway.cluster.local import LocalCluster
from gateway.cluster.postgres import PostgresUnavailable


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    # Agents on loopback allowed: tests/cluster/test_inbound.py's timer agent runs in the test.
    c = LocalCluster(
        2,
        serve_args=(
            "--max-sessions", "3", "--audio-feature", "url", "--allow-address", "127.0.0.0/8"
        ),
    )  # fmt: skip
    try:
        c.start()
    except (PostgresUnavailable, HAProxyUnavailable) as exc:
        c.stop()
        reason = f"NO POSTGRESQL OR HAPROXY HERE, cluster tests not run: {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    except BaseException:
        c.stop()
        raise
    yield c
    c.stop()
