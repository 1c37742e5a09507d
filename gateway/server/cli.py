"""The ``serve`` command."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import Any

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
        "--data", metavar="DIR", help="records folder (default: $OFP_GATEWAY_DATA or per-user)"
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
        "--max-frame-bytes",
        type=int,
        default=256 * 1024,
        help="largest WebSocket message accepted (256 KiB)",
    )
    p.add_argument(
        "--audio-feature",
        choices=["inline", "url", "off"],
        default="inline",
        help="how utterances carry the person's audio (inline base64, a URL, or not)",
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
        "--wake",
        default="off",
        help="wake word: hey_jarvis, okay_nabu, alexa, hey_mycroft, phrase:TEXT, or off (default)",
    )
    p.set_defaults(func=cmd_serve)


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
    from gateway.agents.policy import AddressPolicy
    from gateway.directory import AgentDirectory
    from gateway.proxy.session import SessionSettings, VoiceModels
    from gateway.render.voices import VoiceBook
    from gateway.server.app import Gateway, GatewaySettings
    from gateway.voice.stt import SttSettings

    recorder: Any = None
    if not args.no_record:
        from gateway.records.paths import resolve_data_dir
        from gateway.records.store import Recorder

        recorder = Recorder(resolve_data_dir(args.data), retention_days=args.retention_days)
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
        max_sessions=args.max_sessions,
        max_frame_bytes=args.max_frame_bytes,
        audio_feature=args.audio_feature,
        wake=args.wake,
        trim_memory_s=args.trim_memory,
        rejoin_s=GatewaySettings.rejoin_s if args.rejoin is None else args.rejoin,
        session=session,
    )
    directory = AgentDirectory(AddressPolicy.from_env_and_args(args.allow_address))
    gateway = Gateway(settings, models=models, directory=directory, recorder=recorder)
    await gateway.start()
    print(f"ofp-gateway is ready: open {settings.base_url}/ in a browser", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    print("shutting down…", file=sys.stderr, flush=True)
    await gateway.close()
    if recorder is not None:
        recorder.close()
    return 0
