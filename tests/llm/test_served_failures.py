"""A served gateway whose assistant's model cannot be reached: the person gets a short apology,
the conversation goes on, the records keep it, and ``/metrics`` counts the failures."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gateway.agents.builtin.assistant import APOLOGY
from gateway.server.messages import SayText
from gateway.testing.page import Page
from gateway.testing.processes import Served, free_port

pytestmark = pytest.mark.slow

FAILURES = 'ofp_gateway_llm_failures{reason=unreachable}'


@pytest.fixture(scope="module")
def gateway(served_gateway) -> Served:
    dead = f"http://127.0.0.1:{free_port()}/v1"
    return served_gateway("llm-down", "--agent", "builtin:assistant", "--llm-url", dead)


async def test_the_person_hears_an_apology_and_metrics_count_it(gateway: Served) -> None:
    assert gateway.metrics()[FAILURES] == 0  # declared before any failure
    page = await Page.open(gateway.ws, transport="none")
    try:
        await page.wait_for(lambda e: e["type"] == "utterance" and "Hi, I'm" in e["text"])
        for n, question in enumerate(("Are you there?", "Still there?"), start=1):
            await page.send(SayText(question))
            await page.wait_for(
                lambda e, q=question: e["type"] == "transcript" and e["text"] == q
            )
            since = len(page.events) - 1
            await page.wait_for(
                lambda e: e["type"] == "utterance" and e["text"] == APOLOGY, since=since
            )
            assert gateway.metrics()[FAILURES] == n
    finally:
        await page.close()
    # The records keep the conversation, apologies included.
    shown = subprocess.run(
        [sys.executable, "-m", "gateway", "history", "show", page.welcome["conversationId"],
         "--data", str(gateway.data)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    # Each apology twice: as the assistant said it, and as the floor delivered it to the person.
    assert "Still there" in shown.stdout and shown.stdout.count(APOLOGY) == 4
