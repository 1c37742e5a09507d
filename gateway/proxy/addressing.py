"""Who the person is talking to: a sans-I/O unit of the person's proxy (docs/floor.md).

Open Floor leaves addressing to the sender: an utterance's ``to`` names the conversant it is for
(§1.8), and agents ignore what is addressed to another (§2.1). The person does not write ``to``;
they say "Clock, what time is it?" or click an agent on the page. :class:`Addressing` turns that
into a :class:`Choice`, in this order:

1. the page's explicit choice for this one utterance (a typed ``text`` with ``to``);
2. a **vocative** in the words: the agent's name at the start ("Clock, …", "Hey clock …",
   "Okay, Parrot. …") or at the end ("… what time is it, clock?"), matched without regard to case
   or to the punctuation speech-to-text puts around it, or a name misheard a letter or two off
   ("What time is it, parent?": :func:`near_name`) where only a vocative stands; "Everyone, …"
   (or "everybody", "all of you") addresses the whole room: no ``to``;
3. the page's standing choice (an agent clicked in the floor panel);
4. an agent **clearly placed** to answer (its name, a whole keyphrase: :data:`CLEAR_SCORE`), even
   while the person talks with another, unless that one is placed as well;
5. the agent the person is talking with (**sticky**), for a follow-up that fits it: elliptical
   (:func:`is_follow_up`) or within what its manifest says it does;
6. the agent **best placed** to answer, from the manifests (its name, a keyphrase, or the words of
   its descriptions and synopsis: :func:`placement`);
7. a **fallback**: an agent whose manifest offers to take anything (the keyphrase
   :data:`FALLBACK_KEYPHRASE`, or "anything"/"general" in its synopsis or descriptions: the
   assistant's), else the discovery agent (the concierge, who
   answers what it cannot place with the agents it knows), else the first agent that joined.

Agents the floor knows are not answering (:class:`gateway.floor.routing.Routing`) are passed over
in 4–7; a choice made by 4–7 carries whom the floor passes the request on to if the agent does not
answer it (:attr:`Choice.then`).

So with several agents every utterance is answered by one of them, unless the person addressed
everyone. The unit holds no I/O and no clock: it is handed the text and the agents present.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gateway.agents.builtin.concierge import content_words
from gateway.floor.routing import Routing
from gateway.ofp import Identification, Manifest, To
from gateway.voice.words import edit_distance

#: A manifest keyphrase by which an agent offers to take what no other agent is placed to answer.
FALLBACK_KEYPHRASE = "anything"
#: The :func:`placement` score at which an agent counts as placed to answer (a name or a whole
#: keyphrase; a loose overlap of words scores at most 0.6 and must cover most of the request).
PLACED_SCORE = 0.5
#: Words said before a name that do not stop it being a vocative ("hey clock", "okay, parrot").
LEAD_INS = frozenset({"hey", "hi", "hello", "okay", "ok", "oh", "yo", "well", "so", "and", "now"})
#: How the person addresses the whole room.
EVERYONE = (("everyone",), ("everybody",), ("all", "of", "you"), ("you", "all"), ("y'all",))
#: Words after a name at the start that show it was a vocative even without a comma
#: ("Clock what time is it", "Parrot say hello").
_OPENER_TEXT = """
what when where who whom whose why how which is are was were do does did can could will would
should shall may might tell say give show set remind please i i'm i'd let let's repeat bring find
help thanks thank
"""
_OPENERS = frozenset(_OPENER_TEXT.split())
#: Words before a name at the end that show it is not a vocative ("… about the clock").
_NOT_BEFORE_TEXT = (
    "the a an my your our their his her its this that to of about for with from by in on at"
)
_NOT_BEFORE_VOCATIVE = frozenset(_NOT_BEFORE_TEXT.split())
_TOKEN = re.compile(r"[\w']+")
_PAUSE = re.compile(r"[,.!?;:\u2014\u2013-]")


class How(enum.StrEnum):
    """How the addressee was chosen (shown on the page)."""

    EXPLICIT = "explicit"
    NAMED = "named"
    EVERYONE = "everyone"
    PAGE = "page"
    STICKY = "sticky"
    BEST = "best"
    FALLBACK = "fallback"
    ONLY = "only"
    NOBODY = "nobody"


@dataclass(frozen=True, slots=True)
class Candidate:
    """An agent on the floor the person may address."""

    speaker_uri: str
    service_url: str
    name: str
    manifest: Manifest | None = None

    @classmethod
    def of(cls, manifest: Manifest, *, speaker_uri: str | None = None) -> Candidate:
        """The agent a manifest describes (``speaker_uri``: the one it has on this floor)."""
        ident = manifest.identification
        return cls(
            speaker_uri or ident.speaker_uri, ident.service_url, ident.display_name, manifest
        )

    def to(self, *, private: bool = False) -> To:
        """The ``to`` of an event for this agent."""
        return To(
            speaker_uri=self.speaker_uri,
            service_url=self.service_url or None,
            private=True if private else None,
        )


def candidates(agents: Sequence[tuple[Identification, Manifest | None]]) -> list[Candidate]:
    """The agents on a floor (:meth:`gateway.floor.host.FloorHost.agents`) as candidates: named
    and reached as the floor knows them, placed by their manifests."""
    return [Candidate(i.speaker_uri, i.service_url, i.display_name, m) for i, m in agents]


@dataclass(frozen=True, slots=True)
class Choice:
    """Whom an utterance is for, and why (a short phrase for the page)."""

    to: Candidate | None
    how: How
    why: str
    private: bool = False
    #: Whom the floor passes the request on to, in order, if ``to`` does not answer it (speaker
    #: URIs; empty when the person chose or named the agent: they asked that one).
    then: tuple[str, ...] = ()

    def event_to(self) -> To | None:
        """The utterance event's ``to`` (None: the whole room)."""
        return None if self.to is None else self.to.to(private=self.private)


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _name_words(name: str) -> tuple[str, ...]:
    said = tuple(w.lower() for w in _TOKEN.findall(name))
    return said[1:] if len(said) > 1 and said[0] == "the" else said


