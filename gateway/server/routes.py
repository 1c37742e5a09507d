"""The HTTP side of ``serve``'s one port: screening every request, then the router.

Every request is screened first (ambiguous headers, odd paths, hosts the gateway does not answer
for: server/access.py), then routed: ``/ws`` (its Origin checked; websockets then takes it over),
``/healthz``, ``/readyz``, ``/metrics``, a voice clip (``/audio/``), a conversation's export
(``/export/``), else a file of the page. A bug costs one request (500), never the server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import threading
from http import HTTPStatus
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, unquote, urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from gateway.resources import web_root
from gateway.server import access, records_watch
from gateway.server.guard import clip_text
from gateway.server.readiness import readiness, speech_services

if TYPE_CHECKING:
    from gateway.server.node import Node

log = logging.getLogger(__name__)

#: The page: top-level web/ in a checkout, gateway/web in the wheel (gateway/resources.py).
WEB_ROOT = web_root()


class HttpRoutes:
    """The gateway's HTTP answers (websockets' ``process_request`` hook)."""

    def __init__(self, gateway: Node) -> None:
        self.gateway = gateway

    def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        """websockets' ``process_request``: a response, or None to go on with the WebSocket."""
        try:
            refusal = self._screen(request)
            return refusal if refusal is not None else self._route(request)
        except Exception as exc:  # a bug must cost one request, not print a page of traceback
            log.error(
                "HTTP %s failed: %s: %s", clip_text(request.path, 120), type(exc).__name__, exc
            )
            return _text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error\n")

    def _screen(self, request: Request) -> Response | None:
        """Refusals before routing: ambiguous headers, odd paths, hosts we do not answer for."""
        problem = None
        status = HTTPStatus.BAD_REQUEST
        twice = access.duplicate_header(request.headers)
        if twice is not None:
            problem = f"the {twice} header appears more than once"
        elif (why := access.path_problem(request.path)) is not None:
            problem = why
            if len(request.path) > access.MAX_PATH:
                status = HTTPStatus.REQUEST_URI_TOO_LONG
        elif not self.gateway.hosts.host_allowed(request.headers.get("Host")):
            host = clip_text(request.headers.get("Host") or "", 100)
            status = HTTPStatus.MISDIRECTED_REQUEST
            problem = (
                f"this gateway does not answer for the host {host!r}; "
                "start serve with --allow-host NAME to add it"
            )
        if problem is None:
            return None
        log.info("refused a request (%d): %s", status.value, problem)
        return _text(status, problem + "\n")

    def _route(self, request: Request) -> Response | None:
        path = urlsplit(request.path).path
        if path == "/ws":
            return self._check_origin(request)
        if path == "/healthz":
            ok = self.gateway.ready
            return _response(
                HTTPStatus.OK if ok else HTTPStatus.SERVICE_UNAVAILABLE,
                b"ok\n" if ok else b"loading models\n",
                "text/plain; charset=utf-8",
            )
        if path == "/readyz":
            status, body = readiness(self.gateway)
            return _response(status, body, "application/json")
        if path == "/metrics":
            self.gateway.metrics.sessions.set(len(self.gateway.clients))
            self.gateway.metrics.tasks.set(len(asyncio.all_tasks()))
            self.gateway.metrics.threads.set(threading.active_count())
            self.gateway.metrics.stt_wait.set(self.gateway.models.transcriber.queue_wait_s)
            self.gateway.metrics.stt_partials_skipped.set(self.gateway.models.transcriber.partials_skipped)
            self.gateway.metrics.stt_full_window.set(self.gateway.models.transcriber.full_window_retries)
            self.gateway.metrics.stt_abandoned.set(self.gateway.models.transcriber.abandoned)
            self.gateway.metrics.tts_pending.set(self.gateway.models.synthesizer.pending)
            self.gateway.metrics.tts_late.set(self.gateway.models.synthesizer.late_sentences)
            self.gateway.metrics.observe_llm(self.gateway.directory.assistant)
            self.gateway.metrics.tts_sentences.set(self.gateway.models.synthesizer.sentences)
            self.gateway.metrics.tts_cache_hits.set(self.gateway.models.synthesizer.cache_hits)
            if (health := records_watch.health(self.gateway)) is not None:
                records_watch.observe(self.gateway.metrics, health)
            m = self.gateway.metrics
            for link in speech_services(self.gateway):
                m.speech_up.labels(link.kind, link.address).set(0 if link.down else 1)
                m.speech_failures.labels(link.kind, link.address).set(link.failures)
                m.speech_refused.labels(link.kind, link.address).set(link.refused)
                m.speech_in_flight.labels(link.kind, link.address).set(link.in_flight)
            return _response(HTTPStatus.OK, self.gateway.metrics.render(), "text/plain; version=0.0.4")
        if path.startswith("/audio/"):
            return self._audio(request.path)
        if path.startswith("/export/"):
            return self._export(request.path)
        return self._static(path)

    def _check_origin(self, request: Request) -> Response | None:
        origin = request.headers.get("Origin")
        if origin is None:
            return None  # not a browser: no cross-site risk to guard against
        if self.gateway.hosts.origin_allowed(origin, request.headers.get("Host", "")):
            return None
        origin = clip_text(origin, 200)
        log.info("refused a WebSocket from the origin %s", origin)
        return _text(
            HTTPStatus.FORBIDDEN,
            f"origin {origin} is not allowed; start serve with --allow-origin {origin}\n",
        )

    def _static(self, path: str) -> Response:
        if path in ("", "/"):
            path = "/index.html"
        try:
            target = (WEB_ROOT / unquote(path).lstrip("/")).resolve()
            found = target.is_relative_to(WEB_ROOT) and target.is_file()
        except (OSError, ValueError):  # a name too long for the file system, and the like
            found = False
        if not found:
            return _text(HTTPStatus.NOT_FOUND, "not found\n")
        kind = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "text/javascript"):
            kind += "; charset=utf-8"
        return _response(HTTPStatus.OK, target.read_bytes(), kind, cache="no-cache")

    def _audio(self, raw_path: str) -> Response:
        """A voice clip, to the conversation's own page (``?token=``) or to an agent holding its
        capability URL (``?exp=&sig=``); with the audio feature off, to nobody."""
        split = urlsplit(raw_path)
        parts = split.path.split("/")
        records = self.gateway.voice_records
        if (
            len(parts) != 4
            or not parts[3].endswith(".wav")
            or records is None
            or self.gateway.settings.audio_feature == "off"
        ):
            return _text(HTTPStatus.NOT_FOUND, "not found\n")
        conv_id, event_id = unquote(parts[2]), unquote(parts[3][: -len(".wav")])
        query = _query(split.query)
        allowed = self.gateway.rooms.token_ok(conv_id, query.get("token")) or (
            self.gateway.settings.audio_feature == "url"
            and self.gateway.signer.valid(conv_id, event_id, query.get("exp", ""), query.get("sig", ""))
        )
        if not allowed:
            return _text(HTTPStatus.FORBIDDEN, "this clip needs its conversation's token\n")
        clip = records.clip(conv_id, event_id)
        if clip is None:
            return _text(HTTPStatus.NOT_FOUND, "no such clip\n")
        return _response(HTTPStatus.OK, clip, "audio/wav")

    def _export(self, raw_path: str) -> Response:
        from gateway.records.errors import RecordsError
        from gateway.records.export import ExportRefused, export_conversation

        split = urlsplit(raw_path)
        conv_id = unquote(split.path[len("/export/") :])
        query = _query(split.query)
        token_ok = self.gateway.rooms.token_ok(conv_id, query.get("token"))
        if not token_ok or self.gateway.recorder is None:
            return _response(
                HTTPStatus.FORBIDDEN,
                b"unknown conversation or wrong token\n",
                "text/plain; charset=utf-8",
            )
        fmt = query.get("format", "mplp-dialog")
        try:  # the same function, and so the same rules, as the `export` command
            stored = self.gateway.recorder.get_conversation(conv_id, with_audio=True)
            doc = export_conversation(stored, fmt, query.get("agent"))
        except ExportRefused as exc:
            return _response(exc.status, f"{exc}\n".encode(), "text/plain; charset=utf-8")
        except RecordsError as exc:  # nothing recorded of it (yet)
            return _response(HTTPStatus.NOT_FOUND, f"{exc}\n".encode(), "text/plain; charset=utf-8")
        name = f"{conv_id.replace(':', '-')}.{fmt}.json"
        return _response(
            HTTPStatus.OK,
            json.dumps(doc, indent=2, allow_nan=False).encode(),
            "application/json",
            extra={"Content-Disposition": f'attachment; filename="{name}"'},
        )


def _query(query: str) -> dict[str, str]:
    """The first value of each query parameter (bounded: a query is at most MAX_PATH long)."""
    return {k: v[0] for k, v in parse_qs(query, max_num_fields=32).items()}


def _text(status: HTTPStatus, text: str) -> Response:
    return _response(status, text.encode("utf-8", "replace"), "text/plain; charset=utf-8")


def _response(
    status: HTTPStatus,
    body: bytes,
    content_type: str,
    *,
    cache: str = "no-store",
    extra: dict[str, str] | None = None,
) -> Response:
    headers = Headers(
        {
            "Content-Type": content_type,
            "Content-Length": str(len(body)),
            "Cache-Control": cache,
            "X-Content-Type-Options": "nosniff",
        }
    )
    for k, v in (extra or {}).items():
        headers[k] = v
    return Response(status.value, status.phrase, headers, body)
