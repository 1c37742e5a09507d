"""Who the person is talking to (gateway/proxy/addressing.py): vocatives as speech-to-text writes
them, "everyone", the sticky addressee, the page's choice, the best-placed agent and the fallback."""

from __future__ import annotations

import pytest

from gateway.agents.builtin import builtin_agents
from gateway.agents.builtin.base import builtin_manifest
from gateway.floor.routing import Routing
from gateway.proxy.addressing import Addressing, Candidate, How, near_name, vocative


def _agents(*extra: Candidate) -> list[Candidate]:
    """The built-ins that answer without a language model, and ``extra``."""
    plain = builtin_agents(names=("parrot", "clock", "concierge"))
    return [Candidate.of(a.manifest) for a in plain.values()] + list(extra)


def _assistant(*, keyphrase: bool = True) -> Candidate:
    """An assistant's manifest: by the keyphrase 'anything', or as the built-in assistant words
    it (gateway/llm/persona.py's default persona)."""
    if keyphrase:
        manifest = builtin_manifest(
            "builtin:assistant", "Assistant", "An LLM.", ["assistant", "anything"], ["An LLM."]
        )
    else:
        manifest = builtin_manifest(
            "builtin:assistant",
            "Assistant",
            "Answers questions and talks about anything.",
            ["assistant", "ask a question", "explain", "advice"],
            ["A general assistant backed by a language model: questions, advice, explanations."],
        )
    return Candidate.of(manifest)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Clock, what time is it?", "Clock"),
        ("clock. What time is it?", "Clock"),
        ("Hey clock, what time is it?", "Clock"),
        ("Hey, Clock! What's the time?", "Clock"),
        ("Okay Parrot say hello", "Parrot"),
        ("Clock what time is it", "Clock"),
        ("What time is it, clock?", "Clock"),
        ("what time is it clock", "Clock"),
        ("Thanks, Concierge.", "Concierge"),
        ("Parrot?", "Parrot"),
        # What speech-to-text makes of a name it does not know: one letter off, long names only.
        ("Parot, say hello", "Parrot"),
        ("Conciege, which agents are there?", "Concierge"),
        ("Block, what time is it?", None),
        ("Everyone, good morning!", "everyone"),
        ("Hi everybody.", "everyone"),
        ("Good morning, all of you.", "everyone"),
        # Not vocatives: the name is part of what is said.
        ("Clock radios are cheap", None),
        ("Tell me about the clock", None),
        ("I broke my clock", None),
        ("", None),
    ],
)
def test_vocatives(text: str, name: str | None) -> None:
    found = vocative(text, _agents())
    assert (found if isinstance(found, str | None) else found.name) == name


def _named(name: str) -> Candidate:
    """An agent with only a name (no manifest)."""
    return Candidate(f"tag:{name.lower()}", f"https://{name.lower()}.example", name)


@pytest.mark.parametrize(
    ("heard", "name", "off"),
    [
        ("parent", "parrot", 2),  # Whisper's "parrot" in the dialogue benchmark
        ("parot", "parrot", 1),
        ("consierge", "concierge", 1),
        ("click", "clock", 1),
        ("clock", "clock", 0),
        ("clerk", "clock", None),  # two off a five-letter name
        ("block", "clock", None),  # another first sound
        ("pardon", "parrot", None),  # two off, but a word that means itself there
        ("sorry", "sorrel", None),  # the same
        ("sorrow", "sorrel", 2),
        ("parents", "parrot", None),  # three off
        ("bat", "bot", None),  # a name under four letters: only exactly
    ],
)
def test_a_name_heard_near(heard: str, name: str, off: int | None) -> None:
    assert near_name(heard, name) == off


