"""The options of the commands that hold conversations (``serve``, ``talk``): where they are
recorded, which addresses their agents may be reached at, and the floor's limits on agents."""

from __future__ import annotations

import argparse

from gateway.agents.http import HttpSettings
from gateway.agents.policy import ENV_VAR
from gateway.floor.host import Limits
from gateway.options import count, seconds, seconds_or_zero
from gateway.records.cli import add_data_option


def add_conversation_options(p: argparse.ArgumentParser) -> None:
    """``--data``, ``--no-record``, ``--allow-address``, ``--max-agent-exchanges``,
    ``--slow-notice`` and ``--agent-timeout``; their help names the defaults of
    :class:`~gateway.floor.host.Limits` and :class:`~gateway.agents.http.HttpSettings`."""
    limits, http = Limits(), HttpSettings()
    add_data_option(p)
    p.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        default=None,
        help="keep no records of conversations",
    )
    p.add_argument(
        "--allow-address",
        dest="allow_addresses",
        action="append",
        metavar="CIDR",
        help="let agents be reached at these addresses although they are loopback/private "
        f"(repeatable; also {ENV_VAR}=cidr,cidr). Example: 127.0.0.0/8",
    )
    p.add_argument(
        "--max-agent-exchanges",
        type=count,
        metavar="N",
        help=f"agents answering agents allowed in one turn of the person "
        f"({limits.max_agent_exchanges}); beyond it their replies are dropped and the person "
        "told (docs/floor.md)",
    )
    p.add_argument(
        "--slow-notice",
        dest="slow_notice_s",
        type=seconds_or_zero,
        metavar="SECONDS",
        help='seconds the person waits for an answer before the floor says "One moment…", '
        f"naming the agent it waits on ({limits.slow_notice_s:g}; 0: never said; "
        "docs/floor.md)",
    )
    p.add_argument(
        "--agent-timeout",
        dest="agent_timeout_s",
        type=seconds,
        metavar="SECONDS",
        help=f"seconds an agent has to answer each envelope ({http.timeout:g}); a slow agent "
        "is told about, and removed after two slow turns in a row (docs/floor.md)",
    )


def agent_http_settings(timeout_s: float | None) -> HttpSettings | None:
    """The HTTP limits for agents with ``--agent-timeout`` applied (None: the defaults)."""
    if timeout_s is None:
        return None
    # Connecting is quick or the agent is down: never longer than the whole answer may take.
    return HttpSettings(
        timeout=timeout_s, connect_timeout=min(HttpSettings().connect_timeout, timeout_s)
    )
