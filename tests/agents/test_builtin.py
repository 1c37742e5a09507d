"""The built-in agents: §2.1 behaviours, loop safety, and what each one says."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone

import pytest

from gateway.agents.builtin import Clock, Concierge, Parrot, builtin_agents, match_score
from gateway.agents.builtin.base import HISTORY_LENGTH, MAX_AGENT_TURNS, MAX_CONVERSATIONS
from gateway.ofp import (
    Conversation,
    Envelope,
    Event,
    EventType,
    Parameters,
    Sender,
    To,
    text_event,
)
from tests.agents.helpers import USER, conversant, events_of, texts, utterance
from tests.ofp_schemas import assert_valid_envelope, assert_valid_manifest

AFTERNOON = datetime(2026, 3, 14, 15, 5, tzinfo=timezone(timedelta(hours=1)))


def _fixed() -> datetime:
    return AFTERNOON


async def ask(agent, envelope: Envelope) -> Envelope:
    """Deliver ``envelope``; the reply must be a valid 1.1.0 envelope from the agent."""
    reply = await agent.handle(envelope)
    assert reply is not None
    assert_valid_envelope(reply.to_wire())
    assert reply.sender.speaker_uri == agent.manifest.identification.speaker_uri
    assert reply.conversation.id == envelope.conversation.id
    return reply


def _event(kind: EventType, to: To | None = None, **params) -> Envelope:
    return Envelope(
        conversation=Conversation(id="conv-1"),
        sender=Sender(speaker_uri=USER, service_url="https://host.example/of"),
        events=[Event(event_type=kind, to=to, parameters=Parameters(**params))],
    )


def _ssml(reply: Envelope) -> ET.Element:
    de = events_of(reply, EventType.UTTERANCE)[0].dialog_event
    feature = de.features["ssml"]
    assert feature.mime_type == "application/ssml+xml"
    return ET.fromstring(feature.tokens[0].value)


# -- manifests and registry --------------------------------------------------------------


def test_registry_wires_the_concierge_to_the_others() -> None:
    agents = builtin_agents()
    assert list(agents) == ["parrot", "clock", "concierge", "assistant", "convener"]
    for name, agent in agents.items():
        assert agent.manifest.identification.service_url == f"builtin:{name}"
        assert_valid_manifest(agent.manifest.to_wire())
        cap = agent.manifest.capabilities[0]
        assert cap.keyphrases and cap.descriptions and cap.supported_layers is not None
    directory = agents["concierge"].directory
    assert [m.identification.service_url for m in directory] == [
        "builtin:parrot",
        "builtin:clock",
        "builtin:assistant",
    ]
    served = builtin_agents("http://127.0.0.1:9/", ["clock", "concierge"])
    assert [m.identification.service_url for m in served["concierge"].directory] == [
        "http://127.0.0.1:9/clock"
    ]
    with pytest.raises(ValueError, match="choose from parrot, clock, concierge"):
        builtin_agents(names=["weather"])


# -- parrot -------------------------------------------------------------------------------


async def test_parrot_says_back_in_text_and_ssml() -> None:
    reply = await ask(Parrot(), utterance("Fish & chips <please>"))
    assert texts(reply) == ["You said: Fish & chips <please>"]
    speak = _ssml(reply)
    assert speak.tag == "speak"
    assert speak.find("break") is not None
    assert speak.find("emphasis").text == "Fish & chips <please>"  # escaped, then parsed back


async def test_events_for_someone_else_are_ignored() -> None:
    parrot = Parrot()
    reply = await ask(parrot, utterance("hi clock", to=To(service_url="builtin:clock")))
    assert reply.events == []  # §2.3: an empty events array acknowledges


async def test_public_talk_of_agents_is_not_answered_but_people_are() -> None:
    people = [conversant(USER, "User"), conversant("tag:x,2025:bot", "Weather bot")]
    parrot = Parrot()
    from_bot = utterance("rain today", speaker="tag:x,2025:bot", conversants=people)
    assert (await ask(parrot, from_bot)).events == []
    from_person = utterance("hello", conversants=people)
    assert texts(await ask(parrot, from_person)) == ["You said: hello"]
    unknown = utterance("who am I", speaker="tag:stranger,2025:1", conversants=people)
    assert (await ask(parrot, unknown)).events == []


async def test_an_agent_never_answers_itself() -> None:
    parrot = Parrot()
    mine = utterance(
        "You said: hi", speaker=parrot.speaker_uri, to=To(service_url="builtin:parrot")
    )
    assert (await ask(parrot, mine)).events == []


async def test_private_utterances_get_private_answers() -> None:
    whisper = utterance("psst", to=To(speaker_uri=Parrot().speaker_uri, private=True))
    reply = await ask(Parrot(), whisper)
    (event,) = reply.events
    assert event.is_private and event.to.speaker_uri == USER
    public = await ask(Parrot(), utterance("hey"))
    # A public answer is public, and addressed to whoever it answers (not the room).
    assert public.events[0].to.speaker_uri == USER and not public.events[0].is_private


async def test_two_agents_whispering_to_each_other_stop() -> None:
    a, b = Parrot("builtin:parrot-a"), Parrot("builtin:parrot-b")
    people = [
        conversant(USER, "User"),
        conversant(a.speaker_uri, None, "builtin:parrot-a"),
        conversant(b.speaker_uri, None, "builtin:parrot-b"),
    ]
    envelope = utterance(
        "start",
        speaker=a.speaker_uri,
        to=To(speaker_uri=b.speaker_uri, private=True),
        conversants=people,
    )
    exchanges = 0
    agents = {a.speaker_uri: a, b.speaker_uri: b}
    while envelope.events and exchanges < 50:
        target = agents[envelope.events[0].to.speaker_uri]
        reply = await ask(target, envelope)
        envelope = reply.model_copy(
            update={"conversation": Conversation(id="conv-1", conversants=people)}
        )
        exchanges += 1
    assert exchanges <= 2 * MAX_AGENT_TURNS + 1
    # A person speaking again lets them answer again.
    fresh = utterance("go on", to=To(speaker_uri=a.speaker_uri), conversants=people)
    assert texts(await ask(a, fresh)) == ["You said: go on"]


async def test_invite_is_accepted_with_a_hello_and_the_history_answered() -> None:
    parrot = Parrot()
    history = [text_event(USER, "first"), text_event(USER, "repeat this")]
    reply = await ask(
        parrot,
        _event(EventType.INVITE, To(service_url="builtin:parrot"), dialog_history=history),
    )
    kinds = [e.event_type for e in reply.events]
    assert kinds == [EventType.ACCEPT_INVITE, EventType.UTTERANCE, EventType.UTTERANCE]
    assert reply.events[0].to.speaker_uri == USER
    assert texts(reply) == [Parrot.greeting, "You said: repeat this"]
    bare = await ask(Parrot(), _event(EventType.INVITE))  # no "to": everyone is invited
    assert texts(bare) == [Parrot.greeting]
    elsewhere = await ask(Parrot(), _event(EventType.INVITE, To(service_url="builtin:clock")))
    assert elsewhere.events == []


@pytest.mark.parametrize(
    ("to", "scope", "answered"),
    [
        (To(service_url="builtin:parrot"), None, True),
        (To(service_url="builtin:parrot"), "all", True),
        (None, "internal", True),
        (To(service_url="builtin:parrot"), "external", False),
        (To(service_url="builtin:clock"), "internal", False),
    ],
)
async def test_get_manifests(to: To | None, scope: str | None, answered: bool) -> None:
    parrot = Parrot()
    reply = await ask(parrot, _event(EventType.GET_MANIFESTS, to, recommend_scope=scope))
    if not answered:
        assert reply.events == []
        return
    (event,) = reply.events
    assert event.event_type is EventType.PUBLISH_MANIFESTS
    assert event.to.speaker_uri == USER
    assert event.parameters.servicing_manifests == [parrot.manifest]


async def test_uninvite_leaves_until_invited_again() -> None:
    parrot = Parrot()
    await ask(parrot, _event(EventType.UNINVITE, To(speaker_uri=parrot.speaker_uri)))
    assert (await ask(parrot, utterance("anyone?"))).events == []
    other = utterance("other conversation", conversation="conv-2")
    assert texts(await ask(parrot, other)) == ["You said: other conversation"]
    await ask(parrot, _event(EventType.INVITE, To(service_url="builtin:parrot")))
    assert texts(await ask(parrot, utterance("back?"))) == ["You said: back?"]


@pytest.mark.parametrize(
    "kind",
    [EventType.BYE, EventType.ACCEPT_INVITE, EventType.DECLINE_INVITE, EventType.YIELD_FLOOR],
)
async def test_other_events_are_acknowledged_and_ignored(kind: EventType) -> None:
    assert (await ask(Parrot(), _event(kind))).events == []


# -- clock --------------------------------------------------------------------------------


async def test_clock_tells_the_time_from_its_clock() -> None:
    reply = await ask(Clock(now=_fixed), utterance("What time is it?"))
    assert texts(reply) == ["It's 3:05 PM."]
    say_as = _ssml(reply).find("say-as")
    assert say_as.get("interpret-as") == "time" and say_as.text == "3:05pm"
    morning = AFTERNOON.replace(hour=0, minute=7)
    assert texts(await ask(Clock(now=lambda: morning), utterance("the time?"))) == [
        "It's 12:07 AM."
    ]


async def test_clock_tells_the_date_and_both() -> None:
    reply = await ask(Clock(now=_fixed), utterance("What's the date today?"))
    assert texts(reply) == ["Today is Saturday, March 14, 2026."]
    say_as = _ssml(reply).find("say-as")
    assert (say_as.get("interpret-as"), say_as.text) == ("date", "03/14/2026")
    both = await ask(Clock(now=_fixed), utterance("what day and time is it"))
    assert texts(both) == ["It's 3:05 PM. Today is Saturday, March 14, 2026."]


async def test_clock_keeps_quiet_about_other_things_unless_asked_directly() -> None:
    clock = Clock(now=_fixed)
    assert (await ask(clock, utterance("nice weather"))).events == []
    direct = utterance("nice weather", to=To(service_url="builtin:clock"))
    assert texts(await ask(clock, direct)) == ["I can tell you the time or today's date."]


# -- concierge ----------------------------------------------------------------------------


def _concierge() -> tuple[Concierge, dict]:
    agents = builtin_agents(now=_fixed)
    return agents["concierge"], agents


def test_match_scores_rank_names_keyphrases_and_descriptions() -> None:
    _, agents = _concierge()
    clock, parrot = agents["clock"].manifest, agents["parrot"].manifest
    assert match_score("talk to the clock", clock) == 1.0
    assert match_score("I want the time", clock) == 0.8
    assert match_score("I want the time", parrot) == 0.0
    assert match_score("say it back", parrot) == 0.8
    assert 0.0 < match_score("can you repeat my words", parrot) < 0.8  # description overlap
    assert match_score("", clock) == 0.0


async def test_concierge_recommends_by_scope_and_scores() -> None:
    concierge, _ = _concierge()
    task = Event(
        event_type=EventType.UTTERANCE,
        to=To(service_url="builtin:concierge", private=True),
        parameters=Parameters(dialog_event=text_event(USER, "I need to know the time")),
    )
    ask_for = Event(
        event_type=EventType.GET_MANIFESTS,
        to=To(service_url="builtin:concierge"),
        parameters=Parameters(recommend_scope="external"),
    )
    envelope = _event(EventType.BYE).model_copy(update={"events": [ask_for, task]})
    reply = await ask(concierge, envelope)
    (event,) = reply.events  # the task utterance is context, not a question
    manifests = event.parameters.servicing_manifests
    # The clock first (asked for the time); the parrot and the assistant, which do not tell
    # the time, after it.
    assert manifests[0].identification.service_url == "builtin:clock"
    assert {m.identification.service_url for m in manifests[1:]} == {
        "builtin:parrot",
        "builtin:assistant",
    }
    assert manifests[0].score > max(m.score for m in manifests[1:])
    internal = await ask(concierge, _event(EventType.GET_MANIFESTS, recommend_scope="internal"))
    assert internal.events[0].parameters.servicing_manifests == [concierge.manifest]
    everyone = await ask(concierge, _event(EventType.GET_MANIFESTS, recommend_scope="all"))
    assert len(everyone.events[0].parameters.servicing_manifests) == 4


@pytest.mark.parametrize(
    ("request_text", "name", "url"),
    [
        ("talk to the clock", "Clock", "builtin:clock"),
        ("get me the parrot", "Parrot", "builtin:parrot"),
        ("I want the time", "Clock", "builtin:clock"),
    ],
)
async def test_concierge_brings_in_the_agent_asked_for(
    request_text: str, name: str, url: str
) -> None:
    concierge, agents = _concierge()
    await ask(concierge, utterance("hello everyone"))
    reply = await ask(concierge, utterance(request_text))
    assert texts(reply) == [f"I'll bring in {name}."]
    (invite,) = events_of(reply, EventType.INVITE)
    target = next(a for a in agents.values() if a.manifest.identification.service_url == url)
    assert invite.to.service_url == url
    assert invite.to.speaker_uri == target.speaker_uri
    history = invite.parameters.dialog_history
    assert [de.text() for de in history] == ["hello everyone", request_text]


async def test_delegation_end_to_end_the_clock_answers_the_request() -> None:
    concierge, agents = _concierge()
    reply = await ask(concierge, utterance("what time is it? get me the clock"))
    forwarded = reply.model_copy(update={"events": events_of(reply, EventType.INVITE)})
    answer = await ask(agents["clock"], forwarded)
    assert events_of(answer, EventType.ACCEPT_INVITE)
    assert texts(answer) == [agents["clock"].greeting, "It's 3:05 PM."]


async def test_concierge_history_is_bounded_and_most_recent_last() -> None:
    concierge, _ = _concierge()
    for i in range(3 * HISTORY_LENGTH):
        await ask(concierge, utterance(f"remark {i}"))
    reply = await ask(concierge, utterance("talk to the parrot"))
    history = events_of(reply, EventType.INVITE)[0].parameters.dialog_history
    assert len(history) == HISTORY_LENGTH
    assert history[-1].text() == "talk to the parrot"
    assert history[-2].text() == f"remark {3 * HISTORY_LENGTH - 1}"


async def test_concierge_forgets_the_least_recent_conversations() -> None:
    concierge, _ = _concierge()
    await ask(concierge, utterance("remember me", conversation="old"))
    for i in range(MAX_CONVERSATIONS):
        await ask(concierge, utterance("hi", conversation=f"c{i}"))
    reply = await ask(concierge, utterance("talk to the parrot", conversation="old"))
    history = events_of(reply, EventType.INVITE)[0].parameters.dialog_history
    assert [de.text() for de in history] == ["talk to the parrot"]


async def test_concierge_lists_agents_and_does_not_reinvite() -> None:
    concierge, agents = _concierge()
    listing = texts(await ask(concierge, utterance("what agents are there?")))[0]
    assert "Parrot" in listing and "Clock" in listing
    assert "Tells you the time and the date." in listing
    assert texts(await ask(concierge, utterance("help")))[0] == listing
    clock = agents["clock"].manifest.identification
    here = [conversant(USER, "user"), conversant(clock.speaker_uri, None, clock.service_url)]
    again = await ask(concierge, utterance("talk to the clock", conversants=here))
    assert again.events == []  # not addressed: nothing to add
    direct = utterance(
        "talk to the clock", to=To(service_url="builtin:concierge"), conversants=here
    )
    assert texts(await ask(concierge, direct)) == ["Clock is already here."]
    assert not events_of(await ask(concierge, direct), EventType.INVITE)
    assert (await ask(concierge, utterance("lovely day for it", conversants=here))).events == []


async def test_an_invite_s_history_is_answered_only_when_the_person_spoke_last() -> None:
    """dialogHistory ending with the person's request is answered (a delegation); one ending
    with another agent's words (a greeting) is context only: agents do not answer agents."""
    bot = "tag:x,2025:bot"
    people = [conversant(USER, "User"), conversant(bot, "Weather bot")]

    def invite(last_speaker: str) -> Envelope:
        history = [text_event(USER, "what time is it"), text_event(last_speaker, "Hello, I'm Bot.")]
        if last_speaker == USER:
            history = history[:1]
        return Envelope(
            conversation=Conversation(id="conv-h", conversants=people),
            sender=Sender(speaker_uri=USER),
            events=[
                Event(
                    event_type=EventType.INVITE,
                    to=To(service_url="builtin:clock"),
                    parameters=Parameters(dialog_history=history),
                )
            ],
        )

    asked = texts(await ask(Clock(now=_fixed), invite(USER)))
    assert asked[0].startswith("Hello, I'm Clock") and asked[1].startswith("It's 3:05")
    greeted = texts(await ask(Clock(now=_fixed), invite(bot)))
    assert len(greeted) == 1 and greeted[0].startswith("Hello, I'm Clock")