#: Names heard near (docs/floor.md, rule 2): what the person said as speech-to-text wrote it,
#: and whom it names (the parrot, clock and concierge on the floor), or None.
NEAR = [
    # A name misheard where only a vocative stands.
    ("What time is it, parent?", "Parrot"),
    ("Parent, say hello", "Parrot"),
    ("Hey parent what time is it", "Parrot"),
    ("Parent?", "Parrot"),
    ("Okay, parent. Say hello.", "Parrot"),
    ("What time is it, click?", "Clock"),
    ("Consierge, which agents are there?", "Concierge"),
    # The word where it means itself: not a vocative, nobody named.
    ("My parent is sick", None),
    ("Parent teacher meetings are on Monday", None),
    ("Call my parent", None),
    ("What should I get my parent?", None),
    ("Pardon, what time is it?", None),
    ("Block, what time is it?", None),
    ("What time is it, clerk?", None),
    # No near name: as before.
    ("What time is it?", None),
    ("Why is the sky blue?", None),
    ("Tell me about parents.", None),
]


@pytest.mark.parametrize(("text", "name"), NEAR)
def test_a_name_heard_near_names_the_agent_only_as_a_vocative(text: str, name: str | None) -> None:
    found = vocative(text, _agents())
    assert (found if isinstance(found, str | None) else found.name) == name


def test_only_the_names_of_agents_on_the_floor_are_heard_near() -> None:
    without_parrot = [c for c in _agents() if c.name != "Parrot"]
    assert vocative("What time is it, parent?", without_parrot) is None
    choice = Addressing().choose("What time is it, parent?", without_parrot)
    assert (choice.to.name, choice.how) == ("Clock", How.BEST)


def test_a_name_said_exactly_wins_over_one_heard_near() -> None:
    parent = _named("Parent")
    agents = [*_agents(), parent]
    assert vocative("What time is it, parent?", agents) is parent
    # The exact name at the start, a near one at the end: the exact one.
    assert vocative("Clock, what time is it, parent?", _agents()).name == "Clock"
    # As near to two agents' names: neither is named.
    mira, mina = _named("Mira"), _named("Mina")
    assert vocative("Mila, hello.", [mira, mina]) is None
    assert vocative("Mila, hello.", [mira]) is mira


def test_a_name_heard_near_is_named_and_the_page_is_told_what_was_heard() -> None:
    a = Addressing()
    agents = _agents(_assistant(keyphrase=False))
    choice = a.choose("What time is it, parent?", agents)
    assert (choice.to.name, choice.how, choice.then) == ("Parrot", How.NAMED, ())
    assert choice.why == "you named Parrot (heard \u201cparent\u201d)"
    # Said exactly: no "heard".
    assert a.choose("What time is it, parrot?", agents).why == "you named Parrot"
    # Not a vocative: routed as before, by capability.
    sick = Addressing().choose("My parent is sick", agents)
    assert sick.how is not How.NAMED and sick.to.name != "Parrot"


def test_a_longer_name_wins_over_a_shorter_one() -> None:
    weather = Candidate("tag:w", "https://w.example", "Weather")
    bot = Candidate("tag:wb", "https://wb.example", "Weather Bot")
    assert vocative("Weather bot, will it rain?", [weather, bot]) is bot
    assert vocative("Weather, will it rain?", [weather, bot]) is weather


def test_named_then_sticky_until_someone_else_is_named() -> None:
    a = Addressing()
    agents = _agents()
    first = a.choose("Parrot, say hello", agents)
    assert (first.to.name, first.how) == ("Parrot", How.NAMED)
    # A follow-up that fits the parrot stays with it.
    second = a.choose("say it again please", agents)
    assert (second.to.name, second.how) == ("Parrot", How.STICKY)
    assert "talking with Parrot" in second.why
    # "what time is it" is clearly the clock's, even while talking with the parrot.
    assert a.choose("what time is it", agents).to.name == "Clock"
    third = a.choose("Parrot, and now?", agents)
    assert third.to.name == "Parrot"
    assert a.choose("Everyone, bye", agents).to is None
    # After "everyone" nobody is sticky: the best placed again.
    assert a.choose("what is the date", agents).how is How.BEST


