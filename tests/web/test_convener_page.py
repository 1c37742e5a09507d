"""A real convener in the page (Chromium): ``serve --convener builtin:convener`` chairs every
conversation — an addressed utterance is answered by its addressee only, an unaddressed one by
the agent best placed (the page says who and why), the convener keeps an agent that speaks out of
turn in order (shown on the page) — and ``serve --convener URL`` whose convener fails falls back to
the floor as the minimal convener, the page saying so."""

from __future__ import annotations

import http.server
import json
import re
from collections.abc import Callable, Iterator

import pytest

from gateway.testing.loopback import threaded_http
from gateway.testing.processes import PARROT_ON_LOOPBACK, Served

pytestmark = pytest.mark.slow

CHATTY = "tag:chatty.example,2025:1"
CHAIR = "tag:chair.example,2025:1"


def _say(page, text: str) -> None:
    page.get_by_label("Type a message").fill(text)
    page.get_by_label("Type a message").press("Enter")


def _answers(page) -> list[str]:
    return page.get_by_test_id("agent-utterance").all_inner_texts()


def _wait_answers(page, n: int) -> None:
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-testid=agent-utterance]').length >= {n}",
        timeout=15000,
    )


def _envelope(of: dict, me: str, url: str, events: list[dict]) -> bytes:
    return json.dumps(
        {
            "openFloor": {
                "schema": {"version": "1.1.0"},
                "conversation": {"id": of["conversation"]["id"]},
                "sender": {"speakerUri": me, "serviceUrl": url},
                "events": events,
            }
        }
    ).encode()


def _manifest(me: str, url: str, name: str, keyphrase: str, roles: dict | None = None) -> dict:
    ident = {
        "speakerUri": me,
        "serviceUrl": url,
        "organization": "example",
        "conversationalName": name,
        "synopsis": f"A test agent: {name}.",
    }
    manifest: dict = {"identification": ident, "capabilities": [{"keyphrases": [keyphrase]}]}
    if roles:
        manifest["openFloorRoles"] = roles
    return {"eventType": "publishManifests", "parameters": {"servicingManifests": [manifest]}}


def _handler(reply: Callable[[dict, str], list[dict]]) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            of = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["openFloor"]
            url = f"http://127.0.0.1:{self.server.server_address[1]}/agent"
            events = reply(of, url)
            if events is None:  # the agent is broken: an HTTP error
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            me = CHATTY if reply is _chatty else CHAIR
            data = _envelope(of, me, url, events)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def _chatty(of: dict, url: str) -> list[dict]:
    """Answers the person every time, whoever the person is talking to (out of turn)."""
    events: list[dict] = []
    for e in of["events"]:
        if e["eventType"] == "getManifests":
            events.append(_manifest(CHATTY, url, "Chatty", "chatter"))
    person = {
        c["identification"]["speakerUri"]
        for c in of["conversation"].get("conversants", [])
        if c["identification"].get("role") == "User"
    }
    if of["sender"]["speakerUri"] in person and any(
        e["eventType"] == "utterance" for e in of["events"]
    ):
        said = {"mimeType": "text/plain", "tokens": [{"value": "Me too, me too!"}]}
        de = {"speakerUri": CHATTY, "features": {"text": said}}
        events.append({"eventType": "utterance", "parameters": {"dialogEvent": de}})
    return events


def _failing_chair(of: dict, url: str) -> list[dict] | None:
    """A convener that joins, then errs (HTTP 500) on every event delegated to it."""
    events: list[dict] = []
    for e in of["events"]:
        kind = e["eventType"]
        to = e.get("to") or {}
        if kind == "getManifests":
            events.append(_manifest(CHAIR, url, "Chair", "chair", {"convener": True}))
        elif kind == "invite" and to.get("serviceUrl") not in (None, url):
            return None  # a delegated invitation: the convener fails
    return events


@pytest.fixture(scope="module")
def chatty_url() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(_chatty))
    with threaded_http(server) as base:
        yield f"{base}/agent"


@pytest.fixture(scope="module")
def chaired(served_gateway: Callable[..., Served]) -> Served:
    """``serve`` with the built-in convener, the parrot and the clock."""
    return served_gateway(
        "chaired",
        *PARROT_ON_LOOPBACK,
        "--agent",
        "builtin:clock",
        "--convener",
        "builtin:convener",
    )