def _pause_between(text: str, start: int, end: int) -> bool:
    return bool(_PAUSE.search(text[start:end]))


#: A name's word this long or longer may be heard near (:func:`near_name`): what speech-to-text
#: makes of a name it does not know ("parent" for Parrot). Shorter words would match too much.
NEAR_MIN_LETTERS = 4
#: A name's word this long or longer may be two letters off ("parent" → "parrot"); a shorter one
#: (4–5 letters: "Clock") one letter off ("click").
NEAR_LONG_LETTERS = 6
#: Words that said alone at the start or end of an utterance mean themselves, never a misheard
#: name ("Pardon, what time is it?" is not "Parrot, …"): interjections and discourse words.
_OWN_MEANING_TEXT = """
pardon sorry please thanks thank cheers hello hey hi okay ok alright right sure great perfect
really actually anyway anyways well yes yeah yep no nope wait stop listen look excuse
honestly seriously basically exactly correct indeed awesome cool nice goodbye bye again
now then today tomorrow tonight yesterday also though maybe perhaps
"""
_OWN_MEANING = frozenset(_OWN_MEANING_TEXT.split()) | LEAD_INS | _OPENERS | _NOT_BEFORE_VOCATIVE
#: Said before a name heard near, these show it is a vocative even with no pause after it.
_GREETINGS = frozenset({"hey", "hi", "hello", "yo"})