#: Multi-turn cases with the four default agents (the assistant as the built-in words its
#: manifest): each conversation is a list of (what the person says, who gets it, how). Each case
#: is one of the rules of docs/floor.md.
CONVERSATIONS = {
    "capability outranks the conversation": [
        ("What is the capital of France?", "Assistant", How.FALLBACK),
        ("What time is it?", "Clock", How.BEST),
    ],
    "a request outside a specialist goes to the generalist": [
        ("Clock, what time is it?", "Clock", How.NAMED),
        ("What is the capital of France?", "Assistant", How.FALLBACK),
        ("And Germany?", "Assistant", How.STICKY),
    ],
    "remembered facts go to whoever the person told": [
        ("My name is Ada.", "Assistant", How.FALLBACK),
        ("What is my name?", "Assistant", How.STICKY),
    ],
    "elliptical follow-ups stay": [
        ("What is the capital of France?", "Assistant", How.FALLBACK),
        ("And what about Germany?", "Assistant", How.STICKY),
        ("Clock, what time is it?", "Clock", How.NAMED),
        ("What about tomorrow?", "Clock", How.STICKY),
        ("and the date?", "Clock", How.STICKY),
        ("Tell me a joke.", "Assistant", How.FALLBACK),
        ("and the date?", "Clock", How.BEST),
    ],
    "the parrot keeps only what is said to it": [
        ("Parrot, repeat after me: blue bananas.", "Parrot", How.NAMED),
        ("What is two plus two?", "Assistant", How.FALLBACK),
        ("Parrot, repeat after me: green apples.", "Parrot", How.NAMED),
        ("Say it back.", "Parrot", How.STICKY),
    ],
    "naming the partner keeps it, even for another's keyphrase": [
        ("Assistant, what time is it in Tokyo?", "Assistant", How.NAMED),
        ("What time is it, Assistant?", "Assistant", How.NAMED),
        ("What time is it?", "Clock", How.BEST),
    ],
    "the date after the clock, then a general question": [
        ("What's the date?", "Clock", How.BEST),
        ("Why is the sky blue?", "Assistant", How.FALLBACK),
        ("Why?", "Assistant", How.STICKY),
    ],
}


@pytest.mark.parametrize("name", list(CONVERSATIONS))
def test_multi_turn_routing(name: str) -> None:
    a = Addressing()
    agents = _agents(_assistant(keyphrase=False))
    for said, who, how in CONVERSATIONS[name]:
        choice = a.choose(said, agents)
        assert choice.to is not None, said
        assert (said, choice.to.name, choice.how) == (said, who, how)


def test_a_specialist_gets_a_hand_over_chain_and_a_named_agent_none() -> None:
    agents = _agents(_assistant(keyphrase=False))
    by_name = {c.name: c for c in agents}
    clock = Addressing().choose("What day is it today?", agents)
    assert clock.to.name == "Clock"
    # If the clock does not answer, the floor passes it to the generalist, and only then to the
    # concierge (a list of agents is a poorer answer than the assistant's).
    assert clock.then == (by_name["Assistant"].speaker_uri, by_name["Concierge"].speaker_uri)
    assert Addressing().choose("Clock, what day is it?", agents).then == ()
    assert Addressing().choose("Why is the sky blue?", agents).then == (
        by_name["Concierge"].speaker_uri,
    )


def test_an_agent_not_answering_is_routed_around_until_it_answers() -> None:
    agents = _agents(_assistant(keyphrase=False))
    routing = Routing()
    a = Addressing()
    clock = next(c for c in agents if c.name == "Clock")
    routing.missed(clock.speaker_uri, "it timed out")
    around = a.choose("What time is it?", agents, routing=routing)
    assert around.to.name == "Assistant"
    assert around.why == "Clock is not answering; Assistant took it"
    # Named, it still gets it, and the person is told it is not answering.
    named = a.choose("Clock, what time is it?", agents, routing=routing)
    assert named.to is clock and "not answering" in named.why
    # Sticky does not hold the person on a silent agent either.
    assert a.choose("and the date?", agents, routing=routing).to.name == "Assistant"
    routing.answered(clock.speaker_uri)
    assert a.choose("What time is it?", agents, routing=routing).to is clock


def test_the_agent_a_hand_over_went_to_is_the_partner() -> None:
    agents = _agents(_assistant(keyphrase=False))
    routing = Routing()
    a = Addressing()
    assert a.choose("How was your day?", agents, routing=routing).to.name == "Clock"
    assistant = next(c for c in agents if c.name == "Assistant")
    routing.handed_over(assistant.speaker_uri)  # the clock passed it on
    follow = a.choose("Really?", agents, routing=routing)
    assert (follow.to, follow.how) == (assistant, How.STICKY)


