"""What the gateway counts (gateway/server/metrics.py): stage timings by their Prometheus names,
one registry per gateway, and ``/metrics`` of a real gateway after a typed turn."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import pytest
from websockets.asyncio.client import connect

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.proxy.models import VoiceModels
from gateway.server.app import Gateway, GatewaySettings
from gateway.server.memory import ALLOCATOR
from gateway.server.metrics import Metrics
from gateway.testing.processes import free_port, metric_samples
from tests.server.helpers import admitting


def test_stage_timings_go_in_under_their_prometheus_names_in_seconds() -> None:
    metrics = Metrics()
    metrics.observe_timing(
        {
            "endpoint": 300.0,
            "stt": 0,
            "agent": 1.5,
            "ttsFirstAudio": 63.0,
            "total": 367.0,
            "queued": 12.0,
            "decode": 164.0,
            "earlyEnd": True,  # a flag, not a duration: never observed
            "speculative": None,
        }
    )
    got = metric_samples(metrics.render())
    stages = {"endpoint", "stt", "agent", "tts_first_audio", "total", "stt_queue", "stt_decode"}
    for stage in stages:
        assert got[f"ofp_gateway_stage_seconds_count{{stage={stage}}}"] == 1, stage
    assert got["ofp_gateway_stage_seconds_sum{stage=total}"] == pytest.approx(0.367)
    assert got["ofp_gateway_stage_seconds_sum{stage=stt}"] == 0
    # 367 ms falls in the 0.4 s bucket and not in the 0.35 s one.
    assert got["ofp_gateway_stage_seconds_bucket{le=0.35,stage=total}"] == 0
    assert got["ofp_gateway_stage_seconds_bucket{le=0.4,stage=total}"] == 1
    observed = {k.split("stage=")[1].rstrip("}") for k in got if "_count{stage=" in k}
    assert observed == stages  # earlyEnd and speculative made no series


def test_a_missing_stage_is_not_counted_as_zero() -> None:
    metrics = Metrics()
    metrics.observe_timing({"total": 500.0, "stt": None})
    got = metric_samples(metrics.render())
    assert got["ofp_gateway_stage_seconds_count{stage=total}"] == 1
    assert "ofp_gateway_stage_seconds_count{stage=stt}" not in got


def test_each_gateway_has_its_own_registry() -> None:
    # Two gateways in one process (the tests do it) must neither collide nor add up.
    first, second = Metrics(), Metrics()
    first.utterances.labels("voice").inc()
    first.agent_errors.labels("@timedOut").inc(2)
    got_first, got_second = metric_samples(first.render()), metric_samples(second.render())
    assert got_first["ofp_gateway_utterances_total{source=voice}"] == 1
    assert got_first["ofp_gateway_agent_errors_total{reason=@timedOut}"] == 2
    assert "ofp_gateway_utterances_total{source=voice}" not in got_second
    assert got_second["ofp_gateway_sessions_opened_total"] == 0


@pytest.mark.slow
async def test_metrics_of_a_real_gateway_after_a_typed_turn() -> None:
    settings = GatewaySettings(port=free_port(), agents=("builtin:parrot",))
    models = VoiceModels()
    gateway = Gateway(settings, models=models, directory=AgentDirectory(AddressPolicy()))
    await gateway.start()
    url = f"http://127.0.0.1:{settings.port}"
    try:
        await admitting(gateway)
        async with connect(url.replace("http", "ws", 1) + "/ws") as ws:
            await ws.send(json.dumps({"type": "hello", "transport": "none"}))
            assert json.loads(await ws.recv())["type"] == "welcome"
            await ws.send(json.dumps({"type": "text", "text": "count me"}))
            while True:  # until the parrot answers
                event = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if event.get("type") == "utterance" and "count me" in event.get("text", ""):
                    break
            scrape = await asyncio.to_thread(lambda: urllib.request.urlopen(url + "/metrics").read())
            got = metric_samples(scrape)
            assert got["ofp_gateway_sessions"] == 1
            assert got["ofp_gateway_sessions_opened_total"] == 1
            assert got["ofp_gateway_utterances_total{source=text}"] == 1
            assert got.get("ofp_gateway_utterances_total{source=voice}", 0) == 0
            assert got["ofp_gateway_tasks"] > 0 and got["ofp_gateway_threads"] >= 1
            # The shared model's counters, as the transcriber keeps them.
            assert got["ofp_gateway_stt_abandoned"] == models.transcriber.abandoned
            assert got["ofp_gateway_stt_full_window_retries"] == models.transcriber.full_window_retries
            # The allocator this process runs on, by the name the memory module found.
            assert got[f"ofp_gateway_memory_info{{allocator={ALLOCATOR}}}"] == 1
    finally:
        await gateway.close()

