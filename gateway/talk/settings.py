"""What one ``talk`` run is told: :class:`TalkSettings`."""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.llm.settings import LlmSettings
from gateway.voice.cli import SECOND_STT_MODEL


@dataclass(frozen=True)
class TalkSettings:
    """One conversation from the terminal; built by ``talk``'s ``from_args``
    (:mod:`gateway.talk.cli`). What the person says: ``texts`` in order, or ``wav``, or (neither)
    one utterance per line read from the terminal."""

    #: What the person types, one utterance each, in order.
    texts: tuple[str, ...] = ()
    #: A recording of what the person says, heard through the voice pipeline.
    wav: str | None = None
    #: The agents invited: URLs or ``builtin:NAME``.
    agents: tuple[str, ...] = ("builtin:parrot",)
    #: The agent made convener (None: the floor is the minimal convener).
    convener: str | None = None
    #: Agents answering agents in one person turn (None: ``Limits.max_agent_exchanges``).
    max_agent_exchanges: int | None = None
    #: Seconds the person waits before "One moment…" (None: ``Limits.slow_notice_s``).
    slow_notice_s: float | None = None
    #: Print one JSON object with every envelope instead of the lines of the conversation.
    json: bool = False
    #: Seconds to wait for the greetings, and again for the replies.
    timeout_s: float = 30.0
    #: With ``wav``: where the reply audio is written.
    out: str | None = None
    #: With ``wav``: feed the recording as fast as it is taken, not in real time.
    fast: bool = False
    #: With ``wav``: a wake word that must be heard first, or ``off``; None leaves the
    #: session's own setting (``SessionSettings.wake``).
    wake: str | None = None
    #: Keep a record of the conversation (in ``data``, else where the environment says).
    record: bool = True
    data: str | None = None
    #: Loopback/private networks agents may be reached at (besides ``OFP_GATEWAY_ALLOW``).
    allow_addresses: tuple[str, ...] = ()
    #: Seconds an agent has to answer (``--agent-timeout``); None: ``HttpSettings.timeout``.
    agent_timeout_s: float | None = None
    #: With ``wav``: speech services on Wyoming servers (``wyoming://HOST:PORT``; None: in
    #: process), as ``serve``'s ``--stt``/``--tts``/``--wake-service``.
    stt_service: str | None = None
    tts_service: str | None = None
    wake_service: str | None = None
    #: With ``--stt``/``--tts``: the most one request may take (``--speech-timeout``); None:
    #: ``LinkSettings.timeout_s``.
    speech_timeout_s: float | None = None
    #: With ``wav``: the second speech model that reads again speech over the reply whose words
    #: would stop it (``serve --stt-second-model``; "": none). In process and English only.
    second_stt_model: str = SECOND_STT_MODEL
    #: With ``wav``: load the feedback reader (``serve --no-feedback-reader``). English only.
    feedback_reader: bool = True
    #: The built-in assistant's language model.
    llm: LlmSettings = field(default_factory=LlmSettings)
