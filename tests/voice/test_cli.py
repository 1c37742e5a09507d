"""``--stt-language``'s value type."""

from __future__ import annotations

import argparse

import pytest

from gateway.voice.cli import stt_language


def test_a_language_whisper_knows_is_taken_and_another_refused():
    assert stt_language("de") == "de"
    with pytest.raises(argparse.ArgumentTypeError, match="no language 'klingon'"):
        stt_language("klingon")
