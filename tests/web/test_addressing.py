"""Many agents in the page (Chromium): three agents, one answer per utterance, the page showing
whom each utterance went to and why; clicking an agent in the floor panel addresses it, with a
private toggle; an agent that yields is shown doing so, with its reason."""

from __future__ import annotations

import http.server
import json
import re

import pytest

from gateway.testing.loopback import threaded_http

pytestmark = pytest.mark.slow


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


def test_three_agents_one_answer_each_and_addressing_from_the_floor_panel(context, gateway):
    page = context.new_page()
    page.goto(f"{gateway.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    floor = page.get_by_test_id("floor")
    floor.locator(".conversant").filter(has_text="Parrot").wait_for(timeout=10000)
    for name in ("clock", "concierge"):
        floor.get_by_label("Invite an agent").fill(f"builtin:{name}")
        floor.get_by_role("button", name="Invite", exact=True).click()
        floor.locator(".conversant").filter(has_text=name.title()).wait_for(timeout=10000)
    _wait_answers(page, 3)  # the three greetings
    greeted = len(_answers(page))

    # A question nobody was named for: the best placed agent answers, and only it.
    _say(page, "What time is it?")
    _wait_answers(page, greeted + 1)
    asked = page.get_by_test_id("transcript").last
    asked.filter(has_text="to Clock").wait_for(timeout=5000)
    assert re.search(r"best placed to answer: its keyphrase .time.", asked.inner_text())
    page.wait_for_timeout(1500)  # room for a second answer, if there were one
    answers = _answers(page)
    assert len(answers) == greeted + 1 and "Clock" in answers[-1] and "It's" in answers[-1]

    # Named by voice or text: that agent answers.
    _say(page, "Parrot, good morning")
    page.get_by_test_id("agent-utterance").filter(
        has_text="You said: Parrot, good morning"
    ).wait_for(timeout=15000)
    page.get_by_test_id("transcript").last.filter(has_text="you named Parrot").wait_for()

    # Clicking the clock in the floor panel addresses it; the composer says so.
    clock = floor.locator(".conversant").filter(has_text="Clock")
    clock.get_by_role("button", name="Talk to Clock").click()
    addressee = page.get_by_test_id("addressee")
    addressee.filter(has_text="to Clock").wait_for(timeout=5000)
    assert clock.get_by_role("button", name="Talk to Clock").get_attribute("aria-pressed") == "true"
    before = len(_answers(page))
    _say(page, "and the date?")
    _wait_answers(page, before + 1)
    assert "Today is" in _answers(page)[-1]
    page.get_by_test_id("transcript").last.filter(has_text="you chose Clock").wait_for()

    # Private: only the clock receives it, and it answers privately.
    addressee.get_by_label("private").check()
    before = len(_answers(page))
    _say(page, "what time is it now")
    _wait_answers(page, before + 1)
    last = page.get_by_test_id("agent-utterance").last
    assert "private" in (last.get_attribute("class") or "")
    assert "private" in page.get_by_test_id("transcript").last.inner_text()

    # Back to the gateway's choice; "Everyone" addresses the room.
    addressee.get_by_role("button", name="Stop addressing this agent").click()
    addressee.wait_for(state="hidden", timeout=5000)
    _say(page, "Everyone, thank you")
    page.get_by_test_id("transcript").last.filter(has_text="to everyone").wait_for()
    page.get_by_test_id("agent-utterance").filter(
        has_text="You said: Everyone, thank you"
    ).wait_for(timeout=15000)


YIELDER = "tag:yielder.example,2025:1"


def _yielder_reply(body: dict, url: str) -> dict:
    """A third-party agent: answers what is addressed to it, yields the floor after each answer,
    and at its second answer also tries to remove the person."""
    of = body["openFloor"]
    events: list[dict] = []
    person = next(
        (
            c["identification"]["speakerUri"]
            for c in of["conversation"].get("conversants", [])
            if c["identification"].get("role") == "User"
        ),
        None,
    )
    for e in of["events"]:
        to = e.get("to") or {}
        mine = not to or to.get("speakerUri") == YIELDER or to.get("serviceUrl") == url
        if e["eventType"] == "getManifests":
            ident = {
                "speakerUri": YIELDER,
                "serviceUrl": url,
                "organization": "yielder.example",
                "conversationalName": "Yielder",
                "synopsis": "Answers, then yields.",
            }
            manifest = {"identification": ident, "capabilities": [{"keyphrases": ["yield"]}]}
            events.append(
                {"eventType": "publishManifests", "parameters": {"servicingManifests": [manifest]}}
            )
        elif e["eventType"] == "utterance" and mine and of["sender"]["speakerUri"] == person:
            _yielder_reply.answered += 1  # type: ignore[attr-defined]
            n = _yielder_reply.answered  # type: ignore[attr-defined]
            text = {
                "speakerUri": YIELDER,
                "features": {
                    "text": {"mimeType": "text/plain", "tokens": [{"value": f"Answer {n}."}]}
                },
            }
            events.append({"eventType": "utterance", "parameters": {"dialogEvent": text}})
            events.append({"eventType": "yieldFloor", "reason": "@brb back soon"})
            if n == 2:
                events.append(
                    {
                        "eventType": "uninvite",
                        "to": {"speakerUri": person},
                        "reason": "@brokenPolicy",
                    }
                )
    return {
        "openFloor": {
            "schema": {"version": "1.1.0"},
            "conversation": {"id": of["conversation"]["id"]},
            "sender": {"speakerUri": YIELDER, "serviceUrl": url},
            "events": events,
        }
    }


_yielder_reply.answered = 0  # type: ignore[attr-defined]


class _Yielder(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        url = f"http://127.0.0.1:{self.server.server_address[1]}/agent"
        data = json.dumps(_yielder_reply(body, url)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_an_agent_that_yields_is_shown_and_heard_again_and_cannot_remove_the_person(
    context, gateway
):
    with threaded_http(http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Yielder)) as base:
        page = context.new_page()
        page.goto(f"{gateway.url}/")
        page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
        floor = page.get_by_test_id("floor")
        floor.get_by_label("Invite an agent").fill(f"{base}/agent")
        floor.get_by_role("button", name="Invite", exact=True).click()
        floor.locator(".conversant").filter(has_text="Yielder").wait_for(timeout=10000)
        conversation = page.locator("#conversation")

        _say(page, "Yielder, first question")
        conversation.get_by_text("Answer 1.").wait_for(timeout=15000)
        notice = "Yielder yielded the floor (it will be right back; back soon)."
        conversation.get_by_text(notice).wait_for(timeout=5000)
        # Without the floor now; addressed again, it is given the floor back and heard.
        _say(page, "Yielder, second question")
        conversation.get_by_text("Answer 2.").wait_for(timeout=15000)
        # Its attempt to remove the person is refused and shown.
        conversation.get_by_text(re.compile("Yielder tried to remove you")).wait_for(timeout=5000)
        assert floor.locator(".conversant").filter(has_text="You").count() == 1
        _say(page, "Parrot, still here?")
        conversation.get_by_text("You said: Parrot, still here?").wait_for(timeout=15000)


def test_an_agent_is_looked_up_before_it_is_invited_and_recommendations_invite(context, gateway):
    page = context.new_page()
    page.goto(f"{gateway.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    floor = page.get_by_test_id("floor")
    floor.locator(".conversant").filter(has_text="Parrot").wait_for(timeout=10000)
    floor.get_by_label("Invite an agent").fill("builtin:concierge")
    floor.get_by_role("button", name="Look it up first").click()
    found = page.get_by_test_id("discovered")
    # The concierge's own manifest, and the agents it recommends, each with an Invite button.
    found.locator(".found").filter(has_text="Concierge").wait_for(timeout=10000)
    clock = found.locator(".found").filter(has_text="Clock")
    assert "Tells you the time and the date." in clock.inner_text()
    assert "recommended" in clock.inner_text()
    assert floor.locator(".conversant").filter(has_text="Clock").count() == 0  # not yet
    clock.get_by_role("button", name="Invite Clock").click()
    floor.locator(".conversant").filter(has_text="Clock").wait_for(timeout=10000)
    # An address that cannot be invited is refused the same way for a look-up.
    floor.get_by_label("Invite an agent").fill("file:///etc/passwd")
    floor.get_by_role("button", name="Look it up first").click()
    page.locator("#errors").filter(has_text="https").wait_for(timeout=5000)


def test_a_hand_over_shows_on_the_persons_utterance(context, gateway):
    """The clock, asked what it cannot answer, passes it on; the person's utterance then shows
    who answers it, and why."""
    page = context.new_page()
    page.goto(f"{gateway.url}/")
    page.wait_for_function("() => ofpDebug.conversationId !== null", timeout=10000)
    floor = page.get_by_test_id("floor")
    floor.locator(".conversant").filter(has_text="Parrot").wait_for(timeout=10000)
    for name in ("clock", "concierge"):
        floor.get_by_label("Invite an agent").fill(f"builtin:{name}")
        floor.get_by_role("button", name="Invite", exact=True).click()
        floor.locator(".conversant").filter(has_text=name.title()).wait_for(timeout=10000)
    _wait_answers(page, 3)
    _say(page, "What time is it?")
    _wait_answers(page, 4)
    _say(page, "How was your day?")  # talking with the clock, but not the clock's to answer
    asked = page.get_by_test_id("transcript").last
    asked.filter(has_text="Clock passed this to Concierge.").wait_for(timeout=10000)
    assert "to Concierge" in asked.inner_text() and "to Clock" not in asked.inner_text()
    _wait_answers(page, 5)
    assert "Concierge" in _answers(page)[-1]
