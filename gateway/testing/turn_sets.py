"""Sentences for the semantic end-of-turn signal's tuning and held-out sets (issue 28).

Made fresh for that work, apart from ``scripts/bench_turns.py``'s original set. Each *paused*
sentence is split where a person might stop to think — after a preposition, a determiner, a
conjunction, or mid-clause — and its first part does not read as finished. The *complete*
sentences include ones that end on those same words ("What are you looking at?"), so a rule that
only looks at the last word fails them. The prompt and thresholds are chosen on ``TUNING`` and
reported on ``HELD_OUT``; the two share no sentence.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TurnSet:
    """Paused sentences (first part, the rest) and complete sentences, with the voices that
    say them (each sentence by one voice, in turn)."""

    name: str
    paused: tuple[tuple[str, str], ...]
    complete: tuple[str, ...]
    voices: tuple[str, ...]


#: Voices: ``piper`` (joe, its own length/noise scales) as ``piper:LENGTH:NOISE``;
#: espeak-ng voices as ``espeak:VOICE``.
TUNING = TurnSet(
    "tuning",
    paused=(
        ("I would like to go to the", "airport tomorrow morning."),
        ("Can you remind me to", "water the plants tonight?"),
        ("Play something by", "the Beatles please."),
        ("Turn off the lights and", "lock the front door."),
        ("Can you tell me", "how far it is to the station?"),
        ("Set a timer for", "twenty minutes."),
        ("Add milk eggs and", "bread to my shopping list."),
        ("Send an email to my", "boss about the meeting."),
        ("I need a table for", "four people at seven."),
        ("How long does it take to drive from", "here to the coast?"),
        ("Show me the photos that", "I took last summer."),
        ("Call my mother because", "I forgot her birthday."),
        ("Find a restaurant with", "outdoor seating nearby."),
        ("Could you please", "read me the news?"),
        ("What is the", "capital of Australia?"),
        ("Move my meeting with", "Peter to Thursday."),
        ("I was wondering if you could", "help me plan a trip."),
        ("Send a message saying", "I will be late tonight."),
        ("Tell me how", "to make bread at home."),
        ("Is it going to", "rain this afternoon?"),
    ),
    complete=(
        "What are you looking at?",
        "Where did you come from?",
        "Who should I talk to?",
        "What is this song about?",
        "Turn the radio on.",
        "Which one are you thinking of?",
        "What time is it?",
        "Tell me a joke.",
        "How tall is Mount Everest?",
        "Set the temperature to twenty degrees.",
        "Can you help me with that?",
        "What is the weather like today?",
        "Please stop the music.",
        "Cancel my alarm.",
        "I am done.",
        "Who is it for?",
    ),
    voices=("piper:1.0:0.667", "espeak:en-us", "piper:1.2:0.9", "espeak:en-gb"),
)

HELD_OUT = TurnSet(
    "held-out",
    paused=(
        ("Please book a taxi to the", "train station."),
        ("Remind me to buy flowers for", "my wife on Sunday."),
        ("Open the window and", "turn on the fan."),
        ("I want to know whether", "it will rain tomorrow."),
        ("Text Maria that I am running", "ten minutes late."),
        ("Play the latest episode of", "my favourite podcast."),
        ("What is the distance between", "London and Paris?"),
        ("Schedule a call with the", "design team on Monday."),
        ("Can you find me a cheap hotel in", "Rome for the weekend?"),
        ("Turn the heating up but", "not too much."),
        ("Order a large pizza with", "extra cheese and mushrooms."),
        ("Tell me a story about a", "dragon who learns to fly."),
        ("I would like to", "cancel my subscription."),
        ("Wake me up at", "half past six tomorrow."),
    ),
    complete=(
        "What are you waiting for?",
        "Who did you give it to?",
        "What is that made of?",
        "Turn the lights off.",
        "Where is the music coming from?",
        "What are you talking about?",
        "Which city do you live in?",
        "Switch the television on.",
        "Is there anything to eat?",
        "How many days are there in a leap year?",
        "Read me my messages.",
        "What is the time in Tokyo?",
        "Set an alarm for six thirty.",
        "Play some jazz.",
        "Lock the front door.",
        "How do I make pancakes?",
        "What is on my calendar today?",
        "Call my brother.",
        "Will it snow tomorrow?",
        "Pause the video.",
        "Tell me something interesting.",
        "How old is the universe?",
        "I need a taxi.",
        "Add butter to the shopping list.",
        "What does this word mean?",
        "Skip this song.",
        "Where can I park the car?",
        "Translate hello into Spanish.",
        "Who won the game last night?",
        "Good night.",
    ),
    voices=("piper:1.15:0.8", "espeak:en-us+f3", "piper:0.9:0.5", "espeak:en-gb-x-rp"),
)

SETS = {s.name: s for s in (TUNING, HELD_OUT)}
