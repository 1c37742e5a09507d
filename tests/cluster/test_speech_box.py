"""The reference deployment with a speech box: ``LocalCluster(speech_server=True)`` (what
``scripts/cluster --speech-server`` starts) runs one ``speech serve`` for two nodes, and each
node's ``/readyz`` names it for speech, synthesis and wake words. (Turns through a speech
server: tests/speech.)"""

from __future__ import annotations

import os
import warnings

import pytest

from gateway.cluster.haproxy import HAProxyUnavailable
from gateway.cluster.local import LocalCluster
from gateway.cluster.postgres import PostgresUnavailable

pytestmark = pytest.mark.slow


def test_two_nodes_share_one_speech_server() -> None:
    cluster = LocalCluster(2, speech_server=True)
    try:
        cluster.start()
    except (PostgresUnavailable, HAProxyUnavailable) as exc:
        cluster.stop()
        reason = f"NO POSTGRESQL OR HAPROXY HERE, cluster test not run: {exc}"
        if os.environ.get("CI"):
            pytest.fail(reason)
        warnings.warn(reason, stacklevel=1)
        pytest.skip(reason)
    try:
        address = cluster.speech_address
        assert address is not None
        for node in cluster.nodes:
            status, body = node.readiness()
            assert status == 200, body
            services = {(s["service"], s["address"], s["up"]) for s in body["speechServices"]}
            assert services == {(k, address, True) for k in ("stt", "tts", "wake")}
    finally:
        cluster.stop()
    assert cluster.speech is not None and not cluster.speech.alive
