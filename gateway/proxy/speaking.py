"""Speaking: what the agents and the floor say reaches the person, shown and heard.

One :class:`Speaker` per session takes the envelopes the floor delivers to the person (an
agent's utterance, a floor event such as an agent leaving, the floor's own notices), shows each
and queues what is to be heard (bounded), renders it (TTS, SSML, the agent's own audio:
gateway/render/) into the :class:`~gateway.audio.playout.Playout` the transport plays, and
stops at once on a barge-in (queued audio dropped, synthesis and a streaming generation
cancelled). Speech over the agent pauses it first (:meth:`Speaker.pause`: the playout holds
its place) while it is decided whether it resumes or stops.

What it shows goes out as typed events (:mod:`gateway.proxy.events`) to the session's sink, and
so does agent audio starting or stopping to play (``AgentPlaying``: listening's barge-in needs
it). Timings are read on the session's clock (its :class:`~gateway.proxy.services.Services`,
passed in): one clock for a turn's stages.

Streamed replies (an in-process agent generating its words, :mod:`gateway.agents.streaming`):
each sentence is synthesized as soon as the agent completes it and the person is shown the text
so far; the reply's envelope, which follows with the whole utterance under the same id, is shown
but not spoken again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from gateway.agents.streaming import ReplyStream
from gateway.audio import FRAME_MS
from gateway.audio.echo import EchoGuard
from gateway.audio.playout import Playout
from gateway.errors import SpeechError
from gateway.floor.notices import Notice
from gateway.floor.opening import Greetings, is_greeting
from gateway.ofp import DialogEvent, Envelope, Event, EventType, text_event
from gateway.proxy.events import AgentPlaying, AgentSaid, FirstAudio, Sink, Told
from gateway.proxy.floor_events import TOLD, describe
from gateway.proxy.services import Services
from gateway.proxy.settings import SessionSettings
from gateway.proxy.timing import Timing
from gateway.render.reply import render_dialog_event, render_sentence
from gateway.render.tts import TextToSpeech
from gateway.render.voices import VoiceBook

log = logging.getLogger(__name__)

#: Words a second piper speaks at its default pace (for what was heard of a reply not yet all
#: made): 2.7 measured on the benchmark's replies.
WORDS_PER_S = 2.7
#: How far past what has played a read-back is matched (:meth:`Speaker.heard_lately`): the
#: estimate of what was heard is proportional, not aligned, and a word may be a second off.
HEARD_AHEAD_MS = 1000


class Speaker:
    """The speaking part of one session (see the module's docstring).

    ``user_uri``/``manager_uri``: the person's and the floor manager's speaker URIs; ``sink``
    where its events go; ``services`` the session's (its clock, media fetching); ``echo`` the
    guard told each frame played (None: none).
    """

    def __init__(
        self,
        settings: SessionSettings,
        *,
        synthesizer: TextToSpeech,
        voices: VoiceBook,
        user_uri: str,
        manager_uri: str,
        sink: Sink,
        services: Services,
        echo: EchoGuard | None = None,
    ) -> None:
        self.settings = s = settings
        self._synthesizer = synthesizer
        self._voices = voices
        self._user_uri = user_uri
        self._manager_uri = manager_uri
        self._sink = sink
        #: The session's services; its clock is the one the timings are read on (one clock
        #: for a turn's stages), its fetch the one media URLs are fetched with.
        self._services = services
        self.playout = Playout(
            s.out_rate,
            paced=s.paced,
            fill_silence=s.fill_silence,
            lead_ms=s.playout_lead_ms,
            on_state=lambda speaking: sink.emit(AgentPlaying(speaking)),
            # What the agents played, so that their echo in the microphone is refused.
            on_frame=None if echo is None else lambda frame: echo.played(frame, services.now()),
        )
        #: False mutes rendering (``talk`` keeps greetings out of the reply it measures).
        self.speak_replies = True
        #: The person's utterance whose reply is awaited (its timing is filled in here).
        self.awaiting: Timing | None = None
        #: The person went on with the request these answer (the whole request follows): agents'
        #: utterances are dropped unshown and unplayed until it is sent.
        self.drop_answers = False
        #: What an agent said last: the semantic signal reads the person's words after it.
        self.agent_said: str | None = None
        #: Conversants' names as last seen (an agent that left is still named when told).
        self._names: dict[str, str] = {}
        self._replies: asyncio.Queue[DialogEvent | ReplyStream] = asyncio.Queue(s.max_replies)
        #: The ids of replies spoken as they streamed (their envelope is not spoken again).
        self._streamed: deque[str] = deque(maxlen=64)
        self._stream: ReplyStream | None = None
        self._speaking: asyncio.Task[None] | None = None
        #: The replies spoken lately: (event id, the playout's ``queued`` at its first frame).
        self._started: deque[tuple[str, int]] = deque(maxlen=8)
        #: Their text, and the playout's ``queued`` after their last frame once all was made.
        self._texts: dict[str, str] = {}
        self._ends: dict[str, int] = {}
        #: What is heard of agents' greetings: one welcome, not one greeting each
        #: (gateway/floor/opening.py).
        self.greetings = Greetings()

    @property
    def audible(self) -> bool:
        """Whether an agent is being played (or its audio is being made)."""
        return self.playout.speaking or self._speaking is not None

    @property
    def quiet(self) -> bool:
        """Whether nothing is queued, being made or playing."""
        return self._replies.empty() and self._speaking is None and not self.playout.speaking

    def playing_now(self) -> tuple[str | None, int]:
        """The reply being heard (its event id; None: none) and how much of it has played
        (ms; the transport's own buffer is not counted)."""
        consumed = self.playout.consumed
        for event_id, first in reversed(self._started):
            if first <= consumed:
                return event_id, (consumed - first) * FRAME_MS
        return None, 0

    def heard_text(self, event_id: str | None, played_ms: int) -> str:
        """The words of reply ``event_id`` the person heard in its first ``played_ms``: in
        proportion to its audio when all of it was made, else at piper's pace (~2.7 words a
        second at its default length scale). An estimate to the word, not an alignment."""
        said = self._texts.get(event_id or "", "").split()
        first = dict(self._started).get(event_id or "")
        end = self._ends.get(event_id or "")
        if first is not None and end is not None and end > first:
            n = round(len(said) * played_ms / ((end - first) * FRAME_MS))
        else:
            n = round(played_ms / 1000 * WORDS_PER_S)
        return " ".join(said[: max(0, min(n, len(said)))])

    def heard_lately(self) -> str:
        """The words of the reply being heard that the person has heard so far, and
        :data:`HEARD_AHEAD_MS` more (:meth:`heard_text` estimates to the word): what a listener's
        read-back repeats (:func:`gateway.proxy.overlap.read_back`)."""
        reply, played = self.playing_now()
        return self.heard_text(reply, played + HEARD_AHEAD_MS) if reply is not None else ""

    def pause(self) -> None:
        """Speech over the agent: hold its playout where it is (nothing dropped)."""
        self.playout.pause()

    def resume(self) -> None:
        """The speech over the agent was not an interruption: go on where it paused."""
        self.playout.resume()

    def _first_put(self, event_id: str, text: str) -> None:
        if not self._started or self._started[-1][0] != event_id:
            self._started.append((event_id, self.playout.queued))
            kept = {e for e, _ in self._started}
            for old in [e for e in self._texts if e not in kept]:  # bounded like _started
                self._texts.pop(old)
                self._ends.pop(old, None)
        self._texts[event_id] = text

    def stop(self) -> bool:
        """Barge-in: stop the agent being played and drop what is queued; whether anything
        was (the transport is then told to flush its own buffer)."""
        had = self.playout.speaking or self._speaking is not None or not self._replies.empty()
        while not self._replies.empty():
            dropped = self._replies.get_nowait()
            if isinstance(dropped, ReplyStream):
                dropped.cancel()  # its generation stops too; nothing of it was heard
        if self._stream is not None:
            # Its agent remembers what the person heard of it, not all it generated.
            reply, played = self.playing_now()
            stream = self._stream
            stream.cancel(self.heard_text(reply, played) if reply == stream.event_id else "")
        if self._speaking is not None:
            self._speaking.cancel()
        self.playout.flush()
        return had

    # ------------------------------------------------------------------ what reaches the person
    async def heard(self, envelope: Envelope) -> None:
        """An envelope the floor delivered to the person."""
        names = {
            c.identification.speaker_uri: c.identification.display_name
            for c in envelope.conversation.conversants or []
        }
        self._names.update(names)
        while len(self._names) > 256:  # bounded: agents come and go in a long session
            self._names.pop(next(iter(self._names)))
        for ev in envelope.events:
            if ev.event_type in TOLD:
                await self._tell(envelope, ev)
                continue
            de = ev.dialog_event
            if ev.event_type is not EventType.UTTERANCE or de is None:
                continue
            if self.drop_answers:
                log.info("dropped %s unplayed: the person went on with its request", de.id)
                continue
            if self.awaiting is not None and self.awaiting.reply is None:
                self.awaiting.reply = self._services.now()
            speaker = names.get(de.speaker_uri, de.speaker_uri)
            self.agent_said = de.text() or self.agent_said
            await self._sink.publish(
                AgentSaid(de.id, de.speaker_uri, speaker, de.text(), ev.is_private, dialog_event=de)
            )
            if de.id in self._streamed:
                continue  # spoken as it streamed
            if is_greeting(envelope):
                instead = self._greeted(envelope, de.speaker_uri, speaker)
                if instead is not Greetings.OWN:
                    if instead is not None:
                        await self.announce(*instead)
                    continue
            if self.speak_replies:
                try:
                    self._replies.put_nowait(de)
                except asyncio.QueueFull:
                    log.warning("reply queue full; not speaking %s", de.id)

    def _greeted(self, envelope: Envelope, speaker_uri: str, name: str) -> tuple[str, str] | None:
        """What the person hears of an agent's greeting (gateway/floor/opening.py)."""
        conversants = envelope.conversation.conversants or []
        synopsis = next(
            (
                c.identification.synopsis
                for c in conversants
                if c.identification.speaker_uri == speaker_uri
            ),
            "",
        )
        others = sum(
            1
            for c in conversants
            if c.identification.speaker_uri not in (speaker_uri, self._user_uri, self._manager_uri)
        )
        return self.greetings.greeted(name, synopsis, others_here=others)

    async def announce(self, text: str, reason: str) -> None:
        """Something the floor says of its own (the opening's welcome): shown and heard."""
        await self._sink.publish(Told(text, reason, agent=self._manager_uri))
        self._say_as_floor(text)

    async def _tell(self, envelope: Envelope, event: Event) -> None:
        """A floor event (an agent left, yielded, removed another…): shown with its reason and,
        with voice on, spoken briefly. The floor manager's own (a timeout's uninvite) come as
        notices from the host instead."""
        sender = envelope.sender.speaker_uri
        if sender == self._manager_uri:
            return

        def name_of(uri: str | None) -> str:
            return "you" if uri == self._user_uri else self._names.get(uri or "", "someone")

        text = describe(event, self._names.get(sender, "An agent"), name_of)
        if text is None:
            return
        await self._sink.publish(Told(text, event.reason or "", agent=sender))
        self._say_as_floor(text)

    async def noticed(self, notice: Notice) -> None:
        """A notice from the floor's host (a timeout, an error, "One moment…")."""
        await self._sink.publish(Told(notice.text, notice.reason, agent=notice.agent))
        if notice.reason == "@wait":  # "One moment…": heard too
            self._say_as_floor(notice.text)

    def _say_as_floor(self, text: str) -> None:
        """With voice on, ``text`` spoken briefly in the floor manager's name."""
        if self.speak_replies:
            spoken = text_event(self._manager_uri, text)
            with contextlib.suppress(asyncio.QueueFull):
                self._replies.put_nowait(spoken)

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        """An in-process agent starts a reply that streams: it is spoken in its turn among
        the replies, each sentence as it comes (None: not speaking, or too many replies)."""
        if not self.speak_replies or self.drop_answers:
            return None
        stream = ReplyStream(event_id, speaker_uri, speaker)
        try:
            self._replies.put_nowait(stream)
        except asyncio.QueueFull:
            log.warning("reply queue full; not streaming %s", event_id)
            return None
        self._streamed.append(event_id)
        return stream

    # ------------------------------------------------------------------ rendering
    async def run(self) -> None:
        """Speak each queued reply in turn (the session's task)."""
        while True:
            de = await self._replies.get()
            if isinstance(de, ReplyStream):
                self._stream = de
                speech = self._speak_stream(de)
            else:
                speech = self._speak(de)
            self._speaking = asyncio.get_running_loop().create_task(speech)
            try:
                await self._speaking
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():
                    raise
            except SpeechError as exc:  # a speech service down or gone mid-reply
                log.warning("could not speak %s: %s", de.id, exc)
                service = exc.service  # which one, when it is a remote service
                why = f" ({service} is not answering)" if service else ""
                await self._sink.publish(
                    Told(
                        f"Speech synthesis is unavailable right now{why}; the reply is shown "
                        "as text.",
                        "@error",
                    )
                )
            except Exception:  # the task must not die: one reply unspoken, the next ones heard
                log.exception("could not speak %s", de.id)
            finally:
                self._speaking = None
                if isinstance(de, ReplyStream):
                    de.cancel()  # spoken, failed or cut off: nothing more is listened to
                    self._stream = None

    def _first_audio(self, timing: Timing | None) -> None:
        if timing is not None and timing.first_audio is None:
            timing.first_audio = self._services.now()
            self.awaiting = None
            self._sink.emit(FirstAudio(timing))

    async def _speak(self, de: DialogEvent) -> None:
        voice = self._voices.settings_for(de.speaker_uri)
        # The floor's own words ("One moment…", an agent left) are not the answer being timed.
        timing = None if de.speaker_uri == self._manager_uri else self.awaiting
        # Each sentence is due when what is queued before it has played (earliest first).
        synth = self._synthesizer.paced_by(lambda: self.playout.queued_ms / 1000)
        async for chunk in render_dialog_event(
            de, synth, voice, self._services.fetch, rate=self.settings.out_rate
        ):
            self._first_audio(timing)
            self._first_put(de.id, de.text())
            await self.playout.put(chunk)
            await self._until_needed()
        await self.playout.finish()
        self._ends[de.id] = self.playout.queued

    async def _speak_stream(self, stream: ReplyStream) -> None:
        """Speak a streamed reply sentence by sentence, showing the text so far."""
        voice = self._voices.settings_for(stream.speaker_uri)
        synth = self._synthesizer.paced_by(lambda: self.playout.queued_ms / 1000)
        first = True
        async for sentence in stream.sentences():
            timing = self.awaiting
            if timing is not None and timing.reply is None:
                timing.reply = self._services.now()  # the agent's first sentence is complete
            await self._sink.publish(
                AgentSaid(stream.event_id, stream.speaker_uri, stream.speaker, stream.text)
            )
            rate = self.settings.out_rate
            async for chunk in render_sentence(sentence, synth, voice, rate=rate, first=first):
                self._first_audio(timing)
                self._first_put(stream.event_id, stream.text)
                await self.playout.put(chunk)
                await self._until_needed()
            first = False
        await self.playout.finish()
        self._ends[stream.event_id] = self.playout.queued

    async def _until_needed(self) -> None:
        """Hold back the request for the next sentence until the audio queued before it is
        nearly played (``tts_lookahead_ms``), so a long reply is not synthesized ahead of need
        only to be dropped by a barge-in."""
        if not self.settings.paced:
            return
        while self.playout.queued_ms > self.settings.tts_lookahead_ms:
            await asyncio.sleep(FRAME_MS / 1000)

    def close(self) -> None:
        """Stop speaking and close the playout."""
        if self._speaking is not None:
            self._speaking.cancel()
        self.playout.close()
