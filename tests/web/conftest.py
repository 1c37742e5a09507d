"""Headless Chromium (Debian's) against the page, with a fake microphone playing generated speech.

One browser per module; a fresh context (so fresh sessionStorage and permissions) per test.
"""

from __future__ import annotations

import functools
import http.server
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from gateway.audio import resample, write_wav
from gateway.testing.browser import CHROMIUM, launch
from gateway.testing.loopback import threaded_http
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served, start_agents
from gateway.testing.speech import piper_wav

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "web"
#: What the fake microphone says, once per loop.
SPOKEN = "Please turn off the kitchen lights."
MIC_RATE = 48_000
#: Speech-free lead before the sentence, and the silence after it before the file loops.
LEAD_S, TAIL_S = 1.0, 7.0

if not Path(CHROMIUM).exists():  # pragma: no cover - depends on the machine
    pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)", allow_module_level=True)


@pytest.fixture(scope="session")
def mic_wav(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """48 kHz mono 16-bit: 1 s of silence, the sentence (piper), 7 s of silence; Chromium loops it."""
    pcm, rate = piper_wav(SPOKEN)
    speech = resample(pcm, rate, MIC_RATE)
    lead = np.zeros(int(LEAD_S * MIC_RATE), np.int16)
    tail = np.zeros(int(TAIL_S * MIC_RATE), np.int16)
    path = tmp_path_factory.mktemp("mic") / "mic.wav"
    write_wav(path, np.concatenate([lead, speech, tail]), MIC_RATE)
    return path


@pytest.fixture(scope="module")
def playwright_instance() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="module")
def browser(playwright_instance: object, mic_wav: Path) -> Iterator[object]:
    """Chromium whose microphone plays ``mic_wav`` and whose permission prompts say yes.

    No ``--disable-features=WebRtcHideLocalIpsWithMdns`` is needed: once the page holds the
    microphone, Chromium offers real host addresses instead of ``*.local`` names.
    """
    b = launch(
        playwright_instance,
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        f"--use-file-for-fake-audio-capture={mic_wav}",
    )
    yield b
    b.close()


@pytest.fixture
def context(browser: object) -> Iterator[object]:
    """A fresh browser context (sessionStorage, permissions); fails the test on an uncaught
    error in the page."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    errors: list[str] = []
    context.on("weberror", lambda e: errors.append(str(e.error)))
    yield context
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def static_site() -> Iterator[str]:
    """The page from a plain static server (no gateway): for tests of the page on its own."""
    handler = functools.partial(_QuietHandler, directory=str(WEB))
    with threaded_http(http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)) as base:
        yield base


@pytest.fixture(scope="module")
def agents_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The built-in agents over HTTP on loopback (``agents serve``)."""
    served = start_agents(tmp_path_factory.mktemp("agents") / "agents.log")
    yield served
    served.stop()


@pytest.fixture(scope="module")
def gateway(served_gateway: Callable[..., Served]) -> Served:
    """``serve`` with real models, records in a temp folder, loopback agents allowed."""
    return served_gateway("gateway", *PARROT_ON_LOOPBACK)
