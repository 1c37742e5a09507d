"""``talk --wav``: the voice pipeline on a recording.

The recording is decoded to 16 kHz and fed to a :class:`VoiceSession` in 20 ms frames — paced in
real time by default, so every latency is what a person would experience, or as fast as possible
with ``--fast``. The agents' spoken replies are collected from the session's playout and written
to ``--out``. Greetings on joining are shown but not spoken, so the reply audio and the timings
are those of the answer to what was said.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from gateway.agents.directory import AgentDirectory
from gateway.audio import FRAME_SAMPLES, SAMPLE_RATE, write_wav
from gateway.errors import ConfigError
from gateway.floor.notices import Notice
from gateway.ofp import Envelope
from gateway.options import given
from gateway.proxy.events import ProxyEvent, Told
from gateway.proxy.models import VoiceModels
from gateway.proxy.session import VoiceSession
from gateway.proxy.settings import SessionSettings
from gateway.render.decode import AudioDecodeError, decode_audio
from gateway.talk.settings import TalkSettings
from gateway.talk.text import DirectoryFactory, LineSink, Talk, TalkResult

if TYPE_CHECKING:
    from gateway.agents.streaming import ReplyStream
    from gateway.floor import Floor
    from gateway.floor.outlet import PersonOutlet
    from gateway.records.base import Recorder

#: Reply audio rate: Piper's own, so nothing is resampled twice.
OUT_RATE = 22_050
#: Silence fed after the recording so the last utterance ends as it would live: longer than the
#: longest wait for the end of a turn (``TurnRule.max_wait_ms``, 2 s).
TAIL_S = 2.5


class TalkInputError(ConfigError):
    """``--wav`` or ``--out`` cannot be used; the message says which and why."""


class Overheard:
    """The person's outlet (:class:`gateway.floor.outlet.PersonOutlet`) of ``talk --wav``: what
    the floor delivers goes both to ``talk`` (its transcript of the conversation) and to the
    session's outlet (shown and spoken); the person's own envelopes to ``talk`` (``--json``);
    the rest to the session."""

    def __init__(self, talk: Talk, session: PersonOutlet) -> None:
        self._talk = talk
        self._session = session

    async def delivered(self, envelope: Envelope) -> None:
        self._talk.heard(envelope)
        await self._session.delivered(envelope)

    async def notified(self, notice: Notice) -> None:
        await self._session.notified(notice)

    def floor_changed(self, floor: Floor) -> None:
        self._session.floor_changed(floor)

    def person_said(self, envelope: Envelope) -> None:
        self._talk.person_said(envelope)

    def open_stream(self, event_id: str, speaker_uri: str, speaker: str) -> ReplyStream | None:
        return self._session.open_stream(event_id, speaker_uri, speaker)


def overhear(talk: Talk, session: VoiceSession) -> None:
    """What the floor delivers to the person goes both to ``talk`` and to ``session``, which
    attached its own outlet to ``talk``'s conversation (:class:`Overheard`)."""
    spoken = session.conversation.outlet
    assert spoken is not None, "the session attaches its outlet when it is made"
    talk.conv.attach(Overheard(talk, spoken))


async def feed_audio(session: VoiceSession, pcm: np.ndarray, *, paced: bool) -> None:
    """Feed ``pcm`` (16 kHz int16) in 20 ms frames, then :data:`TAIL_S` of silence."""
    pcm = np.concatenate([pcm, np.zeros(int(TAIL_S * SAMPLE_RATE), dtype=np.int16)])
    start = time.monotonic()
    for i, at in enumerate(range(0, len(pcm), FRAME_SAMPLES)):
        if paced:
            delay = start + i * FRAME_SAMPLES / SAMPLE_RATE - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
        else:
            await asyncio.sleep(0)  # let the session keep up with the queue
        session.feed(pcm[at : at + FRAME_SAMPLES])


