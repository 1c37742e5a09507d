"""The semantic end-of-turn signal: has the person finished, judged from their words?

"I would like to go to the" is unfinished whatever the voice does; "what are you looking at"
is finished though it ends on a preposition. A small instruct language model reads the
speculative transcript as a user turn of its chat template — lower-case, punctuation dropped, so
Whisper's own guess at a full stop does not leak in — after the conversation's last agent
utterance, and the probability of its next token being the end-of-turn token or a sentence's
last mark is P(finished)::

    P(end) = P(<|im_end|>) + P(".") + P("?") + P("!")

The model is SmolLM2-135M-Instruct (the default weights of :mod:`gateway.llm.embedded`), run by
its own :class:`~gateway.llm.embedded.EmbeddedLlama` — a separate llama.cpp server, not the
assistant's, so an assistant generating a long answer never delays a turn verdict. One call is
one ``/completion`` with ``n_predict: 1`` and ``n_probs``; special tokens are matched by id
(their text comes back empty), ``.?!`` by the ids the server's tokenizer gives them.

Cost: llama.cpp keeps each slot's last prompt (``cache_prompt``), so the fixed prefix (system
line, the agent's last words) is processed once and each call pays only for the person's words:
about 7–10 ms a token on one thread of a 2-core machine (measured in
``scripts/bench_semantic.py``). So that this holds with many people, each person (a ``key``) has
a slot of their own (``id_slot``), and :meth:`SemanticSignal.prime` puts a new agent line in it
when the person starts to speak — not at their pause, where the turn waits for the answer. The
prompt, the thresholds and the figures are chosen on a tuning set and reported on a held-out one
(``docs/turn-taking.md``, "The semantic signal").
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
import urllib.request
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Literal

from num2words import num2words

from gateway.llm.embedded import EmbeddedLlama, LlamaSettings

log = logging.getLogger(__name__)

#: ``<|im_end|>`` in SmolLM2's vocabulary: the model's end of a turn.
IM_END = 2
#: Texts whose token ids also mean "the sentence is over".
END_MARKS = (".", "?", "!")

#: A warm call's time on one thread of a quiet 2-core machine (ms; ``bench_semantic --people 12``:
#: 44 median).
TYPICAL_MS = 45.0

#: What :meth:`SemanticSignal.prime` did: read the prefix in, found it there, found the model
#: busy (try again), found the signal's calls coming too late these days to be worth it, or could
#: not (the slot stays cold).
Primed = Literal["primed", "held", "busy", "late", "failed"]

#: Primes are made while at least this share of recent pauses got their call in time. At 12
#: people on 2 cores 4-7 of 76-78 did (the decode left no time before the rule's wait), and the
#: primes' CPU (one per turn, 70-80 ms) still slowed everyone: end of speech -> reply p95
#: 1.13-1.22 s against 0.86-1.0 s without the signal.
PRIME_SHARE = 0.25

_NOT_WORD = re.compile(r"[^a-z0-9' ]+")
#: A clock time as Whisper writes one ("6.30", "6:30").
_CLOCK = re.compile(r"\b([01]?\d|2[0-3])[.:]([0-5]\d)\b")
#: A number in digits: thousands commas, a decimal part, an ordinal's ending.
_DIGITS = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(st|nd|rd|th)?\b", re.IGNORECASE)


def plain(text: str) -> str:
    """``text`` as a person's bare words: numbers spelled as said, lower-case, punctuation
    dropped, spaces single ("Turn on the lights." → "turn on the lights"), so the model judges
    the words, not Whisper's punctuation or its way of writing numbers."""
    text = _DIGITS.sub(_number, _CLOCK.sub(_clock, text))
    return " ".join(_NOT_WORD.sub(" ", text.lower().replace("’", "'")).split())


def _clock(m: re.Match[str]) -> str:
    # What a person says: Whisper writes "set an alarm for six thirty" as "…for 6.30.", which the
    # model read as a sentence going on (0.0022; "…for six thirty" 0.090).
    hour, minute = num2words(int(m[1])), int(m[2])
    if minute == 0:
        return f"{hour} o'clock"
    return f"{hour} {'oh ' if minute < 10 else ''}{num2words(minute)}"


def _number(m: re.Match[str]) -> str:
    whole = m[1].replace(",", "")
    if len(whole) > 15:  # no number anyone says: left as digits
        return m[0]
    if m[3] and not m[2]:
        return str(num2words(int(whole), to="ordinal"))
    spoken = str(num2words(float(whole + m[2]) if m[2] else int(whole)))
    return spoken + (m[3] or "")