def near_name(heard: str, name: str) -> int | None:
    """How many letters ``heard`` is off ``name`` (a word of an agent's name, lower case) if it
    may be that name misheard, else None (0: the same word).

    A near word starts with the name's letter (speech-to-text keeps a word's first sound far
    more often than its last), is not a word that means itself in a vocative's place
    ("pardon", "sorry"…), and is at most one letter off a name of 4–5 letters and two off a
    longer one; a name shorter than :data:`NEAR_MIN_LETTERS` is matched only exactly."""
    if heard == name:
        return 0
    if len(name) < NEAR_MIN_LETTERS or heard[:1] != name[:1] or heard in _OWN_MEANING:
        return None
    limit = 2 if len(name) >= NEAR_LONG_LETTERS else 1
    if abs(len(heard) - len(name)) > limit:
        return None
    distance = edit_distance(heard, name)
    return distance if distance <= limit else None


def _near(said: Sequence[str], name: tuple[str, ...]) -> int | None:
    """Letters off, summed over the name's words, if ``said`` may be ``name`` misheard (at
    least one word off: a name said exactly is :func:`_vocative`'s first pass)."""
    if len(said) != len(name):
        return None
    total = 0
    for s, n in zip(said, name, strict=True):
        d = near_name(s, n)
        if d is None:
            return None
        total += d
    return total or None


def _near_vocative(
    text: str,
    toks: list[tuple[str, int, int]],
    names: Sequence[tuple[tuple[str, ...], Candidate]],
) -> tuple[Candidate, str] | None:
    """The agent whose name ``text`` says near (not exactly) in a vocative's place, and the
    words heard for it. Stricter than an exact name: a pause must part it from the rest of the
    utterance (the comma speech-to-text writes for the pause around a vocative), or a greeting
    come before it ("hey parent"), or it be the whole utterance; the closest name wins, and a
    tie between two agents names neither."""
    words = [t[0] for t in toks]
    i = 0
    while i < len(words) - 1 and words[i] in LEAD_INS:
        i += 1
    found: list[tuple[int, Candidate, str]] = []
    for said, who in names:
        n = len(said)
        at_start = _near(words[i : i + n], said)
        if at_start is not None:
            whole = i + n == len(words)
            greeted = i > 0 and words[i - 1] in _GREETINGS
            if whole or greeted or _pause_between(text, toks[i + n - 1][2], toks[i + n][1]):
                found.append((at_start, who, text[toks[i][1] : toks[i + n - 1][2]]))
        at_end = _near(words[-n:], said) if len(words) > n else None
        if at_end is not None:
            before = toks[-n - 1]
            if before[0] in _GREETINGS or _pause_between(text, before[2], toks[-n][1]):
                found.append((at_end, who, text[toks[-n][1] : toks[-1][2]]))
    if not found:
        return None
    closest = min(d for d, _, _ in found)
    best = [(who, heard) for d, who, heard in found if d == closest]
    if len({id(who) for who, _ in best}) > 1:
        return None  # as near to two agents' names: it names neither
    return best[0]


def vocative(text: str, agents: Sequence[Candidate]) -> Candidate | str | None:
    """The agent ``text`` calls by name at its start or end, ``"everyone"`` for the whole room,
    or None. Tolerant of what speech-to-text makes of a name: case, punctuation around it, a
    "hey"/"okay" before it, and a name heard near (:func:`near_name`) where a vocative stands
    (docs/floor.md, rule 2)."""
    return _vocative(text, agents)[0]


