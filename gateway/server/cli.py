"""The ``serve`` command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from gateway.server.access import AUDIO_URL_TTL_S, MAX_SESSIONS_PER_ADDRESS
from gateway.server.memory import TRIM_INTERVAL_S, restart_under_jemalloc
from gateway.voice.endpoint import EndpointSettings


def add_serve_command(sub: argparse._SubParsersAction) -> None:
    """Register ``serve`` on the main parser."""
    p = sub.add_parser(
        "serve",
        help="serve the browser gateway (page, WebSocket, WebRTC)",
        description="Serve the page and the voice gateway. With no --agent, the "
        "built-in agents are on the floor, so it talks at once.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="port for the page and WebSocket (8080)")
    p.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="URL|builtin:NAME",
        help="an agent every new conversation invites (repeatable; default: the built-ins)",
    )
    p.add_argument(
        "--allow-address",
        action="append",
        default=[],
        metavar="CIDR",
        help="let agents be reached at these loopback/private addresses (repeatable; "
        "also OFP_GATEWAY_ALLOW)",
    )
    p.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="another web origin allowed to open the WebSocket (repeatable)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name people reach the gateway by (repeatable). Requests for other "
        "names are refused (421), which stops DNS rebinding; localhost, IP addresses, --host "
        "and --public-url's host are always answered",
    )
    p.add_argument(
        "--data",
        metavar="DIR|URL",
        help="records folder, or a postgresql:// database shared by several nodes (default: "
        "$OFP_GATEWAY_DATABASE_URL, else $OFP_GATEWAY_DATA, else per-user)",
    )
    p.add_argument("--no-record", action="store_true", help="keep no records")
    p.add_argument(
        "--retention-days",
        type=float,
        default=None,
        help="delete records older than this many days (default: keep)",
    )
    p.add_argument(
        "--public-url",
        help="URL people and agents reach this gateway at (for audio valueUrls behind a proxy)",
    )
    p.add_argument(
        "--max-sessions",
        type=int,
        default=12,
        help="clients at once; more are refused (12: what 2 cores serve well, see README)",
    )
    p.add_argument(
        "--max-sessions-per-address",
        type=_count,
        default=MAX_SESSIONS_PER_ADDRESS,
        metavar="N",
        help=f"sessions at once from one visitor address ({MAX_SESSIONS_PER_ADDRESS}; 0: no "
        "limit). Behind a reverse proxy on this machine, its X-Forwarded-For names the "
        "visitor; clients of this machine itself are not limited",
    )
    p.add_argument(
        "--max-frame-bytes",
        type=int,
        default=256 * 1024,
        help="largest WebSocket message accepted (256 KiB)",
    )
    p.add_argument(
        "--audio-feature",
        choices=["inline", "url", "off"],
        default="inline",
        help="how utterances carry the person's audio (inline base64, a URL, or not). A URL "
        "is a capability: signed, for this clip only, valid --audio-url-ttl seconds",
    )
    p.add_argument(
        "--audio-url-ttl",
        type=_positive_seconds,
        default=AUDIO_URL_TTL_S,
        metavar="SECONDS",
        help=f"how long agents may fetch a clip by its URL ({AUDIO_URL_TTL_S:g})",
    )
    p.add_argument(
        "--keep-audio",
        action="store_true",
        help="keep the person's voice (the clip of each utterance) in the records. Off by "
        "default: transcripts are kept, the voice is not",
    )
    p.add_argument(
        "--ice-server",
        action="append",
        default=[],
        type=_ice_server,
        metavar="URL",
        help="a STUN/TURN server for WebRTC (repeatable): stun:HOST:PORT or "
        "turn:USER:PASSWORD@HOST:PORT. None by default: the media path contacts only the page",
    )
    p.add_argument(
        "--stt-model", default="tiny.en", help="speech model: tiny.en, base, or a folder name"
    )
    p.add_argument(
        "--end-silence-ms",
        type=int,
        default=700,
        help="silence that ends an unfinished-sounding utterance (700)",
    )
    p.add_argument(
        "--trim-memory",
        type=_seconds,
        default=TRIM_INTERVAL_S,
        metavar="SECONDS",
        help=f"with --allocator system: hand freed memory back to the system this often "
        f"({TRIM_INTERVAL_S:g}; 0: never). jemalloc does so by itself",
    )
    p.add_argument(
        "--allocator",
        choices=["jemalloc", "system"],
        default="jemalloc",
        help="memory allocator. jemalloc (Debian's libjemalloc2; serve restarts itself under it "
        "at once): less memory per person, a little more CPU (see README). system: the C "
        "library's malloc, trimmed every --trim-memory seconds",
    )
    p.add_argument(
        "--rejoin",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="how long a conversation whose page went waits for it to come back before it ends "
        "and its agents are told bye (600)",
    )
    p.add_argument(
        "--voices", metavar="voices.json", help="map agents to Piper voices (see models/README.md)"
    )
    p.add_argument(
        "--drain-seconds",
        type=_seconds,
        default=None,
        metavar="SECONDS",
        help="on SIGUSR1 (or SIGTERM with shared records): refuse new sessions, let turns in progress finish for at "
        "most this long, then hand the pages over to other nodes and exit (30)",
    )
    p.add_argument(
        "--node",
        default="",
        metavar="NAME",
        help="this node's name in shared records (default: host name and a random suffix)",
    )
    p.add_argument(
        "--wake",
        default="off",
        help="wake word: hey_jarvis, okay_nabu, alexa, hey_mycroft, phrase:TEXT, or off (default)",
    )
    p.set_defaults(func=cmd_serve)


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative: give 0 (no limit) or more")
    return value


def _positive_seconds(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text}: give a positive number of seconds")
    return value


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


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the gateway until interrupted."""
    if args.allocator == "jemalloc" and getattr(args, "own_process", False):
        restart_under_jemalloc()  # returns only if it cannot (or already did)
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    from gateway.agents.directory import AgentDirectory
    from gateway.agents.policy import AddressPolicy
    from gateway.proxy.session import SessionSettings, VoiceModels
    from gateway.records.base import Recorder, open_recorder
    from gateway.render.voices import VoiceBook
    from gateway.server.app import Gateway, GatewaySettings
    from gateway.server.readiness import drain
    from gateway.voice.stt import SttSettings

    recorder: Recorder | None = None
    if not args.no_record:
        recorder = open_recorder(args.data, retention_days=args.retention_days)
    print("loading speech models…", file=sys.stderr, flush=True)
    voices = VoiceBook.from_file(args.voices) if args.voices else None
    models = VoiceModels(SttSettings(model=args.stt_model), voices=voices)
    session = SessionSettings(
        endpoint=EndpointSettings(end_silence_ms=args.end_silence_ms, pause_ms=200)
    )
    settings = GatewaySettings(
        host=args.host,
        port=args.port,
        agents=tuple(args.agent) or GatewaySettings.agents,
        public_url=args.public_url,
        allow_origins=tuple(args.allow_origin),
        allow_hosts=tuple(args.allow_host),
        max_sessions=args.max_sessions,
        max_sessions_per_address=args.max_sessions_per_address,
        keep_audio=args.keep_audio,
        audio_url_ttl_s=args.audio_url_ttl,
        ice_servers=tuple(args.ice_server),
        max_frame_bytes=args.max_frame_bytes,
        audio_feature=args.audio_feature,
        wake=args.wake,
        trim_memory_s=args.trim_memory,
        drain_s=GatewaySettings.drain_s if args.drain_seconds is None else args.drain_seconds,
        node=args.node,
        rejoin_s=GatewaySettings.rejoin_s if args.rejoin is None else args.rejoin,
        session=session,
    )
    directory = AgentDirectory(AddressPolicy.from_env_and_args(args.allow_address))
    gateway = Gateway(settings, models=models, directory=directory, recorder=recorder)
    await gateway.start()
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
    if recorder is not None:
        recorder.close()
    return 0