@pytest.fixture(scope="module")
def badly_chaired(served_gateway: Callable[..., Served]) -> Iterator[Served]:
    """``serve --convener URL`` whose convener fails on the first event delegated to it."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(_failing_chair))
    with threaded_http(server) as base:
        yield served_gateway("badly-chaired", *PARROT_ON_LOOPBACK, "--convener", f"{base}/agent")


def test_the_built_in_convener_chairs_the_page(context, chaired, chatty_url) -> None:
    page = context.new_page()
    page.goto(f"{chaired.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    floor = page.get_by_test_id("floor")
    # The convener is on the floor with its role, and is not offered as an addressee.
    chair = floor.locator(".conversant").filter(has_text="Convener")
    chair.filter(has_text="convener").wait_for(timeout=15000)
    assert chair.get_by_role("button", name=re.compile("Talk to")).count() == 0
    floor.locator(".conversant").filter(has_text="Clock").wait_for(timeout=10000)
    floor.locator(".conversant").filter(has_text="Parrot").wait_for(timeout=10000)
    utterances = page.get_by_test_id("agent-utterance")
    for greeting in ("Say anything", "Ask me the time", "keep order"):  # the three greetings
        utterances.filter(has_text=greeting).first.wait_for(timeout=15000)
    greeted = len(_answers(page))

    # (b) Unaddressed: one answer, from the agent best placed; the page says who and why.
    _say(page, "What time is it?")
    _wait_answers(page, greeted + 1)
    asked = page.get_by_test_id("transcript").last
    asked.filter(has_text="to Clock").wait_for(timeout=5000)
    assert re.search(r"best placed to answer: its keyphrase .time.", asked.inner_text())
    page.wait_for_timeout(1500)  # room for a second answer, if there were one
    answers = _answers(page)
    assert len(answers) == greeted + 1, answers
    assert "Clock" in answers[-1] and "It's" in answers[-1]

    # (a) Addressed: the addressee answers, and only it.
    _say(page, "Parrot, good morning")
    page.get_by_test_id("agent-utterance").filter(
        has_text="You said: Parrot, good morning"
    ).wait_for(timeout=15000)
    page.get_by_test_id("transcript").last.filter(has_text="you named Parrot").wait_for()
    page.wait_for_timeout(1500)
    assert len(_answers(page)) == greeted + 2, _answers(page)

    # An agent invited from the page joins (the invitation is delegated to the convener, which
    # approves it), then speaks out of turn while the person talks with the clock: the convener
    # takes its floor, then removes it, and the page says so with the §1.13 reasons.
    floor.get_by_label("Invite an agent").fill(chatty_url)
    floor.get_by_role("button", name="Invite", exact=True).click()
    chatty = floor.locator(".conversant").filter(has_text="Chatty")
    chatty.wait_for(timeout=10000)
    conversation = page.locator("#conversation")
    for n in range(4):
        before = len(_answers(page))
        _say(page, f"Clock, what time is it ({n})?")
        _wait_answers(page, before + 1)
    conversation.get_by_text(
        "Convener took the floor from Chatty (a broken policy; spoke out of turn)."
    ).wait_for(timeout=10000)
    conversation.get_by_text(
        "Convener removed Chatty from the conversation (a broken policy; kept speaking out of turn)."
    ).wait_for(timeout=10000)
    chatty.wait_for(state="detached", timeout=10000)
    # The clock answered every time; only Chatty's first two answers were heard (it still had
    # the floor then).
    page.wait_for_function(
        "() => [...document.querySelectorAll('[data-testid=agent-utterance]')]"
        ".filter((e) => e.innerText.includes(\"It's\")).length >= 5",
        timeout=15000,
    )
    texts = _answers(page)
    assert sum("Me too, me too!" in t for t in texts) == 2, texts


def test_a_convener_that_fails_leaves_the_floor_as_the_convener(context, badly_chaired) -> None:
    page = context.new_page()
    page.goto(f"{badly_chaired.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    floor = page.get_by_test_id("floor")
    chair = floor.locator(".conversant").filter(has_text="Chair")
    chair.filter(has_text="convener").wait_for(timeout=15000)
    # The person invites the clock: the invitation is delegated to the convener, which fails;
    # the floor says so, decides as the minimal convener (the clock joins), and the role is empty.
    floor.get_by_label("Invite an agent").fill("builtin:clock")
    floor.get_by_role("button", name="Invite", exact=True).click()
    conversation = page.locator("#conversation")
    conversation.get_by_text(
        re.compile("The convener Chair did not answer; the floor carries on as the convener")
    ).wait_for(timeout=15000)
    floor.locator(".conversant").filter(has_text="Clock").wait_for(timeout=10000)
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=floor]').innerText.includes('convener')",
        timeout=10000,
    )
    # The conversation goes on.
    _say(page, "Clock, what time is it?")
    page.get_by_test_id("agent-utterance").filter(has_text="It's").last.wait_for(timeout=15000)
