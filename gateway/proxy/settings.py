"""How one voice session behaves (:class:`SessionSettings`): one place for each default."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gateway.proxy.overlap import OverlapSettings
from gateway.proxy.turn_rule import TurnRule
from gateway.proxy.utterance import UtteranceParts
from gateway.voice.endpoint import EndpointSettings


@dataclass(frozen=True)
class SessionSettings:
    """How one voice session behaves.

    Every silence that ends a turn is the turn rule's (``turn_rule``): the endpointer's own
    ``end_silence_ms`` is set from it, so ``endpoint`` holds only how speech is found.
    """

    endpoint: EndpointSettings = field(default_factory=EndpointSettings)
    parts: UtteranceParts = field(default_factory=UtteranceParts)
    #: Sample rate of the audio handed to the transport.
    out_rate: int = 48_000
    #: Release output in real time (False: as fast as consumed, for files).
    paced: bool = True
    #: Keep the stream going while idle (a WebRTC track must not stall): a 200 ms tail of silent
    #: frames after each reply, then one every 400 ms, the slots between skipped time.
    fill_silence: bool = False
    #: Release output this far ahead of real time, for transports that buffer at the far end.
    playout_lead_ms: int = 0
    #: End an utterance at a pause when the speculative transcript looks finished.
    early_endpoint: bool = True
    #: How the end-of-turn signals at a pause become the silence waited before the turn ends.
    #: Chosen from ``scripts/bench_turns.py``'s trade-off (docs/performance.md): a finished-looking
    #: transcript ends the turn at 200 ms when the prosody says "finished" (P >= 0.6) and waits
    #: 1.5 s when it says "not finished" (P <= 0.5; between, in proportion); words that do not
    #: read as finished wait 900 ms; a one-word answer with finished prosody 500 ms. No turn
    #: waits more than ``max_wait_ms`` (2 s). ``TurnRule()`` is the transcript-only rule
    #: (200 ms / 700 ms) of before, which cut off 34 of 42 paused requests.
    #: The semantic signal (``gateway.voice.semantic``) settles the words when they are clear:
    #: P(finished) <= 0.005 waits at least 1.5 s whatever the punctuation and the voice say;
    #: P >= 0.01 takes a transcript as finished words even without its final mark or ending on
    #: "at", "on"… — the voice still sets the wait, as for any finished sentence. Chosen on the
    #: tuning set of ``bench_turns --set tuning --sweep-semantic`` (a plateau: low 0.002–0.02,
    #: high 0.01–0.03, any wait 1.2–2 s; these values sit in its middle), reported on the
    #: held-out set (docs/turn-taking.md). Words that sure, with a final mark and a voice that
    #: sounds finished, end the turn after 192 ms of silence — six VAD chunks — where 200 ms
    #: rounds up to 224: replayed on the tuning, held-out and older sets, every value from 64 to
    #: 200 ms cut the same paused requests and no complete one (tuning median wait 224 -> 192
    #: ms; 129 at 128). Not lower: the sets' pauses are all 350 ms or more, so they cannot show
    #: what a shorter wait does to a person's own brief hesitation after words that read and
    #: sound finished. One person over WebRTC answered at 362-372 ms median with 200. Words it
    #: is unsure of (between the two) end the turn only with a very sure voice (0.9), else
    #: they wait as unfinished ones (900 ms): added after the held-out pipeline cut "Text Maria
    #: that I am running | ten minutes late" (0.0072, voice 0.72) at every pause, and reported
    #: on the ``fresh`` set written before it was tried (docs/turn-taking.md). Sure from 0.01,
    #: not 0.02 (the low edge of the tuning plateau), since 2026-11-26: replayed on the five
    #: seen sets with pauses up to 1.2 s, no cut-off moved, and four correctly heard or harmlessly
    #: misheard complete requests that scored 0.011-0.020 ("What is the score?", "Play the next
    #: episode.") went from 928 to 192 ms; "Text Maria that I am running." (0.0072) stays unsure.
    turn_rule: TurnRule = field(
        default_factory=lambda: TurnRule(
            signals=("prosody",),
            confident=0.6,
            doubtful=0.5,
            doubt_ms=1500,
            unfinished_ms=900,
            one_word_ms=500,
            max_wait_ms=2000,
            semantic_low=0.005,
            semantic_high=0.01,
            semantic_pause_ms=192,
            semantic_wait_ms=1500,
            semantic_unsure_ms=900,
        )
    )
    #: Voiced audio that interrupts an agent being played (0 disables barge-in): it pauses the
    #: agent, and ``overlap`` decides whether it resumes or stops.
    barge_in_ms: int = 96
    #: How speech over a paused agent is decided (a backchannel, a noise, an interruption).
    overlap: OverlapSettings = field(default_factory=OverlapSettings)
    #: Speech that begins within this long of the last word of a turn just ended goes on with
    #: that turn (0: never): its answer, not yet heard or only its first words (the end silence,
    #: the decode and the reply take most of this), is dropped unplayed, and the whole request
    #: is transcribed as one utterance that takes the first one's place on the page. 1 s: the
    #: issue's "resumes within about a second"; a person's pause inside a sentence in the turn
    #: benchmarks' sets is 350 ms-1.2 s, and a new request rarely follows its answer that fast.
    continuation_ms: int = 1000
    #: Refuse a barge-in whose audio is the agent's own voice played back into the microphone
    #: (a client without echo cancellation): the microphone is correlated with what was played.
    echo_guard: bool = True
    #: Partial transcripts while speaking, at most this often (0 disables them).
    partial_interval_ms: int = 900
    #: Input audio queued before the oldest is dropped (a stalled session must not grow).
    max_input_ms: int = 2_000
    #: Agent utterances waiting to be spoken.
    max_replies: int = 16
    #: A reply's next sentence is asked for once less audio than this is left to play before
    #: it. The synthesizer serves the earliest deadline first, so asking early does not delay
    #: anyone's first sentence; it bounds how much synthesized audio a barge-in throws away.
    tts_lookahead_ms: int = 1500
    #: Wake word (``hey_jarvis``, ``okay_nabu``, ``alexa``, ``hey_mycroft``, ``phrase:TEXT``) or
    #: ``off``. With one, audio reaches nothing but the detector until the word is heard.
    wake: str = "off"
    #: After a reply has played, how long the person may answer without the wake word.
    follow_up_ms: int = 8_000
    #: After the wake word, how long to wait for speech to begin before going back to sleep.
    wake_listen_ms: int = 5_000
    #: In wake mode, an utterance that is only one of these stops playback and is not sent.
    stop_words: tuple[str, ...] = ("stop", "cancel", "stop it", "cancel that", "never mind")


def without_feedback(s: SessionSettings) -> SessionSettings:
    """``s`` for a session with no feedback reader (its model not installed, or turned off):
    its overlaps ask for none (``OverlapSettings.feedback_p`` None), and the rules alone read
    their words."""
    if s.overlap.feedback_p is None:
        return s
    return replace(s, overlap=replace(s.overlap, feedback_p=None))


def read_once(s: SessionSettings) -> SessionSettings:
    """``s`` for a session with no second recogniser (none named, not installed, or speech on
    the network): nothing is read again (``OverlapSettings.second_sure`` None), so a stop word
    decides as soon as it is heard instead of waiting for the person's pause to be read again."""
    if s.overlap.second_sure is None:
        return s
    return replace(s, overlap=replace(s.overlap, second_sure=None))
