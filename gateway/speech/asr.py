"""Speech to text over Wyoming: :class:`RemoteTranscriber`, the session's recogniser when
``--stt wyoming://host:port`` is given.

One request is one connection (the stock ``wyoming-faster-whisper`` takes one utterance per
connection): ``transcribe`` (with this project's ``ofp`` request fields), ``audio-start``, the
clip in chunks, ``audio-stop``; the answer is the ``transcript`` event. Events before it
(``transcript-start``/``-chunk``/``-stop``, streamed partials) are skipped.

What comes back depends on the server:

- this project's ``ofp-gateway speech serve`` adds an ``ofp`` object to the transcript: words
  with timings and probabilities, confidence, alternates, the window, decode and queue times.
  The :class:`~gateway.voice.stt.Transcript` is then the same as in process.
- a stock server (``wyoming-faster-whisper``) sends text and language only. The transcript is
  then ``detailed=False``: no words, and a confidence of 0 that the dialog event and the page
  leave out (``gateway.proxy.utterance``) rather than show as measured. Partial transcripts
  are not asked of it (each would be a full 30 s-window decode on a server that does not say
  when it is busy): :meth:`transcribe_partial` skips them as a busy in-process model does.
  A server that answers a partial with text only gives a :class:`~gateway.voice.stt.Partial`
  whose ``avg_logprob`` is None; this project's sends it in the transcript's ``ofp``.

A caller that stops waiting (a speculative decode overtaken by more speech) closes the
connection; this project's server then abandons the decode at its next stage.

A request whose connection breaks (cut, the server killed or hung, garbage on the wire) keeps
its audio: once the link's probe finds the service answering again (within
:attr:`~gateway.speech.link.LinkSettings.retry_s`) it is sent once more on a new connection, so
the person's turn is not lost to a connection that dropped.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import numpy as np
from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop

from gateway.audio import SAMPLE_RATE, float_to_pcm16
from gateway.errors import SpeechError
from gateway.speech.link import (
    NOT_WYOMING,
    ServiceBusy,
    ServiceLink,
    SpeechServiceDown,
    not_wyoming,
    read_until,
)
from gateway.voice.stt import (
    Partial,
    TranscriberBusy,
    Transcript,
    Word,
    check_within,
)
from gateway.voice.words import Reading

#: Samples per audio chunk sent (Wyoming's own clients send 1024).
CHUNK_SAMPLES = 1024 * 4
#: The language asked of a stock server (tiny.en is English; a multilingual model detects it
#: only when no language is given, which is what ``None`` means).
_LANGUAGE = "en"


def transcript_from_event(data: dict[str, Any], audio_s: float) -> Transcript:
    """A :class:`Transcript` from a ``transcript`` event's data: detailed when this project's
    ``ofp`` fields are there, text only (``detailed=False``) otherwise."""
    text = str(data.get("text") or "").strip()
    language = str(data.get("language") or _LANGUAGE)
    extra = data.get("ofp")
    if not isinstance(extra, dict):
        return Transcript(
            text=text,
            language=language,
            words=(),
            confidence=0.0,
            avg_logprob=0.0,
            alternates=(),
            window="unknown",
            fell_back=False,
            audio_s=audio_s,
            decode_s=0.0,
            detailed=False,
        )
    words = tuple(
        Word(str(w["word"]), float(w["start"]), float(w["end"]), float(w["probability"]))
        for w in extra.get("words", [])
    )
    return Transcript(
        text=text,
        language=language,
        words=words,
        confidence=float(extra.get("confidence", 0.0)),
        avg_logprob=float(extra.get("avg_logprob", 0.0)),
        alternates=tuple(str(a) for a in extra.get("alternates", [])),
        window=str(extra.get("window", "unknown")),
        fell_back=bool(extra.get("fell_back", False)),
        audio_s=audio_s,
        decode_s=float(extra.get("decode_s", 0.0)),
        queued_s=float(extra.get("queued_s", 0.0)),
        beam=int(extra.get("beam", 0)),
        nearest=_reading(extra.get("nearest")),
    )


def _reading(value: Any) -> Reading | None:
    """A partial's ``ofp.nearest`` (``{"text", "gap"}``), or None when it is absent or
    malformed (lenient: a reading is a hint, and a wrong one must not fail the decode)."""
    if not isinstance(value, dict):
        return None
    text, gap = value.get("text"), value.get("gap")
    if not isinstance(text, str) or isinstance(gap, bool) or not isinstance(gap, int | float):
        return None
    return Reading(text, float(gap))


def transcript_extras(t: Transcript) -> dict[str, Any]:
    """The ``ofp`` fields this project's server adds to a ``transcript`` event."""
    return {
        "words": [
            {
                "word": w.word,
                "start": round(w.start, 3),
                "end": round(w.end, 3),
                "probability": round(w.probability, 4),
            }
            for w in t.words
        ],
        "confidence": round(t.confidence, 4),
        "avg_logprob": round(t.avg_logprob, 4),
        "alternates": list(t.alternates),
        "window": t.window,
        "fell_back": t.fell_back,
        "decode_s": round(t.decode_s, 4),
        "queued_s": round(t.queued_s, 4),
        "beam": t.beam,
    }


