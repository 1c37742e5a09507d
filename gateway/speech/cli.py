"""Speech services on the command line: ``--stt``/``--tts``/``--wake-service`` (``serve`` and
``talk``) and the ``speech serve`` command."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gateway.options import defaults_shown, from_options
from gateway.speech.link import BadServiceAddress, LinkSettings, parse_address
from gateway.voice.cli import stt_language

if TYPE_CHECKING:
    from gateway.speech.server import SpeechServerSettings
    from gateway.speech.services import SpeechServices


def _address(text: str) -> str:
    try:
        parse_address(text)
    except BadServiceAddress as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_speech_service_options(p: argparse.ArgumentParser) -> None:
    """``--stt``, ``--tts`` and ``--wake-service``: speech on the network (each optional; in
    process when not given). Their ``dest`` names :class:`~gateway.speech.services.
    SpeechServices`' fields."""
    g = p.add_argument_group(
        "speech services", "run a part of speech on a Wyoming server (docs/speech-services.md)"
    )
    g.add_argument(
        "--stt",
        dest="stt_service",
        type=_address,
        metavar="wyoming://HOST:PORT",
        help="speech to text on a Wyoming server (ofp-gateway speech serve, or a stock "
        "wyoming-faster-whisper: text only, no words or confidence). Default: in process",
    )
    g.add_argument(
        "--tts",
        dest="tts_service",
        type=_address,
        metavar="wyoming://HOST:PORT",
        help="speech synthesis on a Wyoming server (ofp-gateway speech serve, or a stock "
        "wyoming-piper: one voice for every agent). Default: in process",
    )
    g.add_argument(
        "--wake-service",
        dest="wake_service",
        type=_address,
        metavar="wyoming://HOST:PORT",
        help="wake word detection on a Wyoming server (ofp-gateway speech serve: the "
        "microWakeWord models). Default: in process",
    )
    g.add_argument(
        "--speech-timeout",
        dest="speech_timeout_s",
        type=_timeout,
        metavar="SECONDS",
        help="the most one request to the --stt or --tts server may take before it counts as "
        "not answering (it is tried again, then the person is told). Default: "
        f"{_LINK_TIMEOUT_S:g}",
    )


#: The speech link's own default, shown in the help (read from its settings, not repeated).
_LINK_TIMEOUT_S = LinkSettings().timeout_s


def _timeout(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: give a number of seconds above 0")
    return value


def services_from_args(services: SpeechServices, args: argparse.Namespace) -> SpeechServices:
    """``services`` with the options given (``--stt``, ``--tts``, ``--wake-service``,
    ``--speech-timeout``) replaced; the rest keep their defaults."""
    out = from_options(services, args)
    timeout = getattr(args, "speech_timeout_s", None)
    if timeout is None:
        return out
    return replace(out, link=replace(out.link, timeout_s=timeout))


def timeout_without_service(services: SpeechServices, timeout_s: float | None) -> str | None:
    """Why ``--speech-timeout`` cannot be used here (no ``--stt``/``--tts`` to apply it to), or
    None: an option parsed and then ignored is refused instead."""
    if timeout_s is not None and not (services.stt_service or services.tts_service):
        return "--speech-timeout only works with --stt or --tts (a speech server)"
    return None


def _server_shown() -> dict[str, Any]:
    from gateway.speech.server import SpeechServerSettings

    return {"d": SpeechServerSettings()}


def add_speech_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``speech serve``."""
    p = sub.add_parser("speech", help="this gateway's speech as a Wyoming server")
    ssub = p.add_subparsers(dest="speech_command", metavar="ACTION", required=True)
    ps = ssub.add_parser(
        "serve",
        help="serve speech to text, synthesis and wake words over Wyoming",
        description="Serve this project's speech-to-text (words, timings, confidences, "
        "alternates, streamed partials), synthesis (streamed by sentence) and microWakeWord "
        "wake words to gateway nodes (--stt/--tts/--wake-service) or Home Assistant.",
        formatter_class=defaults_shown(_server_shown),
    )
    ps.add_argument("--uri", type=_tcp_uri, help="where to listen: tcp://HOST:PORT ({d.uri})")
    ps.add_argument(
        "--stt-model",
        dest="model",
        metavar="MODEL",
        help="speech model: tiny.en, base, or a folder name ({d.stt.model})",
    )
    ps.add_argument(
        "--stt-language",
        dest="language",
        type=stt_language,
        metavar="CODE",
        help="the language spoken, as Whisper's code (en, de, fr…) for a multilingual speech "
        "model; detected at each utterance if not given. English-only models take en only",
    )
    ps.add_argument(
        "--max-connections",
        dest="max_connections",
        type=_positive,
        metavar="N",
        help="connections served at once; more are answered with a busy error "
        "({d.max_connections})",
    )
    ps.set_defaults(func=cmd_speech_serve)


def _tcp_uri(text: str) -> str:
    if not text.startswith("tcp://"):
        raise argparse.ArgumentTypeError(f"{text!r}: give tcp://HOST:PORT")
    return _address(text)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give 1 or more")
    return value


def server_settings(args: argparse.Namespace) -> SpeechServerSettings:
    """The ``speech serve`` settings the options ask for."""
    from dataclasses import replace

    from gateway.speech.server import SpeechServerSettings

    d = SpeechServerSettings()
    return replace(from_options(d, args), stt=from_options(d.stt, args))


def cmd_speech_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    from gateway.speech.server import run_speech_server

    return asyncio.run(run_speech_server(server_settings(args)))