def test_sticky_can_be_switched_off() -> None:
    a = Addressing(sticky=False)
    agents = _agents()
    a.choose("Parrot, say hello", agents)
    after = a.choose("what time is it", agents)
    assert (after.to.name, after.how) == ("Clock", How.BEST)


def test_an_agent_that_left_is_not_sticky() -> None:
    a = Addressing()
    agents = _agents()
    a.choose("Parrot, hi", agents)
    without_parrot = [c for c in agents if c.name != "Parrot"]
    assert a.choose("what time is it", without_parrot).to.name == "Clock"


def test_best_placed_says_why() -> None:
    choice = Addressing().choose("What's the date today?", _agents())
    assert (choice.to.name, choice.how) == ("Clock", How.BEST)
    assert "keyphrase" in choice.why and "date" in choice.why
    assert choice.event_to().speaker_uri == choice.to.speaker_uri
    assert choice.event_to().private is None


def test_nothing_placed_goes_to_the_assistant_when_it_is_here() -> None:
    for assistant in (_assistant(), _assistant(keyphrase=False)):
        with_assistant = Addressing().choose("Why is the sky blue?", _agents(assistant))
        assert (with_assistant.to.name, with_assistant.how) == ("Assistant", How.FALLBACK)
    # The time is still the clock's.
    assert Addressing().choose("what time is it", _agents(_assistant())).to.name == "Clock"
    # Without an assistant: the discovery agent, who tells what agents there are.
    without = Addressing().choose("Why is the sky blue?", _agents())
    assert (without.to.name, without.how) == ("Concierge", How.FALLBACK)


def test_one_agent_gets_everything_and_none_gets_nothing() -> None:
    parrot = _agents()[0]
    assert Addressing().choose("what time is it", [parrot]).how is How.ONLY
    assert Addressing().choose("hello", []).to is None


def test_the_page_choice_and_explicit_to() -> None:
    a = Addressing()
    agents = _agents()
    clock = agents[1]
    a.set_page_choice(clock.speaker_uri, private=True)
    page = a.choose("say hello", agents)
    assert (page.to, page.how, page.private) == (clock, How.PAGE, True)
    assert page.event_to().private is True
    # A vocative still wins for that utterance.
    assert a.choose("Parrot, hello", agents).to.name == "Parrot"
    explicit = a.choose("hello", agents, to=agents[0].speaker_uri, private=False)
    assert explicit.how is How.EXPLICIT and explicit.to.name == "Parrot"
    with pytest.raises(LookupError, match="not an agent"):
        a.choose("hello", agents, to="tag:nobody")
    a.set_page_choice(None)
    assert a.choose("what time is it", agents).how is How.BEST


def test_only_a_remote_agent_that_is_slow_is_held_as_not_answering() -> None:
    routing = Routing()
    routing.slow("tag:in-process", remote=False)
    assert routing.not_answering == {}
    routing.slow("tag:remote", remote=True)
    assert routing.not_answering == {"tag:remote": "it is slow to answer"}


def test_with_no_agent_placed_the_words_are_passed_on_to_the_next_that_joined() -> None:
    """No agent placed, no generalist, no concierge (the faults benchmark's two parrots): the
    first that joined gets the words, and if it does not answer the floor passes them on to the
    next (whom the next words go to while it is not answering), not to no one."""
    parrot = _agents()[0]
    echo = Candidate.of(
        builtin_manifest("builtin:echo", "Echo", "Says it back.", ["echo it"], ["Echoes."])
    )
    choice = Addressing().choose("Open the garage door.", [parrot, echo])
    assert choice.to is parrot and choice.how is How.FALLBACK
    assert choice.then == (echo.speaker_uri,)
    routing = Routing()
    routing.missed(parrot.speaker_uri, "timed out")
    assert Addressing().choose("Open the garage door.", [parrot, echo], routing=routing).to is echo
