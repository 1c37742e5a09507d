"""The HTTP router (gateway/server/routes.py) on a real, unstarted gateway: each request screened,
then answered by path. (The same requests over a real socket: test_hostile_input.py.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from gateway.agents.directory import AgentDirectory
from gateway.agents.policy import AddressPolicy
from gateway.proxy.settings import SessionSettings
from gateway.proxy.utterance import UtteranceParts
from gateway.records import SQLiteRecorder
from gateway.server.app import Gateway, GatewaySettings
from gateway.server.routes import WEB_ROOT, HttpRoutes

HOST = "127.0.0.1:8080"


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[Gateway]:
    recorder = SQLiteRecorder(tmp_path)
    # No request here reaches the models (/metrics would); /readyz asks only which speech
    # services they use (none: in process).
    models: Any = SimpleNamespace(services=[])
    gw = Gateway(
        GatewaySettings(agents=(), session=SessionSettings(parts=UtteranceParts(audio="url"))),
        models=models,
        directory=AgentDirectory(AddressPolicy()),
        recorder=recorder,
    )
    yield gw
    recorder.close()


def get(gateway: Gateway, path: str, *headers: tuple[str, str]) -> Response | None:
    h = Headers([("Host", HOST), *headers])
    return HttpRoutes(gateway)(None, Request(path, h))  # type: ignore[arg-type]


def status(response: Response | None) -> int:
    assert response is not None
    return response.status_code


def test_requests_are_screened_before_they_are_routed(gateway: Gateway) -> None:
    assert status(get(gateway, "/", ("Host", HOST))) == 400  # two Host headers
    assert status(get(gateway, "/index.html%00.js")) == 400
    assert status(get(gateway, "/" + "a" * 5000)) == 414
    refused = HttpRoutes(gateway)(None, Request("/", Headers([("Host", "evil.example")])))  # type: ignore[arg-type]
    assert status(refused) == 421 and b"--allow-host" in refused.body


def test_the_page_and_nothing_beside_it(gateway: Gateway) -> None:
    page = get(gateway, "/")
    assert status(page) == 200 and page.body == (WEB_ROOT / "index.html").read_bytes()
    assert page.headers["Content-Type"] == "text/html; charset=utf-8"
    assert page.headers["X-Content-Type-Options"] == "nosniff"
    script = get(gateway, "/protocol.js")
    assert status(script) == 200 and b"export const TO_GATEWAY" in script.body
    assert "charset=utf-8" in script.headers["Content-Type"]
    assert status(get(gateway, "/../../etc/passwd")) == 404
    assert status(get(gateway, "/%2e%2e/pyproject.toml")) == 404
    assert status(get(gateway, "/nope.js")) == 404


def test_health_and_readiness_follow_the_gateway(gateway: Gateway) -> None:
    assert status(get(gateway, "/healthz")) == 503
    ready = get(gateway, "/readyz")
    assert status(ready) == 503 and json.loads(ready.body)["state"] == "loading models"
    gateway.draining = True
    gateway.ready = True
    assert status(get(gateway, "/healthz")) == 200
    assert json.loads(get(gateway, "/readyz").body)["state"] == "draining"


def test_the_websocket_path_checks_the_origin(gateway: Gateway) -> None:
    assert get(gateway, "/ws") is None  # not a browser: the WebSocket goes on
    assert get(gateway, "/ws", ("Origin", f"http://{HOST}")) is None
    refused = get(gateway, "/ws", ("Origin", "https://evil.example"))
    assert status(refused) == 403 and b"--allow-origin https://evil.example" in refused.body


async def test_exports_and_clips_need_the_conversations_token(gateway: Gateway) -> None:
    conv_id, room = await gateway.rooms.open()
    try:
        assert status(get(gateway, f"/export/{conv_id}?token=wrong")) == 403
        export = get(gateway, f"/export/{conv_id}?format=mplp-dialog&token={room.token}")
        assert status(export) == 200 and "attachment" in export.headers["Content-Disposition"]
        assert json.loads(export.body)
        bad_format = get(gateway, f"/export/{conv_id}?format=nope&token={room.token}")
        assert 400 <= status(bad_format) < 500
        # A clip: the token opens it (none recorded: 404), a wrong one does not (403).
        assert status(get(gateway, f"/audio/{conv_id}/de:1.wav?token={room.token}")) == 404
        assert status(get(gateway, f"/audio/{conv_id}/de:1.wav?token=wrong")) == 403
        signed = gateway.signer.url(gateway.settings.base_url, conv_id, "de:1")
        path = signed[len(gateway.settings.base_url) :]
        assert status(get(gateway, path)) == 404  # signed: allowed, and there is no such clip
        assert status(get(gateway, path.replace("sig=", "sig=0"))) == 403
    finally:
        await gateway.close()


def test_a_bug_costs_one_request(gateway: Gateway, caplog: pytest.LogCaptureFixture) -> None:
    gateway.hosts = None  # type: ignore[assignment]  (any request now fails inside the router)
    broken = get(gateway, "/")
    assert status(broken) == 500 and broken.body == b"internal error\n"
    assert "HTTP / failed: AttributeError" in caplog.text and "Traceback" not in caplog.text
