"""The feedback reader: are the words a person said over a talking agent a listener's feedback?

While the agent talks, a person says things that are not for it to stop on: a backchannel
("uh-huh", "right"), a comment ("I know the feeling"), an assessment ("oh, that's lovely"). Others
are: a request to stop or to change course ("okay, I need a taxi", "right, where do I park").
:class:`FeedbackReader` reads the words (as :func:`gateway.proxy.overlap.heard_words` gives them)
and gives P(feedback) — near 1 for a listener's feedback, near 0 for a request.

Why a probe on embeddings: the overlap rules' lexicon of feedback, written phrase by phrase as
each held-out set showed what it missed, did not reach the next listener's words: held-out sets
of new phrases stopped the agent 28–66 % of the time. What a person says back to a talking
agent is open-ended; a language model's sentence embedding carries what kind of utterance it is
(a reaction or a request) whatever the words. The reader is a linear probe — L2 logistic
regression — on the mean-pooled, L2-normalised sentence embedding of SmolLM2-135M-Instruct (the
default weights of :mod:`gateway.llm.embedded`), served by an
:class:`~gateway.llm.embedded.EmbeddedLlama` of its own with embeddings on (``/embedding``).

The probe (:data:`FEEDBACK_PROBE`) is fitted by ``scripts/train_feedback_probe.py`` on labelled
phrases: the project's held-out overlap sets' (``gateway/testing/overlap.py``: each set's
backchannels are feedback, its interruptions are not; the four written last, blind, kept out
to judge it on) and a corpus of 2 451 written for it alone
(``gateway/testing/feedback_corpus.tsv``: 1 208 feedback, 1 243 requests, by language-model
helpers given topics, kept from the rules and the sets), each read as the reader gets it: the
words after the backchannel's it begins with (:func:`gateway.proxy.overlap.after_backchannels`:
"that's a relief" of "Right, that's a relief."; a phrase of backchannels alone has none). Read
whole, a short request's embedding was its opener's ("Mm-hmm, skip this." read as feedback on
replay). Fitted on the sets alone it read 9 of the thirtieth to thirty-third sets' 24 feedback
phrases above 0.9 (and 1 of their 28 requests); with the corpus's first 851, 17 and 1, and
above 0.95, 16 and 0. Left out in turn (each of 37 sets, each fifth of the corpus), 608 of
1 312 feedback phrases above 0.95, and 45 of 1 503 requests, all but 12 of which hold a veto
word the overlap rules keep from the reader (the 12: requests written in feedback's shapes on
purpose, "Mm, something calmer.", and facts the listener adds, "Oh, that road's flooded.").
Its standardisation is folded into its weights, so a call is one embedding and a dot product.
It only means something on the embeddings it was fitted on: it names the GGUF file (its name and size), and a reader over
another file refuses to load.

Cost: a call grows with the words, on one thread of a 2-core machine (median of 20 warm calls,
2026-12-05): "yeah" 20 ms, "oh that's lovely" 38 ms, "uh huh i know the feeling" 54 ms. The
server (one slot of 256 tokens) adds ~130 MB resident, the model included.

The overlap rules (:func:`gateway.proxy.overlap.feedback_words`) ask the reader only about
words no veto word is in: a veto word decides without it.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from gateway.catalogue import ModelNotAvailable
from gateway.llm.embedded import EmbeddedLlama, LlamaSettings

log = logging.getLogger(__name__)

#: The fitted probe: the GGUF it was fitted on, what on, its weights and bias.
FEEDBACK_PROBE = Path(__file__).with_name("feedback_probe.json")

#: What fits the probe again (named by the messages when it cannot be used).
TRAINER = "scripts/train_feedback_probe.py"


@dataclass(frozen=True)
class FeedbackSettings:
    """How the feedback reader runs."""

    #: Its own llama.cpp server, with embeddings on: one slot (a call at a time, see
    #: :meth:`FeedbackReader.score`), a small context (twelve words are ~15-20 tokens), one
    #: thread (as the semantic signal: two threads beside a Whisper decode miss deadlines).
    llm: LlamaSettings = field(
        default_factory=lambda: LlamaSettings(threads=1, context=256, slots=1, embedding=True)
    )
    #: A call that takes longer is given up (the words are judged without it).
    timeout_ms: int = 250
    #: More words than this are not read (None): feedback is short, and the cost grows with
    #: the words.
    max_words: int = 12


@dataclass(frozen=True)
class Probe:
    """A fitted probe: P(feedback) = sigmoid(weights · embedding + bias)."""

    weights: npt.NDArray[np.float64]
    bias: float
    #: The JSON it was read from (its provenance: model, sets, phrases, date).
    meta: dict[str, Any]

    def __call__(self, embedding: npt.NDArray[np.float64]) -> float:
        return sigmoid(float(self.weights @ embedding) + self.bias)


def sigmoid(z: float) -> float:
    """1 / (1 + e^-z), without overflow."""
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def load_probe(path: Path, model: Path) -> Probe:
    """The probe at ``path``, checked to have been fitted on the embeddings of ``model`` (a
    GGUF file: the same name and size in bytes). Raises :class:`ModelNotAvailable` saying what
    to do when it is missing, broken, or fitted on another model."""
    try:
        data = json.loads(path.read_text())
        weights = np.asarray(data["weights"], dtype=np.float64)
        bias = float(data["bias"])
        fitted_on = (str(data["model"]["file"]), int(data["model"]["bytes"]))
        if weights.ndim != 1 or not weights.size or not np.isfinite(weights).all():
            raise ValueError("its weights are not a vector of numbers")
        if data.get("pooling") != "mean" or data.get("normalised") is not True:
            raise ValueError("it was not fitted on mean-pooled, L2-normalised embeddings")
    except FileNotFoundError as exc:
        raise ModelNotAvailable(f"no feedback probe at {path}: fit one with `{TRAINER}`") from exc
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelNotAvailable(
            f"the feedback probe {path} cannot be read ({exc}): fit it again with `{TRAINER}`"
        ) from exc
    actual = (model.name, model.stat().st_size)
    if fitted_on != actual:
        raise ModelNotAvailable(
            f"the feedback probe {path.name} was fitted on the embeddings of {fitted_on[0]} "
            f"({fitted_on[1]} bytes), not of {actual[0]} ({actual[1]} bytes): fit one for this "
            f"model with `{TRAINER} --model-file {model}`"
        )
    return Probe(weights, bias, data)


def embed(llm: EmbeddedLlama, text: str, timeout_ms: int) -> npt.NDArray[np.float64]:
    """The sentence embedding of ``text`` from ``llm``'s ``/embedding`` (a server started with
    embeddings on: mean-pooled, L2-normalised). Raises OSError (no answer in time, an HTTP
    error) or ValueError/KeyError/IndexError/TypeError (an answer of another shape)."""
    request = urllib.request.Request(
        llm.root_url + "/embedding",
        data=json.dumps({"content": text}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout_ms / 1000) as reply:
        answer: Any = json.loads(reply.read())
    # [{"index": 0, "embedding": [[floats]]}]: the pooled embedding is the one row.
    vector = answer[0]["embedding"]
    if vector and isinstance(vector[0], list):
        vector = vector[0]
    out = np.asarray(vector, dtype=np.float64)
    if out.ndim != 1 or not out.size:
        raise ValueError(f"the embedding has shape {out.shape}")
    return out


class FeedbackReader:
    """P(feedback) for a person's words, on an embedded llama.cpp server of its own.

    :meth:`score` blocks (an HTTP call on loopback): call it in a thread. Thread-safe, one call
    at a time: a call while another is under way is not made (None)."""

    def __init__(
        self, settings: FeedbackSettings | None = None, probe: Path = FEEDBACK_PROBE
    ) -> None:
        self.settings = settings or FeedbackSettings()
        self._llm = EmbeddedLlama(self.settings.llm)  # raises ModelNotAvailable early
        self.probe = load_probe(probe, self._llm.path)
        self._lock = threading.Lock()  # start and close
        self._busy = threading.Lock()  # the call under way
        #: Calls not made because another was under way (for benchmarks and tests).
        self.skipped = 0
        #: Calls that got no answer (a timeout, a server not answering), and whether the last
        #: one did: the log says so once per episode, not once per call.
        self.failures = 0
        self._failing = False
        #: Milliseconds of the last call (0.0: none was made).
        self.last_ms = 0.0

    def start(self) -> FeedbackReader:
        """Load the model (about 0.4 s)."""
        with self._lock:
            self._llm.start()
        return self

    def warm_up(self) -> None:
        """Load the model and embed one phrase (the first call is cold)."""
        self.start()
        self.score(["hello"], timeout_ms=5000)

    def close(self) -> None:
        """Stop the model's server."""
        with self._lock:
            self._llm.close()

    def score(self, words: Sequence[str], *, timeout_ms: int | None = None) -> float | None:
        """P(the ``words`` are a listener's feedback, not a request to stop or change). None:
        no words, more than ``max_words``, another call under way, or no answer within
        ``timeout_ms`` (by default the settings')."""
        said = " ".join(words).split()
        if not said or len(said) > self.settings.max_words:
            self.last_ms = 0.0
            return None
        # A call that would wait for another is not made: the words are judged without it (as
        # the semantic signal's busy rule), rather than late.
        if not self._busy.acquire(blocking=False):
            self.skipped += 1
            self.last_ms = 0.0
            return None
        t = time.perf_counter()
        try:
            if not self._llm.port:
                self.start()
            vector = embed(self._llm, " ".join(said), timeout_ms or self.settings.timeout_ms)
            p = self.probe(vector)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
            # A timeout, or a server that is not answering: one line per episode, no traceback.
            self.failures += 1
            if not self._failing:
                self._failing = True
                log.warning(
                    "the feedback reader did not answer (%s: %s); overlaps are judged "
                    "without it until it does",
                    type(exc).__name__,
                    exc,
                )
            return None
        finally:
            self.last_ms = (time.perf_counter() - t) * 1000
            self._busy.release()
        if self._failing:
            self._failing = False
            log.info("the feedback reader answers again")
        return p


def default_feedback(settings: FeedbackSettings | None = None) -> FeedbackReader | None:
    """The feedback reader when its model and probe are installed (None: the overlap rules go
    without)."""
    try:
        return FeedbackReader(settings)
    except ModelNotAvailable as exc:
        log.warning("no feedback reader: %s", exc)
        return None
