"""A spoken conversation with the assistant in the page, on the gateway ``scripts/run`` serves
(the default agents): the fake microphone asks, the embedded model (SmolLM2 on xllamacpp)
answers, the answer is shown and heard. Its words vary: the test
asserts that an answer arrives, from the assistant, as speakable text, and that it is played."""

from __future__ import annotations

import re

import pytest

from gateway.testing.processes import Served
from tests.web.test_voice import HEARD, open_page, wait_for_energy

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def assistant_gateway(served_gateway) -> Served:
    return served_gateway("assistant")  # serve's defaults, as scripts/run starts it


def test_a_spoken_question_is_answered_by_the_assistant_aloud(context, assistant_gateway) -> None:
    page = open_page(context, assistant_gateway, "?transport=ws")
    greeting = page.get_by_test_id("agent-utterance").filter(has_text=re.compile("Hi, I'm Assi"))
    greeting.first.wait_for(timeout=30000)
    # Every text the assistant's reply is shown with, as the page draws it.
    page.evaluate(
        """() => {
          window.assistantTexts = [];
          const list = document.querySelector("[data-testid=agent-utterance]").parentElement;
          new MutationObserver(() => {
            for (const li of list.querySelectorAll("[data-testid=agent-utterance]")) {
              const text = li.querySelector(".text").textContent;
              const who = li.querySelector(".who").textContent;
              if (!who.startsWith("Assistant") || text.startsWith("Hi, I'm")) continue;
              if (!window.assistantTexts.includes(text)) {
                window.assistantTexts.push(text);
              }
            }
          }).observe(list, { childList: true, subtree: true, characterData: true });
        }"""
    )
    page.get_by_test_id("start").click()
    page.get_by_test_id("transcript").filter(has_text=HEARD).first.wait_for(timeout=30000)
    answers = (
        page.get_by_test_id("agent-utterance")
        .filter(has_text=re.compile("^Assistant"))
        .filter(has_not_text=re.compile("Hi, I'm"))
    )
    answers.first.wait_for(timeout=60000)
    answer = answers.first.inner_text()
    assert "Assistant" in answer  # who said it
    said = answer.split("\n", 1)[-1].strip()
    assert said and any(c.isalpha() for c in said) and not set("*#`<>") & set(said)
    assert "Sorry, I can't answer" not in said
    # The answer was played: PCM reached the page's playback worklet with energy.
    assert wait_for_energy(page, "ofpDebug.playedEnergy()", timeout_s=30) > 0
    # It grew in place: the first text shown (its first sentence) begins the answer's turn as
    # it ends — one turn updated, not a turn per sentence.
    # Both read in one evaluation: read one after the other, the answer could grow in between
    # (a CI run read the first sentence as "seen", then the whole answer as "final").
    seen, final = page.evaluate(
        """() => {
          const mine = [...document.querySelectorAll("[data-testid=agent-utterance]")].filter(
            (li) => li.querySelector(".who").textContent.startsWith("Assistant")
              && !li.querySelector(".text").textContent.startsWith("Hi, I'm"));
          return [window.assistantTexts.slice(), mine[0].querySelector(".text").textContent];
        }"""
    )
    assert seen and final.startswith(seen[0]) and final in seen, (seen, final)
