"""A wake word service that fails while the person is listened to (issue 41): the project's
speech server (its wake words) SIGKILLed mid-stream, through ``talk --wav --wake`` in a real
process. The device stays asleep (nothing said reaches the agent: no wake word was heard), and
the person is told so in one line naming the service, once, with no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.testing.loopback import Site, capture_agent, utterances_received
from gateway.testing.speech import espeak_wav, silence
from tests.speech.conftest import own_server
from tests.speech.test_faults_mid_turn import Proxy
from tests.speech.test_talk_over_wyoming import clip, talk

pytestmark = pytest.mark.slow


async def test_talk_tells_the_person_the_wake_service_died(site: Site, tmp_path: Path) -> None:
    server = own_server(tmp_path)
    server.start()
    try:
        url = capture_agent(site)
        # Words without a wake word, then time for the stream to be reopened after its backoff
        # (it fails again: the server is gone) while the clip still plays.
        wav = clip(tmp_path, espeak_wav("Turn off the oven."), silence(4000))
        with Proxy(server.port, action="kill", on_cue=server.kill) as proxy:
            code, result, log = await talk(
                "--wav", wav, "--agent", url, "--wake", "alexa",
                "--wake-service", proxy.address, data=tmp_path, fast=False,
            )  # fmt: skip
        assert proxy.acted == 1, log  # the server was killed mid-stream
    finally:
        server.stop()
    assert "Traceback" not in log, log
    told = [n["text"] for n in result["notices"]]
    named = [t for t in told if f"wake service at {proxy.address}" in t]
    assert len(named) == 1, told  # told once, not at every reopening
    assert named[0].startswith("The wake word cannot be heard right now"), named
    assert utterances_received(site) == []  # asleep: nothing went to the agent
    assert code == 1, log  # an @error: talk says its turn did not complete