@dataclass(frozen=True)
class SemanticSettings:
    """How the semantic signal runs (defaults chosen on the tuning set: ``bench_semantic``)."""

    #: Its own llama.cpp server: a slot per person (the gateway's 12 sessions), each keeping
    #: that person's prompt prefix, with a small context (an English prompt at its bounds, 40
    #: words after 200 characters, is about 130 tokens), on one thread. Twelve people shared
    #: one slot at first: with their different agent lines nearly every call was cold (16.5
    #: prompt tokens a call, 156 ms median / 227 ms p95 against 4 tokens and ~40 ms warm).
    #: Memory (RSS of the loaded server): one slot of 512 tokens 137 MB, 12 of 256 195 MB,
    #: 12 of 320 262 MB; keys and values in Q8_0 would save a third but move the scores the
    #: thresholds were chosen on (0.0693 -> 0.0636), so they stay F16.
    #: One thread: two nearly halve a call alone (29 ms median against 50, 20 held-out
    #: sentences after the cached prefix, 2-core machine, 2026-11-25), but right after a
    #: Whisper decode (whose threads keep spinning) 95 of 152 calls on two threads missed a
    #: 250 ms timeout; on one thread none did.
    llm: LlamaSettings = field(
        default_factory=lambda: LlamaSettings(threads=1, context=256, slots=12)
    )
    #: Calls at once; one more is not made (the turn is judged without it). See ``score``.
    parallel: int = 1
    #: The system line of the prompt ("" : none). Chosen on the tuning set.
    system: str = "You are a helpful assistant."
    #: What the agent is taken to have said last when nothing has been said yet.
    opening: str = "How can I help you?"
    #: Candidates read from the model's next-token distribution (the end marks are among the
    #: top ones whenever their probability matters).
    top: int = 40
    #: Words of the person's text kept (the last ones): bounds the prompt, and so the cost.
    max_words: int = 40
    #: Characters of the agent's last utterance kept (its end: what the person answers).
    max_context_chars: int = 200
    #: A call that takes longer is given up (the turn is judged without it).
    timeout_ms: int = 250