class RemoteTranscriber:
    """Speech recognition by a Wyoming server, behind the in-process
    :class:`~gateway.voice.stt.Transcriber`'s interface (see the module docstring).

    Raises :class:`~gateway.voice.stt.TranscriberBusy` when every connection is in use and
    enough requests wait; :class:`~gateway.speech.link.SpeechServiceDown` when the server
    cannot be reached, ends the stream before the transcript, or times out.
    """

    def __init__(self, link: ServiceLink) -> None:
        self.link = link
        self.partials_skipped = 0
        #: Requests whose caller stopped waiting (the connection was closed under the server).
        self.abandoned = 0
        #: Not known over Wyoming (the server retries on its own); kept for /metrics.
        self.full_window_retries = 0
        #: Requests sent again after their connection broke (the audio was still held).
        self.resent = 0
        self._hop_s = 0.0

    @property
    def pending(self) -> int:
        """Requests in flight or waiting for a connection."""
        return self.link.in_flight

    @property
    def queue_wait_s(self) -> float:
        """What the server last said the final transcripts waited for its model (0 for a stock
        server, which does not say)."""
        return self._hop_s

    @property
    def detailed(self) -> bool:
        """Whether the server gives words, timings and confidences (this project's does)."""
        return bool(self.link.extras.get("words"))

    async def warm_up(self) -> None:
        """Ask the server what it serves: fails (``SpeechServiceDown``) when it is not there."""
        await self.link.describe()

    async def transcribe(
        self, audio: np.ndarray, *, speech_end_s: float | None = None, prompt: str | None = None
    ) -> Transcript:
        """Transcribe a clip of at most 30 s (int16, or float32 in [-1, 1])."""
        extra: dict[str, Any] = {}
        if speech_end_s is not None:
            extra["speech_end_s"] = round(float(speech_end_s), 3)
        if prompt:
            extra["prompt"] = prompt
        try:
            transcript = await self._request(audio, extra)
        except SpeechServiceDown:
            # The clip is still here: once more on the next connection, when the service
            # answers a probe again; still down after retry_s, the caller tells the person.
            if not await self.link.wait_up():
                raise
            self.resent += 1
            transcript = await self._request(audio, extra)
        if transcript.detailed:
            self._hop_s = transcript.queued_s
        return transcript

    async def transcribe_partial(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        beam: int = 1,
        within: tuple[str, ...] = (),
    ) -> Partial:
        """The words so far, from a server that offers partials and has a free connection;
        otherwise skipped (:class:`TranscriberBusy`), as a busy in-process model does.
        ``prompt`` goes with the request as for :meth:`transcribe`, ``beam`` (when not 1)
        as ``ofp.beam`` and ``within`` as ``ofp.within`` (a stock server decodes as it does).
        The decode's ``avg_logprob`` and nearest reading come with the words when the server
        sends them (``ofp.avg_logprob``, ``ofp.nearest``: this project's server); None from a
        transcript of text only."""
        within = check_within(tuple(within))
        if not self.link.extras.get("partials") or self.link.down or self.link.in_flight:
            self.partials_skipped += 1
            raise TranscriberBusy("partial transcript skipped: the speech service is busy")
        try:
            extra: dict[str, Any] = {"partial": True}
            if prompt:
                extra["prompt"] = prompt
            if beam != 1:
                extra["beam"] = beam
            if within:
                extra["within"] = list(within)
            t = await self._request(audio, extra)
            return Partial(t.text, t.avg_logprob if t.detailed else None, t.nearest)
        except SpeechError:
            self.partials_skipped += 1
            raise TranscriberBusy("partial transcript skipped") from None

    async def _request(self, audio: np.ndarray, extra: dict[str, Any]) -> Transcript:
        pcm = audio if audio.dtype == np.int16 else float_to_pcm16(audio.astype(np.float32))
        pcm = pcm.reshape(-1)
        audio_s = len(pcm) / SAMPLE_RATE
        if audio_s > 30.0:
            raise ValueError(f"clip is {audio_s:.1f} s; Whisper takes at most 30 s")
        link = self.link
        started = time.monotonic()
        try:
            async with link.connection() as conn:
                deadline = time.monotonic() + link.settings.timeout_s
                request = Transcribe(language=_LANGUAGE).event()
                if extra:
                    request.data["ofp"] = extra
                try:
                    await conn.send(request)
                    await conn.send(AudioStart(SAMPLE_RATE, 2, 1).event())
                    for at in range(0, len(pcm), CHUNK_SAMPLES):
                        chunk = pcm[at : at + CHUNK_SAMPLES].tobytes()
                        await conn.send(AudioChunk(SAMPLE_RATE, 2, 1, chunk).event())
                    await conn.send(AudioStop().event())
                except OSError as exc:
                    raise link.broke(f"connection failed while sending audio: {exc}") from None
                event, _ = await read_until(link, conn, ("transcript",), deadline=deadline)
        except ServiceBusy as exc:
            raise TranscriberBusy(str(exc)) from None
        except asyncio.CancelledError:
            self.abandoned += 1  # the connection is closed under the server: it stops too
            raise
        try:
            transcript = transcript_from_event(event.data, audio_s)
        except NOT_WYOMING as exc:  # a transcript whose fields are not what they should be
            raise link.broke(not_wyoming(exc)) from None
        link.worked()
        decode_s = transcript.decode_s if transcript.detailed else time.monotonic() - started
        return replace(transcript, decode_s=decode_s)
