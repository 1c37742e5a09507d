"""Which speech runs where: :class:`SpeechServices` (``--stt``, ``--tts``, ``--wake-service``)
and the remote parts they build for :class:`~gateway.proxy.session.VoiceModels`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from gateway.speech.link import LinkSettings, ServiceLink, parse_address

if TYPE_CHECKING:
    from gateway.speech.asr import RemoteTranscriber
    from gateway.speech.tts import RemoteSynthesizer
    from gateway.voice.wake import WakeListener

#: Wake streams are long-lived (one per listening session), so their bound is the sessions'.
WAKE_LINK = LinkSettings(max_connections=256, max_waiting=0)
#: A reply holds its synthesis connection while it plays (the listener's playout paces the
#: stream, so a long reply is not made ahead of need only to be cut by a barge-in), so the
#: synthesis bound is the replies playing at once, not the server's workers: the server's own
#: pool and ``--max-connections`` bound the work.
TTS_CONNECTIONS = 32


@dataclass(frozen=True)
class SpeechServices:
    """Speech services on the network (``wyoming://host:port``); None runs that part in this
    process (the default).

    The fields are named as the options' ``dest`` (``--stt``, ``--tts``, ``--wake-service``):
    ``stt`` and ``wake`` already name the speech model's settings and the wake word.

    Attributes:
        stt_service: speech to text (``wyoming-faster-whisper``, or ``ofp-gateway speech
            serve``).
        tts_service: synthesis (``wyoming-piper``, or ``ofp-gateway speech serve``).
        wake_service: wake words (``ofp-gateway speech serve``: the microWakeWord models).
        link: connections, timeouts and backoff for the speech and synthesis services.
    """

    stt_service: str | None = None
    tts_service: str | None = None
    wake_service: str | None = None
    link: LinkSettings = field(default_factory=LinkSettings)

    def __post_init__(self) -> None:
        for address in self.addresses:
            parse_address(address)  # a bad address is refused when the settings are made

    @property
    def addresses(self) -> list[str]:
        """The services' addresses given."""
        return [a for a in (self.stt_service, self.tts_service, self.wake_service) if a]


@dataclass
class RemoteParts:
    """The remote parts one process uses, and their links (for ``/readyz`` and ``/metrics``)."""

    transcriber: RemoteTranscriber | None = None
    synthesizer: RemoteSynthesizer | None = None
    wake: Callable[[str], WakeListener] | None = None
    links: list[ServiceLink] = field(default_factory=list)


def build_remote(services: SpeechServices) -> RemoteParts:
    """The remote transcriber, synthesizer and wake factory ``services`` asks for (call inside
    the event loop that will use them)."""
    parts = RemoteParts()
    if services.stt_service:
        from gateway.speech.asr import RemoteTranscriber

        link = ServiceLink("stt", services.stt_service, services.link)
        parts.transcriber = RemoteTranscriber(link)
        parts.links.append(link)
    if services.tts_service:
        from gateway.speech.tts import RemoteSynthesizer

        tts = replace(
            services.link, max_connections=max(services.link.max_connections, TTS_CONNECTIONS)
        )
        link = ServiceLink("tts", services.tts_service, tts)
        parts.synthesizer = RemoteSynthesizer(link)
        parts.links.append(link)
    if services.wake_service:
        from gateway.speech.wake import RemoteWakeListener

        wake_link = ServiceLink("wake", services.wake_service, WAKE_LINK)
        parts.links.append(wake_link)

        def make(name: str) -> WakeListener:
            return RemoteWakeListener(wake_link, name)

        parts.wake = make
    return parts
