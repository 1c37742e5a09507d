"""The speech-to-text language as an option value (``serve``, ``speech serve``)."""

from __future__ import annotations

import argparse

from gateway.errors import ConfigError


def stt_language(text: str) -> str:
    """``--stt-language``: a language code Whisper knows, checked when the option is given."""
    # Imported here, not above: gateway.voice.whisper_engine loads faster-whisper and
    # CTranslate2 (0.3 s on the 2-core machine), which a command line that does not name a
    # language must not pay.
    from gateway.voice.whisper_engine import check_language

    try:
        check_language(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text
