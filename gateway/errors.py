"""The root of every error the gateway raises on purpose, and the groups under it.

Each error is defined beside the code that raises it (the module in brackets); this module holds
the root and the groups, so a caller can catch a whole kind of failure, and ``main()``
(:mod:`gateway.cli`) can tell a failure the gateway explains — one line on stderr, exit code
:data:`EXIT_GATEWAY_ERROR` — from a bug, which keeps its traceback.

The tree (``+ ValueError`` and the like: also that builtin, for callers that catch it)::

    GatewayError
    ├── ConfigError                    settings, models, voices, files a command was given
    │   ├── ModelNotAvailable          a model or wake word is not installed  [catalogue]
    │   ├── ResourceMissing            the page or the catalogue is not shipped: a broken
    │   │                              installation  [resources]
    │   ├── VoiceConfigError           + ValueError: the voice map is wrong  [render.voices]
    │   ├── TalkInputError             talk --wav/--out cannot be used  [talk.voice]
    │   ├── NothingSaid                talk got no --text, no --wav and no line  [talk.text]
    │   ├── InboundUnavailable         serve's --inbound-port cannot be listened on
    │   │                              [server.inbound]
    │   ├── BadServiceAddress          --stt/--tts/--wake-service is not wyoming://HOST:PORT
    │   │                              [speech.link]
    │   └── ClusterUnavailable         a server of the local cluster (a gateway node too)
    │       │                          cannot run here or would not start  [cluster.local]
    │       ├── PostgresUnavailable    [cluster.postgres]
    │       └── HAProxyUnavailable     [cluster.haproxy]
    ├── Busy                           work refused under load rather than queued: try later
    │   ├── PoolFull                   [workers]
    │   ├── TranscriberBusy            [voice.stt]
    │   ├── SynthesizerBusy            also a SynthesisError  [render.tts]
    │   ├── ServiceBusy                every connection to a speech service is in use
    │   │                              [speech.link]
    │   └── FloorBusy                  [floor.manager]
    ├── Closed                         it was closed and takes nothing more
    │   ├── PoolClosed                 [workers]
    │   └── PlayoutClosed              [audio.playout]
    ├── AgentError                     an agent could not be reached or understood  [agents.errors]
    │   ├── AgentTimeout, AgentUnreachable, AddressRefused, AgentHTTPError,
    │   │   AgentBadReply, ReplyTooLarge, RequestTooLarge
    │   ├── UnknownAgent               + ValueError: no agent at that address  [agents.errors]
    │   ├── UrlTooLong                 AddressRefused + ValueError: a URL over 2048
    │   │                              characters, refused unparsed  [agents.policy]
    │   └── RefusedHost                + OSError (what aiohttp's resolver must raise): every
    │                                  address of a host name is refused  [agents.policy]
    ├── LlmError                       a language model gave no usable answer  [llm.errors]
    │   ├── LlmUnreachable, LlmHTTPError, LlmTimeout, LlmBadStream
    │   └── Capped                     the answer was cut at a bound  [llm.client]
    ├── NoFetching                     a reply's media is at a URL, and the session was
    │                                  given no way to fetch it  [proxy.services]
    ├── OFPError                       the Open Floor data model  [ofp.errors]
    │   └── EnvelopeError              + ValueError: not an envelope this gateway reads
    ├── ProtocolError                  + ValueError: a page's message does not fit its
    │                                  definition  [server.message_codec]
    ├── RecordsError                   a record cannot be stored, found or exported  [records.errors]
    │   └── ExportRefused              [records.export]
    └── SpeechError                    speech or audio that cannot be read or made
        ├── AudioDecodeError           + ValueError  [render.decode]
        ├── DecodeAbandoned            a decode stopped part-way: its caller stopped waiting
        │                              (speech resumed)  [voice.whisper_engine]
        ├── EventTooLarge              a Wyoming client's event claims over 1 MB
        │                              [speech.server]
        ├── SpeechServiceDown          a speech service cannot be reached or stopped
        │                              mid-request  [speech.link]
        ├── SSMLError                  + ValueError  [render.ssml]
        └── SynthesisError             [render.tts]
            └── SynthesizerBusy        also a Busy

Mistakes in the calling code (a wrong argument, a method called out of turn) stay the builtin
``ValueError``/``RuntimeError``/``TypeError``: they are bugs, not failures to explain to a person.
``tests/test_errors.py`` fails on an exception class under ``gateway/`` outside this tree.
"""

from __future__ import annotations

#: The exit code of a command that stopped on a :class:`GatewayError` (its message on stderr).
#: 1 stays the commands' own "no" (an invalid file, no reply in time, a records error in
#: ``history``/``export``), 2 a usage error (argparse's, and ``talk``'s refusals).
EXIT_GATEWAY_ERROR = 3


class GatewayError(Exception):
    """Something the gateway could not do, with a message that says what to do about it."""


class ConfigError(GatewayError):
    """The settings, models, voices or files the gateway was given cannot be used."""


class ClusterUnavailable(ConfigError):
    """A server the local cluster needs is not installed here or would not start."""


class Busy(GatewayError):
    """The work was refused because too much is already waiting; try again later (or raise the
    limit). Raised at once instead of queueing work whose answer would come too late."""


class Closed(GatewayError):
    """The object was closed; it takes nothing more."""


class SpeechError(GatewayError):
    """Speech or audio could not be read (decoded, parsed) or made (synthesised)."""

    #: The speech service that failed, as the person is told ("the stt service at
    #: wyoming://…"); empty when the failure was in this process.
    service: str = ""


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line (a terminal's, a log's), named by its class if empty."""
    return " ".join(str(exc).split()) or type(exc).__name__