def _vocative(text: str, agents: Sequence[Candidate]) -> tuple[Candidate | str | None, str]:
    """:func:`vocative`, and the words heard for the name when they were not the name itself
    ("" otherwise)."""
    toks = _tokens(text)
    if not toks:
        return None, ""
    names = [(_name_words(a.name), a) for a in agents]
    names = [(n, a) for n, a in names if n]
    # Longest names first, so "Weather Bot" wins over an agent called "Weather".
    names.sort(key=lambda na: len(na[0]), reverse=True)
    everyone: list[tuple[tuple[str, ...], Candidate | str]] = [(e, "everyone") for e in EVERYONE]
    callable_by: list[tuple[tuple[str, ...], Candidate | str]] = [*everyone, *names]
    words = [t[0] for t in toks]

    # At the start, after any lead-ins.
    i = 0
    while i < len(words) - 1 and words[i] in LEAD_INS:
        i += 1
    for said, who in callable_by:
        n = len(said)
        if tuple(words[i : i + n]) != said:
            continue
        if i + n == len(words):
            return who, ""  # the utterance is only the name ("Clock?")
        after_end = toks[i + n - 1][2]
        nxt = toks[i + n]
        if (
            i > 0
            or _pause_between(text, after_end, nxt[1])
            or nxt[0] in _OPENERS
            or who == "everyone"
        ):
            return who, ""
    # At the end, after a pause or a lead-in ("…, clock?", "thanks clock").
    for said, who in callable_by:
        n = len(said)
        if len(words) <= n or tuple(words[-n:]) != said:
            continue
        before = toks[-n - 1]
        if _pause_between(text, before[2], toks[-n][1]) or before[0] in LEAD_INS:
            return who, ""
        if before[0] not in _NOT_BEFORE_VOCATIVE and len(words) >= n + 3:
            return who, ""
    # No name said exactly: one heard near it, where only a vocative stands.
    near = _near_vocative(text, toks, names)
    return near if near is not None else (None, "")


def placement(text: str, manifest: Manifest) -> tuple[float, str]:
    """How well ``manifest`` is placed to answer ``text`` (0.0 to 1.0) and why, in words.

    The same scale as the concierge's discovery scores (gateway.agents.builtin.concierge): its
    name 1.0, a whole keyphrase 0.8, else the share of the request's words found in its
    keyphrases, descriptions and synopsis, scaled to at most 0.6."""
    asked = content_words(text)
    if not asked:
        return 0.0, "nothing to match"
    ident = manifest.identification
    if content_words(ident.conversational_name) & asked:
        return 1.0, f"its name, {ident.display_name}"
    phrases = [k for cap in manifest.capabilities for k in cap.keyphrases]
    for p in phrases:
        words = content_words(p)
        if words and words <= asked:
            return 0.8, f"its keyphrase \u201c{p}\u201d"
    texts = [*phrases, *(d for cap in manifest.capabilities for d in cap.descriptions)]
    vocabulary = content_words(" ".join([*texts, ident.synopsis]))
    shared = sorted(asked & vocabulary)
    score = round(0.6 * len(shared) / len(asked), 2)
    return score, ("its description: " + ", ".join(shared)) if shared else "no match"


#: Words in a synopsis or description by which an agent says it takes any question.
_GENERAL = re.compile(r"\b(anything|general)\b", re.IGNORECASE)


def is_fallback(manifest: Manifest | None) -> bool:
    """Whether the agent offers to take what nobody else is placed to answer: the keyphrase
    :data:`FALLBACK_KEYPHRASE`, or "anything"/"general" in its synopsis or descriptions (the
    assistant's: "Answers questions and talks about anything.")."""
    if manifest is None:
        return False
    caps = manifest.capabilities
    if any(k.strip().lower() == FALLBACK_KEYPHRASE for c in caps for k in c.keyphrases):
        return True
    texts = [manifest.identification.synopsis, *(d for c in caps for d in c.descriptions)]
    return any(_GENERAL.search(t or "") for t in texts)


def is_discovery(manifest: Manifest | None) -> bool:
    """Whether the agent's manifest says it is a discovery agent (§0.5)."""
    roles = manifest.identification.open_floor_roles if manifest is not None else None
    return bool(roles and roles.get("discovery"))


#: The score at which an agent is *clearly* placed (its name, a whole keyphrase): it gets the
#: request even while the person is talking with another agent (the clock for "what time is it"
#: after a question to the assistant), unless that other agent is placed as well.
CLEAR_SCORE = 0.8
#: Words that open an elliptical follow-up ("and Germany?", "what about tomorrow?"): it means
#: "the same, about this", so it stays with the agent the person is talking with.
_FOLLOW_UP_OPENERS = (
    ("and",),
    ("or",),
    ("but",),
    ("also",),
    ("then",),
    ("what", "about"),
    ("how", "about"),
    ("what", "of"),
    ("same",),
)
#: At most this many words is a follow-up whatever its words ("Why?", "In Paris?", "Tomorrow?").
FOLLOW_UP_WORDS = 2