async def talk_wav(
    pcm: np.ndarray,
    agents: list[str],
    *,
    directory: AgentDirectory,
    models: VoiceModels,
    recorder: Recorder | None = None,
    paced: bool = SessionSettings.paced,
    timeout: float = TalkSettings.timeout_s,
    on_line: LineSink | None = None,
    settings: SessionSettings | None = None,
    convener: str | None = None,
    max_agent_exchanges: int | None = None,
    slow_notice_s: float | None = None,
) -> tuple[TalkResult, np.ndarray]:
    """Say ``pcm`` to the agents; returns what happened and the reply audio at :data:`OUT_RATE`."""
    talk = Talk(
        directory,
        recorder,
        on_line,
        max_agent_exchanges=max_agent_exchanges,
        slow_notice_s=slow_notice_s,
    )
    out: list[np.ndarray] = []
    session: VoiceSession | None = None
    collector: asyncio.Task[None] | None = None
    try:
        await talk.start(agents, "(spoken)", timeout, convener)
        settings = replace(settings or SessionSettings(), out_rate=OUT_RATE, paced=paced)

        def told(event: ProxyEvent) -> None:
            """What the session tells the person (a speech service not answering, …) is a
            line of talk's, as the page shows it; an @error means a turn went unanswered."""
            if isinstance(event, Told):
                talk.noticed(Notice(event.text, event.reason, event.agent or ""))
                if event.reason == "@error":
                    talk.result.completed = False

        session = VoiceSession(
            talk.conv,
            models,
            on_event=told,
            fetch=directory.client.fetch,
            settings=settings,
            recorder=recorder,
        )
        overhear(talk, session)

        async def collect() -> None:
            async for frame in session.playout:
                out.append(frame)

        collector = asyncio.get_running_loop().create_task(collect())
        await feed_audio(session, pcm, paced=paced)
        # Awaited first: a Told during the wait sets completed, and `x &= await …` would
        # write back the value read before the wait.
        quiet = await session.wait_quiet(timeout)
        talk.result.completed &= quiet
        talk.result.transcript = " ".join(session.transcripts)
        for t in session.transcripts:
            talk.result.lines.insert(0, (talk.user.display_name, t))
        talk.result.utterances = [t.as_ms() for t in session.timings]
        talk.result.timings_ms = talk.result.utterances[0] if talk.result.utterances else {}
    finally:
        if session is not None:
            await session.close()
        if collector is not None:
            collector.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await collector
        result = await talk.finish()
    audio = np.concatenate(out) if out else np.zeros(0, dtype=np.int16)
    return result, audio


def run_talk_wav(
    settings: TalkSettings,
    *,
    directory_factory: DirectoryFactory,
    recorder: Recorder | None,
    on_line: LineSink | None,
) -> TalkResult:
    """``talk --wav`` from the command line: blocking."""
    s = settings
    path = Path(s.wav or "")
    try:
        pcm = decode_audio(path.read_bytes(), SAMPLE_RATE)
    except OSError as exc:
        raise TalkInputError(f"cannot read {path}: {exc.strerror}") from None
    except AudioDecodeError as exc:
        raise TalkInputError(f"{path} is not a recording the gateway can read ({exc})") from None
    # Checked before the conversation, not found out after it: the reply would be lost.
    if s.out and not Path(s.out).resolve().parent.is_dir():
        raise TalkInputError(f"cannot write {s.out}: its folder does not exist")

    async def main() -> TalkResult:
        if not s.json:
            print("loading speech models…", file=sys.stderr, flush=True)
        from gateway.speech.services import SpeechServices

        services = SpeechServices(
            stt_service=s.stt_service, tts_service=s.tts_service, wake_service=s.wake_service
        )
        if s.speech_timeout_s is not None:
            link = replace(services.link, timeout_s=s.speech_timeout_s)
            services = replace(services, link=link)
        models = VoiceModels(
            services=services, second_stt_model=s.second_stt_model, feedback=s.feedback_reader
        )
        await models.warm_up()
        down = [f"{link.kind} service at {link.address}" for link in models.services if link.down]
        if down:  # said now, not found out as a reply that never comes
            raise TalkInputError(f"cannot reach the {', '.join(down)}: is its server running?")
        directory = directory_factory()
        try:
            result, audio = await talk_wav(
                pcm,
                list(s.agents),
                directory=directory,
                models=models,
                recorder=recorder,
                paced=not s.fast,
                timeout=s.timeout_s,
                on_line=on_line,
                settings=SessionSettings(**given(wake=s.wake)),
                convener=s.convener,
                max_agent_exchanges=s.max_agent_exchanges,
                slow_notice_s=s.slow_notice_s,
            )
        finally:
            await directory.aclose()
        if s.out:
            try:
                write_wav(s.out, audio, OUT_RATE)
            except OSError as exc:
                raise TalkInputError(f"cannot write {s.out}: {exc.strerror or exc}") from None
            result.reply_audio = str(Path(s.out).resolve())
        if not s.json:
            print(f"heard: {result.transcript!r}", file=sys.stderr)
            t = result.timings_ms or {}
            if t.get("total") is not None:
                print(f"end of speech → first reply audio: {t['total']:.0f} ms", file=sys.stderr)
        return result

    return asyncio.run(main())
