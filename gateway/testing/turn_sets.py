"""Sentences for the semantic end-of-turn signal's tuning and held-out sets (issue 28).

Made fresh for that work, apart from ``scripts/bench_turns.py``'s original set. Each *paused*
sentence is split where a person might stop to think — after a preposition, a determiner, a
conjunction, or mid-clause — and its first part does not read as finished. The *complete*
sentences include ones that end on those same words ("What are you looking at?"), so a rule that
only looks at the last word fails them. The prompt and thresholds are chosen on ``TUNING`` and
reported on ``HELD_OUT`` (and ``FRESH``, written later: see there); no two share a sentence.
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

#: A second held-out set, written 2026-11-26 after a rule (unsure words need a very sure voice)
#: was added on what the first held-out set's pipeline run showed, so that the rule is reported
#: on sentences nothing was chosen on. Its own voices; no sentence shared with the sets above.
FRESH = TurnSet(
    "fresh",
    paused=(
        ("Could you send the report to", "everyone on the team?"),
        ("Turn down the volume a", "little bit please."),
        ("I think we should leave before", "the traffic gets bad."),
        ("Add a reminder to call the", "dentist on Friday."),
        ("What is the best way to", "learn a new language?"),
        ("Find me a recipe that uses", "chicken and rice."),
        ("My flight leaves at", "nine in the evening."),
        ("Tell my sister that I will", "pick her up at noon."),
        ("How much does it cost to", "fly to New York?"),
        ("Start a playlist of", "relaxing piano music."),
        ("Check if the store is open and", "how late it closes."),
        ("I am looking for a", "pharmacy near the hospital."),
        ("Please move the meeting from Tuesday", "to Wednesday afternoon."),
        ("Read me the headlines from", "this morning's paper."),
    ),
    complete=(
        "Who are you going with?",
        "What is this made from?",
        "Where are we headed?",
        "Turn the music up.",
        "Which room is it in?",
        "What did you say?",
        "Shut the blinds.",
        "Put the kettle on.",
        "Is the bank open today?",
        "How far away is the moon?",
        "Send a text to my father.",
        "What is the score?",
        "Set a reminder for noon.",
        "Play the next episode.",
        "Dim the lights.",
        "How do I get to the station?",
        "What should I cook tonight?",
        "Call the office.",
        "Will it be sunny this weekend?",
        "Stop the timer.",
        "Tell me about the weather.",
        "How big is the Pacific Ocean?",
        "I need a doctor.",
        "Add apples to my list.",
        "What does that mean?",
        "Repeat that please.",
        "Where did I leave my keys?",
        "Convert ten miles into kilometres.",
        "Who is calling?",
        "Thank you very much.",
    ),
    voices=("piper:1.05:0.75", "espeak:en-us+m3", "piper:0.95:0.6", "espeak:en-gb-scotland"),
)

#: A fourth set, written 2026-11-26 after the fresh set's cut-offs turned out to be the
#: benchmark's own doing (its pauses fell before the dangling word: see ``make_turn_set``), and
#: before any rule was tried on it: the first set made with pauses between words from the
#: start. Its own voices; no sentence shared with the sets above.
FOURTH = TurnSet(
    "fourth",
    paused=(
        ("Can you book a room at", "the hotel near the beach?"),
        ("Remind me to pick up the", "dry cleaning after work."),
        ("What time does the train to", "Manchester leave?"),
        ("Please turn on the heating in", "the spare bedroom."),
        ("I want to listen to", "some jazz while I cook."),
        ("Tell me the difference between", "a frog and a toad."),
        ("Could you call my dentist and", "move my appointment?"),
        ("Show me flights from London to", "Rome in October."),
        ("How many grams of sugar are in", "a can of cola?"),
        ("Set the thermostat to", "twenty one degrees."),
        ("Ask my neighbour if", "she can feed the cat."),
        ("Find the nearest petrol station on", "my way home."),
        ("Write an email to the", "landlord about the boiler."),
        ("Is there a bus that goes to", "the airport tonight?"),
    ),
    complete=(
        "What is that noise for?",
        "Who is this letter for?",
        "Where does she come from?",
        "Lock the back door.",
        "What is there to do around here?",
        "Open the curtains.",
        "How deep is the ocean?",
        "Read my messages.",
        "Which way is north?",
        "Start the dishwasher.",
        "Is it going to snow tomorrow?",
        "Find a good pizza place.",
        "Turn the oven off.",
        "What song is this?",
        "Call a taxi for me.",
        "Pause the music.",
        "How long is the film?",
        "What is two plus two?",
        "Book a haircut for Saturday.",
        "Where is the nearest pharmacy?",
        "Tell me something funny.",
        "What day is it today?",
        "Switch to the news.",
        "Do I have any meetings?",
        "Wake me at seven.",
        "Spell the word necessary.",
        "What is the capital of Canada?",
        "Add bread to the shopping list.",
        "That is all for now.",
        "Good morning.",
    ),
    voices=("piper:1.1:0.7", "espeak:en-gb-x-gbclan", "piper:0.92:0.55", "espeak:en-029"),
)

#: A fifth set, written 2026-11-26 after the fourth set's run and before anything was run on
#: it: the fourth set is now seen (its complete requests' long waits are what a change to the
#: waits would be chosen on), so a change must be reported here. Every first part was meant to
#: read as unfinished; "Turn the lights in the living room" reads as finished to the model
#: (0.059, measured after its run). Its own voices; no sentence shared with the sets above.
FIFTH = TurnSet(
    "fifth",
    paused=(
        ("Could you remind me to buy", "milk on the way home?"),
        ("I would like a table by", "the window if possible."),
        ("Play the song that goes", "la la la in the chorus."),
        ("How long will it take to walk to", "the museum from here?"),
        ("Send a photo of the", "garden to my brother."),
        ("Turn the lights in the living room", "down to half."),
        ("Can you check whether the", "post office is open?"),
        ("Tell the children that dinner is", "ready in ten minutes."),
        ("Find me a quiet cafe with", "good coffee near the park."),
        ("Order more paper for the", "printer in the study."),
        ("What is the weather going to be like in", "Lisbon next week?"),
        ("Put a note in my calendar for", "the plumber on Thursday."),
        ("Give me directions to the", "closest supermarket."),
        ("I need to change my password because", "I forgot the old one."),
    ),
    complete=(
        "Who are we waiting for?",
        "Where did this come from?",
        "Which floor is the gym on?",
        "Close the garage.",
        "What is there to eat?",
        "Turn the radio down.",
        "How long is the river Nile?",
        "Read me the last message.",
        "Is the pharmacy still open?",
        "Cancel my next meeting.",
        "Will it rain on Sunday?",
        "Find me a cheap flight to Berlin.",
        "Unlock the front door.",
        "Who sang this song?",
        "Order a taxi to the station.",
        "Skip this track.",
        "How much is a coffee here?",
        "What is ten times twelve?",
        "Book a dentist appointment.",
        "Where can I charge my phone?",
        "Tell me a riddle.",
        "What month is it?",
        "Go back to the start.",
        "Are there any new emails?",
        "Wake me up in an hour.",
        "How do you spell rhythm?",
        "What is the capital of Peru?",
        "Put eggs on the shopping list.",
        "That will be all, thanks.",
        "Good evening.",
    ),
    voices=("piper:1.0:0.85", "espeak:en-us+f4", "piper:1.08:0.6", "espeak:en-gb-x-gbcwmd"),
)

#: A sixth set, written 2026-11-26 (session 5) before anything was run on it: the five sets
#: above are all seen, and a change to the waits for longer hesitations (1 s and more, which
#: ``bench_turns --pauses`` now puts in) is reported here. Every first part is meant to read as
#: unfinished. Its own voices; no sentence shared with the sets above.
SIXTH = TurnSet(
    "sixth",
    paused=(
        ("Can you look up the opening hours of", "the library?"),
        ("I am trying to find a", "birthday present for my dad."),
        ("Remind me tomorrow to", "renew my passport."),
        ("What is the quickest route to", "the city centre?"),
        ("Please add a meeting with", "the accountant on Wednesday."),
        ("Could you tell me whether", "the shop sells batteries?"),
        ("Text my husband that the", "car is ready."),
        ("How many people live in", "New Zealand?"),
        ("Switch off the television and", "the lamp in the hall."),
        ("I would love to hear a", "song by Elvis."),
        ("Book me a seat on the", "early train to Leeds."),
        ("Can you explain why", "the sky is blue?"),
        ("Find a hotel that allows", "dogs in Edinburgh."),
        ("Let my boss know that I", "am stuck in traffic."),
    ),
    complete=(
        "What are you pointing at?",
        "Who was that message from?",
        "What is this box for?",
        "Which bus should I get on?",
        "Turn the heater off.",
        "Where are my glasses?",
        "Close the window.",
        "How hot is the sun?",
        "Mute the speaker.",
        "Is the chemist open?",
        "What is on television tonight?",
        "Call my dentist.",
        "Play some classical music.",
        "How do I boil an egg?",
        "Set an alarm for eight.",
        "What is the date today?",
        "Remind me to stretch.",
        "Who wrote this book?",
        "Turn up the heating.",
        "Tell me the news.",
        "How many legs does a spider have?",
        "Where is the remote?",
        "Buy more coffee.",
        "What should I wear today?",
        "Is dinner ready?",
        "Text my mum.",
        "Show me my photos.",
        "What is the square root of nine?",
        "That sounds good.",
        "See you later.",
    ),
    voices=("piper:0.97:0.7", "espeak:en-us-nyc", "piper:1.12:0.5", "espeak:en-gb+m4"),
)

#: Written on 2026-11-26 after the semantic signal began to read numbers as said ("6.30" as "six
#: thirty"): every paused request stops right after a number, where the words may or may not be
#: over ("Set a timer for 20 | minutes"), and half the complete ones end on a number. Committed
#: before anything was run on it.
SEVENTH = TurnSet(
    "seventh",
    paused=(
        ("Set a timer for 20", "minutes please."),
        ("Add 3", "bottles of milk to the list."),
        ("Wake me up at 7", "tomorrow morning."),
        ("Book a table for 4", "people at the Italian place."),
        ("Turn the volume down to 2", "in the bedroom."),
        ("Call me back in 10", "minutes."),
        ("Move my appointment to the 15th", "of March."),
        ("I need 2", "tickets for the concert."),
        ("Set the oven to 180", "degrees."),
        ("How far is it to junction 12", "on the motorway?"),
        ("Remind me in 30", "seconds to check the rice."),
        ("Order 6", "eggs and a loaf of bread."),
        ("Play track 5", "from my running playlist."),
        ("Transfer 50", "pounds to my savings account."),
    ),
    complete=(
        "Set the volume to 7.",
        "Call me at 9.",
        "The meeting is at 3.",
        "Count to 10.",
        "What is 5 times 6?",
        "Play channel 4.",
        "Skip to track 9.",
        "Book a table for 2.",
        "Turn to page 42.",
        "Set the thermostat to 21.",
        "My flat is number 8.",
        "What is 100 divided by 4?",
        "Go to floor 3.",
        "The answer is 12.",
        "Wake me at 6.",
        "Good afternoon.",
        "What time is it in Tokyo?",
        "Open the front door.",
        "Who is at the door?",
        "Lower the blinds.",
        "What can you do?",
        "Where is my wallet?",
        "Start the washing machine.",
        "Is it cold outside?",
        "Has the post come yet?",
        "Turn the fan on.",
        "Tell me a fun fact.",
        "Which day are the bins collected?",
        "I am going to bed.",
        "Stop the music.",
    ),
    voices=("piper:1.03:0.65", "espeak:en-us+m2", "piper:0.9:0.8", "espeak:en-gb+f2"),
)

SETS = {s.name: s for s in (TUNING, HELD_OUT, FRESH, FOURTH, FIFTH, SIXTH, SEVENTH)}