def is_follow_up(text: str) -> bool:
    """Whether ``text`` reads as an elliptical follow-up to what was just said: it opens with
    "and", "what about"… or is at most :data:`FOLLOW_UP_WORDS` words."""
    words = [t[0] for t in _tokens(text)]
    if not words:
        return False
    if len(words) <= FOLLOW_UP_WORDS:
        return True
    return any(tuple(words[: len(o)]) == o for o in _FOLLOW_UP_OPENERS)


def _fits(text: str, agent: Candidate) -> bool:
    """Whether a request is within what ``agent``'s manifest says it does: a generalist takes
    anything; a specialist what shares a word with its keyphrases, descriptions or synopsis."""
    if agent.manifest is None:
        return True  # it told us nothing of itself: we cannot tell it does not fit
    return is_fallback(agent.manifest) or placement(text, agent.manifest)[0] > 0


def _ranked(text: str, agents: Sequence[Candidate]) -> list[tuple[float, str, Candidate]]:
    """The agents placed to answer ``text`` (score at least :data:`PLACED_SCORE`), best first
    (ties: the one that joined first)."""
    scored = [
        (*placement(text, a.manifest), i, a) for i, a in enumerate(agents) if a.manifest is not None
    ]
    placed = sorted((s for s in scored if s[0] >= PLACED_SCORE), key=lambda s: (-s[0], s[2]))
    return [(score, why, a) for score, why, _, a in placed]


