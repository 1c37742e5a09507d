"""Past capacity: a gateway whose speech recognition is behind refuses new people, clearly.

An in-process gateway (real models, real WebSocket) is put behind for real: a burst of long
final transcriptions queues on the shared Whisper model, as when many people finish speaking at
once. A new visitor then gets close code 1013 with a reason they can act on, while a session
that was already open keeps working.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.proxy.models import VoiceModels
from gateway.server.app import Gateway, GatewaySettings
from gateway.testing.processes import free_port
from gateway.testing.speech import piper_16k


@pytest.mark.slow
async def test_new_sessions_are_refused_while_speech_recognition_is_behind() -> None:
    settings = GatewaySettings(port=free_port(), agents=("builtin:parrot",), max_stt_wait_s=0.5)
    gateway = Gateway(settings, models=VoiceModels(), directory=AgentDirectory(AddressPolicy()))
    await gateway.start()
    url = f"ws://127.0.0.1:{settings.port}/ws"
    transcriber = gateway.models.transcriber
    speech = piper_16k(
        "Please book a table for two people tonight, somewhere quiet near the river."
    )
    clip = np.concatenate([speech, speech])  # ~8 s: each final decode takes a while
    try:
        async with connect(url) as early:
            await early.send(json.dumps({"type": "hello", "transport": "none"}))
            assert json.loads(await early.recv())["type"] == "welcome"

            burst = [asyncio.create_task(transcriber.transcribe(clip)) for _ in range(6)]
            for _ in range(400):  # until the waits measured by the scheduler pass the bound
                if transcriber.queue_wait_s > settings.max_stt_wait_s:
                    break
                await asyncio.sleep(0.05)
            assert transcriber.queue_wait_s > settings.max_stt_wait_s

            with pytest.raises(ConnectionClosed) as refused:
                async with connect(url) as late:
                    await late.send(json.dumps({"type": "hello", "transport": "none"}))
                    await late.recv()
            assert refused.value.rcvd is not None and refused.value.rcvd.code == 1013
            assert "speech recognition is behind" in refused.value.rcvd.reason
            assert "try again" in refused.value.rcvd.reason
            assert gateway.metrics.refused._value.get() == 1  # counted for /metrics

            # The person already talking is still served while the burst drains.
            await early.send(json.dumps({"type": "text", "text": "still there?"}))
            while True:  # the parrot repeats it back
                event = json.loads(await asyncio.wait_for(early.recv(), 30))
                if event.get("type") == "utterance" and "still there" in event["text"]:
                    break
            await asyncio.gather(*burst)
    finally:
        await gateway.close()
