"""Speech-to-text options shared by commands: the language as an option value (``serve``,
``speech serve``), and the second reader and the feedback reader of speech over an agent
(``serve``, ``talk``)."""

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


#: The second speech model that reads again speech over an agent whose words would stop it
#: (``OverlapSettings.second_sure``; "": none): ``ServeSettings.second_stt_model`` and
#: ``TalkSettings.second_stt_model`` both default to it. Loaded only when installed (``pip
#: install 'ofp-gateway[base-model]'``; ``scripts/run`` does), when speech is decoded in the
#: process and in English, and when it is not the first model itself.
SECOND_STT_MODEL = "base"


def second_model(text: str) -> str:
    """``--stt-second-model``: a model's name, or ``none`` (off: the empty name)."""
    return "" if text.strip().lower() in ("none", "off", "") else text


def add_second_model_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--stt-second-model``, into the settings field ``second_stt_model`` (its help names the
    command's default as ``{d.second_stt_model}``)."""
    p.add_argument(
        "--stt-second-model",
        dest="second_stt_model",
        type=second_model,
        metavar="MODEL",
        help="a second speech model that reads again speech over an agent whose words would "
        "stop it, so a backchannel the first misheard does not ({d.second_stt_model}; loaded "
        "when installed and speech is in process; none: off)",
    )


def add_feedback_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--no-feedback-reader``, into the settings field ``feedback_reader``."""
    p.add_argument(
        "--no-feedback-reader",
        dest="feedback_reader",
        action="store_false",
        default=None,
        help="do not load the feedback reader (a probe on the small language model) that reads "
        "words said over an agent as a listener's feedback, so the agent goes on: the rules' "
        "words alone decide then",
    )
