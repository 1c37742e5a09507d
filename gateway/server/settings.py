"""``serve``'s settings: what it is told on its command line (one dataclass, each default here).

At the bottom of ``server/``: every part of the server reads these, and this module imports
none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.proxy.settings import SessionSettings
from gateway.server.memory import TRIM_INTERVAL_S


@dataclass(frozen=True)
class GatewaySettings:
    """What ``serve`` is told on its command line; defaults suit one machine.

    ``session`` is every voice session's settings (a connection changes only its transport's
    parts, with :func:`dataclasses.replace`): the wake word and the audio feature live there
    only, and :attr:`wake` and :attr:`audio_feature` read them.
    """

    #: The address to listen on (loopback: only this machine).
    host: str = "127.0.0.1"
    #: The port of the page, the WebSocket and the HTTP routes.
    port: int = 8080
    #: Where agents POST envelopes later (gateway/server/inbound.py); 0: any free port.
    inbound_port: int = 0
    #: The base URL agents reach the inbound port at; None: ``http://host:inbound_port``.
    inbound_url: str | None = None
    #: The agent every new conversation makes its convener (None: the floor is the minimal one).
    convener: str | None = None
    #: Agents answering agents in one person turn (None: ``Limits.max_agent_exchanges``).
    max_agent_exchanges: int | None = None
    #: Seconds the person waits before "One moment…" (None: ``Limits.slow_notice_s``).
    slow_notice_s: float | None = None
    #: The agents each new conversation invites: URLs or ``builtin:NAME``.
    agents: tuple[str, ...] = (
        "builtin:parrot",
        "builtin:clock",
        "builtin:concierge",
        "builtin:assistant",
    )
    #: Where people reach the gateway when that is not ``http://host:port`` (a proxy in front).
    public_url: str | None = None
    #: Other origins whose pages may open the WebSocket (``--allow-origin``).
    allow_origins: tuple[str, ...] = ()
    #: Voice sessions at once; a new one beyond is refused with a reason.
    max_sessions: int = 12
    #: Refuse new sessions while final transcripts wait this long for the shared model on
    #: average: the sessions already open would all get slower otherwise.
    max_stt_wait_s: float = 0.5
    #: Conversations kept for a rejoin after their page went; beyond this the one detached
    #: longest is ended early, so visitors coming and going cannot pile conversations up.
    max_detached: int = 64
    #: The largest WebSocket message taken from a page.
    max_frame_bytes: int = 256 * 1024
    #: Seconds a new WebSocket has to send its ``hello``.
    hello_timeout_s: float = 10.0
    #: Seconds a conversation waits for its page to come back before it is ended.
    rejoin_s: float = 600.0
    #: Longest a drain (SIGTERM, SIGUSR1) waits for the turns in progress before handing over.
    drain_s: float = 30.0
    #: This node's name in the records (who holds a conversation); "" makes one up at start.
    node: str = ""
    #: Seconds between handing freed memory back to the system (server/memory.py); 0: never.
    trim_memory_s: float = TRIM_INTERVAL_S
    #: Other host names the gateway answers for (``--allow-host``); see access.HostPolicy.
    allow_hosts: tuple[str, ...] = ()
    #: Keep the person's voice in the records (``--keep-audio``). Off: a voice is personal
    #: data a public service should not hoard; transcripts, words and timings are kept.
    keep_audio: bool = False
    #: How long an agent may fetch a clip by its capability URL (``url`` audio mode).
    audio_url_ttl_s: float = 300.0
    #: STUN/TURN servers the WebRTC side may use (``--ice-server``). None by default: a gateway
    #: on this machine reaches its pages over host candidates and contacts nobody else.
    ice_servers: tuple[str, ...] = ()
    #: Sessions at once from one visitor address (0: no limit); the machine's own clients
    #: are not limited (see access.client_address).
    max_sessions_per_address: int = 4
    #: Seconds between purges of records older than the recorder's retention, while serving (a
    #: retention shorter than ten of these is checked ten times per retention instead).
    purge_every_s: float = 3600.0
    session: SessionSettings = field(default_factory=SessionSettings)

    @property
    def wake(self) -> str:
        """The wake word a page gets unless it chooses another (``off``: none)."""
        return self.session.wake

    @property
    def audio_feature(self) -> str:
        """How utterances carry the person's audio: ``inline``, ``url`` or ``off``."""
        return self.session.parts.audio

    @property
    def base_url(self) -> str:
        """Where people (and agents fetching audio) reach this gateway."""
        if self.public_url:
            return self.public_url.rstrip("/")
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host
        return f"http://{host}:{self.port}"