class Addressing:
    """The person's addressing state for one conversation (see the module's docstring).

    ``sticky``: an unaddressed utterance that fits the agent the person is talking with goes to
    it (docs/floor.md gives the rules and the reason for each).
    """

    def __init__(self, *, sticky: bool = True) -> None:
        self.sticky = sticky
        #: The agent the page chose (a click in the floor panel) and whether privately.
        self.page_to: str | None = None
        self.page_private = False
        #: The agent the person is talking to (whoever last got or answered their words).
        self.current: str | None = None

    def set_page_choice(self, speaker_uri: str | None, *, private: bool = False) -> None:
        """The page's standing choice (None: back to automatic addressing)."""
        self.page_to = speaker_uri
        self.page_private = bool(private and speaker_uri)
        self.current = speaker_uri

    def choose(
        self,
        text: str,
        agents: Sequence[Candidate],
        *,
        to: str | None = None,
        private: bool = False,
        routing: Routing | None = None,
    ) -> Choice:
        """Whom ``text`` is for, among ``agents`` (the agents on the floor, in joining order).

        ``to``/``private``: the page's explicit choice for this utterance (a speaker URI that
        must be one of ``agents``; :class:`LookupError` otherwise). ``routing``: what the floor
        knows of who answers (agents not answering are routed around; the agent the last
        hand-over went to is the one the person is talking with)."""
        by_uri = {a.speaker_uri: a for a in agents}
        routing = routing or Routing()
        handed = routing.take_handed_to()
        if handed in by_uri:
            self.current = handed
        if to is not None:
            chosen = by_uri.get(to)
            if chosen is None:
                raise LookupError(f"{to!r} is not an agent in this conversation")
            self.current = chosen.speaker_uri
            return Choice(chosen, How.EXPLICIT, f"you chose {chosen.name}", private)
        if not agents:
            return Choice(None, How.NOBODY, "no agent is here")
        named, heard = _vocative(text, agents)
        if named == "everyone":
            self.current = None
            return Choice(None, How.EVERYONE, "you addressed everyone")
        if isinstance(named, Candidate):
            self.current = named.speaker_uri
            why = f"you named {named.name}"
            if heard:  # a name heard near: said, so a wrong guess shows
                why += f" (heard \u201c{heard}\u201d)"
            if named.speaker_uri in routing.not_answering:
                why += (
                    f" (it is not answering right now: {routing.not_answering[named.speaker_uri]})"
                )
            return Choice(named, How.NAMED, why)
        page = by_uri.get(self.page_to or "")
        if page is not None:
            return Choice(page, How.PAGE, f"you chose {page.name}", self.page_private)
        if len(agents) == 1:
            only = agents[0]
            self.current = only.speaker_uri
            return Choice(only, How.ONLY, f"{only.name} is the only agent here")
        choice = self._automatic(text, agents, routing)
        self.current = choice.to.speaker_uri if choice.to is not None else None
        return choice

    def _automatic(self, text: str, agents: Sequence[Candidate], routing: Routing) -> Choice:
        """An unaddressed utterance: by capability, then by conversation (docs/floor.md)."""
        silent = [a for a in agents if a.speaker_uri in routing.not_answering]
        answering = [a for a in agents if a.speaker_uri not in routing.not_answering] or list(
            agents
        )
        ranked = _ranked(text, answering)
        by_uri = {a.speaker_uri: a for a in answering}
        current = by_uri.get(self.current or "") if self.sticky else None
        current_score = placement(text, current.manifest)[0] if current and current.manifest else 0
        clear = bool(ranked) and ranked[0][0] >= CLEAR_SCORE
        if clear and (current is None or current_score < ranked[0][0]):
            _, why, best = ranked[0]
            choice = Choice(best, How.BEST, f"best placed to answer: {why}")
        elif current is not None and (is_follow_up(text) or _fits(text, current)):
            choice = Choice(current, How.STICKY, f"you are talking with {current.name}")
        elif ranked:
            _, why, best = ranked[0]
            choice = Choice(best, How.BEST, f"best placed to answer: {why}")
        else:
            choice = self._fallback(answering)
        chosen = choice.to
        assert chosen is not None  # every branch above names an agent
        # Whoever would have had it but is not answering: said, so the person knows why.
        skipped = [a for a in silent if a is not chosen and _would_have(text, a, self.current)]
        if skipped:
            choice = replace(
                choice, why=f"{skipped[0].name} is not answering; {chosen.name} took it"
            )
        return replace(choice, then=_next_placed(text, answering, chosen))

    @staticmethod
    def _fallback(agents: Sequence[Candidate]) -> Choice:
        for test, because in (
            (is_fallback, "answers what no other agent is placed to"),
            (is_discovery, "finds the agent for what no agent here is placed to answer"),
        ):
            for a in agents:
                if test(a.manifest):
                    return Choice(a, How.FALLBACK, f"{a.name} {because}")
        first = agents[0]
        return Choice(
            first, How.FALLBACK, f"no agent is placed to answer; {first.name} joined first"
        )


def _would_have(text: str, agent: Candidate, current: str | None) -> bool:
    """Whether a silent agent would have been chosen were it answering (for the why)."""
    return agent.speaker_uri == current or (
        agent.manifest is not None and placement(text, agent.manifest)[0] >= PLACED_SCORE
    )


def _next_placed(text: str, agents: Sequence[Candidate], chosen: Candidate) -> tuple[str, ...]:
    """Whom the floor passes the request on to, in order, if ``chosen`` does not answer it: the
    other agents placed to answer it, then a generalist, and only then the discovery agent (a
    list of the agents it can bring in is a poorer answer, but better than silence). With none
    of those, the first other agent that joined: whom the person's next unaddressed words go to
    while ``chosen`` is not answering (:meth:`Addressing._fallback`), so the words in flight
    are not left unanswered either."""
    out = [a.speaker_uri for _, _, a in _ranked(text, agents) if a is not chosen]
    out += [a.speaker_uri for a in agents if a is not chosen and is_fallback(a.manifest)]
    out += [a.speaker_uri for a in agents if a is not chosen and is_discovery(a.manifest)]
    if not out:
        out += [a.speaker_uri for a in agents if a is not chosen][:1]
    return tuple(dict.fromkeys(out))