class SemanticSignal:
    """P(finished) from a person's words, on an embedded llama.cpp server of its own.

    :meth:`score` and :meth:`prime` block (an HTTP call on loopback): call them in a thread.
    Thread-safe. ``key`` names a person: their calls go to a slot of their own (the least
    recently used one when every slot is taken), so their prompt prefix stays cached."""

    def __init__(self, settings: SemanticSettings | None = None) -> None:
        self.settings = settings or SemanticSettings()
        self._llm = EmbeddedLlama(self.settings.llm)  # raises ModelNotAvailable early
        self._end_ids: frozenset[int] | None = None
        self._lock = threading.Lock()
        # The slots: whose each is (least recently used first), which are in use, and the prompt
        # each last read (its cache). ``_scores`` counts scores in flight (at most
        # ``parallel``), ``_primes`` primes (one, and only while no score runs).
        self._slots_lock = threading.Condition()
        self._owners: OrderedDict[Hashable, int] = OrderedDict()
        self._busy: set[int] = set()
        self._prompts: dict[int, str] = {}
        self._scores = 0
        self._primes = 0
        #: Calls not made because ``parallel`` calls were in flight (for benchmarks).
        self.skipped = 0
        #: Calls not made because the turn would end before such a call answers.
        self.late = 0
        #: Prefixes put in a person's slot before their pause (for benchmarks and tests).
        self.primed = 0
        #: Calls that got no answer (a timeout, a server not answering), and whether the last
        #: one did: the log says so once per episode, not once per pause.
        self.failures = 0
        self._failing = False
        #: Milliseconds of the last call (for benchmarks).
        self.last_ms = 0.0
        #: Prompt tokens the server processed at the last call (the rest came from its cache).
        self.last_new_tokens = 0
        #: What a warm call takes (ms): a caller with less time than this before the turn ends
        #: without it need not ask (see ``proxy.listening``). Fixed, not a moving average of
        #: calls made: under load few are made, and cold ones would lock the signal out.
        self.typical_ms = TYPICAL_MS
        #: The share of recent pauses whose call was made in time (a moving average of
        #: :meth:`attempted`): while it is low the machine is saturated, and primes are not
        #: made — their CPU would only slow everyone's speech.
        self.made_share = 1.0

    def start(self) -> SemanticSignal:
        """Load the model (about 0.4 s) and learn the end marks' token ids."""
        with self._lock:
            if self._end_ids is None:
                self._llm.start()
                ids = {IM_END}
                for mark in END_MARKS:
                    ids.update(self._post("/tokenize", {"content": mark}, 5000)["tokens"])
                self._end_ids = frozenset(ids)
        return self

    def warm_up(self) -> None:
        """Load the model and put the prompt's fixed prefix in its cache (the first call is
        cold: 100–300 ms, past the timeout)."""
        self.start()
        self.score("hello", timeout_ms=5000)

    def close(self) -> None:
        """Stop the model's server."""
        with self._lock:
            self._llm.close()
            self._end_ids = None

    def prefix(self, context: str | None = None) -> str:
        """The ChatML prompt up to the person's words: the system line, the agent's last
        utterance, the opening of the user's turn."""
        s = self.settings
        agent = " ".join((context or s.opening).split())[-s.max_context_chars :]
        system = f"<|im_start|>system\n{s.system}<|im_end|>\n" if s.system else ""
        return f"{system}<|im_start|>assistant\n{agent}<|im_end|>\n<|im_start|>user\n"

    def prompt(self, text: str, context: str | None = None) -> str:
        """The ChatML prompt: :meth:`prefix`, then the person's words left open (no
        ``<|im_end|>``: whether it comes next is the question)."""
        said = plain(text).split()[-self.settings.max_words :]
        return self.prefix(context) + " ".join(said)

    def prime(self, context: str | None = None, words: str = "", *, key: Hashable) -> Primed:
        """Put the prompt after ``context`` in ``key``'s slot — its prefix, and ``words`` the
        person has said so far (a partial transcript) — so that their pause's call pays only
        for what is new (a new agent line is 15–50 tokens: 100–300 ms on one thread). Made
        only when nothing else is in flight (``"busy"``: try again later) and the slot does
        not hold it already (``"held"``). Best effort: ``"failed"`` (the model not started
        or not answering) only leaves the slot cold."""
        if self._end_ids is None:
            return "failed"
        if self.made_share < PRIME_SHARE:
            return "late"
        prompt = self.prefix(context) + " ".join(plain(words).split()[-self.settings.max_words :])
        with self._slots_lock:
            slot = self._owners.get(key)
            if slot is not None and slot not in self._busy and self._holds(slot, prompt):
                return "held"
        slot = self._take(key, prompt=prompt, prime=True)
        if slot is None:
            return "busy"
        body = {"prompt": prompt, "n_predict": 0, "cache_prompt": True, "id_slot": slot}
        done = False
        try:
            self._post("/completion", body, 5000)
            done = True
            self.primed += 1
        except (OSError, ValueError):
            pass
        finally:
            self._give_back(slot, prompt if done else None, prime=True)
        return "primed" if done else "failed"

    def score(
        self,
        text: str,
        context: str | None = None,
        *,
        key: Hashable | None = None,
        timeout_ms: int | None = None,
    ) -> float | None:
        """P(finished) for the person's ``text`` after the agent's ``context`` (None: no words
        to judge, the model busy, or no answer within ``timeout_ms``, by default the
        settings'). ``key``: whose slot (None: any slot, llama.cpp's choice)."""
        if not plain(text):
            return None
        if self._end_ids is None:
            self.start()
        assert self._end_ids is not None
        prompt = self.prompt(text, context)
        # A call that would wait for another to finish is not made: at 12 people the calls,
        # queued on one slot, each mostly cold (every session has its own agent line), took
        # the end of speech -> reply median from 644 to 1 084-1 558 ms (p95 1.9 -> 2.5 s). A
        # busy signal's turn is judged by the transcript and the voice, as before it existed.
        timeout_ms = timeout_ms or self.settings.timeout_ms
        slot = self._take(key, prompt=prompt, prime=False, wait_s=timeout_ms / 2000)
        if slot is None:
            self.skipped += 1
            self.last_ms = 0.0
            return None
        body = {
            "prompt": prompt,
            "n_predict": 1,
            "n_probs": self.settings.top,
            "cache_prompt": True,
            "temperature": 0,
            "id_slot": slot,
        }
        t = time.perf_counter()
        answered = False
        try:
            reply = self._post("/completion", body, timeout_ms)
            top = reply["completion_probabilities"][0]["top_logprobs"]
            p = sum(math.exp(c["logprob"]) for c in top if c["id"] in self._end_ids)
            self.last_new_tokens = int(reply.get("timings", {}).get("prompt_n", 0))
            answered = True
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            # A timeout, or a server that is not answering: the turn ends on the other signals.
            # One line per episode, no traceback: under load (2 cores, 8-9 runnable) a call
            # can miss its deadline every pause, and a log of tracebacks helps nobody.
            self.failures += 1
            if not self._failing:
                self._failing = True
                log.warning(
                    "the semantic end-of-turn signal did not answer (%s: %s); turns end on "
                    "the other signals until it does",
                    type(exc).__name__,
                    exc,
                )
            return None
        finally:
            # A call given up may still run on the server: its slot's cache is then unknown.
            self._give_back(slot, prompt if answered else None, prime=False)
            self.last_ms = (time.perf_counter() - t) * 1000
        if self._failing:
            self._failing = False
            log.info("the semantic end-of-turn signal answers again")
        return min(1.0, max(0.0, p))

    def attempted(self, made: bool) -> None:
        """A pause wanted a call; ``made``: there was time to make it (see ``made_share``)."""
        if not made:
            self.late += 1
        self.made_share += 0.1 * (float(made) - self.made_share)

    def _holds(self, slot: int, prompt: str) -> bool:
        """Whether ``slot``'s cache already holds all of ``prompt``."""
        return self._prompts.get(slot, "\0").startswith(prompt)

    def _take(
        self, key: Hashable | None, *, prompt: str, prime: bool, wait_s: float = 0.0
    ) -> int | None:
        """A slot for ``key``'s call, marked in use; None when the call is not to be made.
        A prime is made only when nothing else runs and the slot does not hold ``prompt``
        already. A score is not made past ``parallel`` scores in flight — but a prime never
        stops one: a score whose slot is being primed waits for it (up to ``wait_s``; the
        prime reads what the score would have read), and runs beside a prime in another
        slot."""
        with self._slots_lock:
            if self._scores >= (1 if prime else self.settings.parallel) or (prime and self._primes):
                return None
            if key is None:
                free = [i for i in range(self.settings.llm.slots) if i not in self._busy]
                if not free:
                    return None
                slot = max(free, key=lambda i: _shared(self._prompts.get(i, ""), prompt))
            elif key in self._owners:
                slot = self._owners[key]
                self._owners.move_to_end(key)
                if prime and (slot in self._busy or self._holds(slot, prompt)):
                    return None
                if not self._slots_lock.wait_for(lambda: slot not in self._busy, wait_s):
                    return None
                if self._scores >= self.settings.parallel:  # another came while it waited
                    return None
            else:
                taken = set(self._owners.values())
                unowned = [i for i in range(self.settings.llm.slots) if i not in taken]
                if unowned:
                    slot = unowned[0]
                else:  # every slot has a person: the one heard from longest ago gives theirs up
                    old = next((k for k, i in self._owners.items() if i not in self._busy), None)
                    if old is None:
                        return None
                    slot = self._owners.pop(old)
                self._owners[key] = slot
            self._busy.add(slot)
            if prime:
                self._primes += 1
            else:
                self._scores += 1
            return slot

    def _give_back(self, slot: int, prompt: str | None, *, prime: bool) -> None:
        with self._slots_lock:
            self._busy.discard(slot)
            if prime:
                self._primes -= 1
            else:
                self._scores -= 1
            if prompt is None:
                self._prompts.pop(slot, None)
            else:
                self._prompts[slot] = prompt
            self._slots_lock.notify_all()

    def _post(self, path: str, body: dict[str, object], timeout_ms: int) -> dict[str, Any]:
        request = urllib.request.Request(
            self._llm.root_url + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout_ms / 1000) as reply:
            answer: dict[str, Any] = json.loads(reply.read())
            return answer


def _shared(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share from their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def default_semantic(settings: SemanticSettings | None = None) -> SemanticSignal | None:
    """The semantic signal when its model is installed (None: the turn rule goes without)."""
    from gateway.catalogue import ModelNotAvailable

    try:
        return SemanticSignal(settings)
    except ModelNotAvailable as exc:
        log.warning("no semantic end-of-turn signal: %s", exc)
        return None
