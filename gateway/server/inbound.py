"""The inbound endpoint: where agents POST envelopes later (docs/floor.md, "The inbound endpoint").

``serve``'s main port is websockets' (GET and the WebSocket upgrade only: it refuses a request with
a body), so agents post to a second, small aiohttp server: ``POST {inbound}/ofp/in/{node}/{token}``.
The token is a capability (gateway/floor/inbound.py): unique to one conversation and one agent,
revoked when the agent leaves or the conversation ends. What is posted goes through the floor
like any reply (recorded, shown, spoken) and the POST gets the §2.3 answer: an envelope with an
empty events array. Anything else is a 4xx and changes nothing:

* 404: an unknown, revoked or mistyped token, or another node's path;
* 429 (``Retry-After``): more than the token's rate (a flood);
* 413: a body over :data:`MAX_POST_BYTES` (the same cap as an agent's reply);
* 400: not an Open Floor envelope; 409: an envelope for another conversation, or from someone
  else than the agent the URL was given to, or one the floor would not take now.

Behind the reference HAProxy (gateway/cluster/haproxy.py) the ``{node}`` segment routes the post to
the node that holds the conversation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Protocol

from aiohttp import web

from gateway.agents.http import HttpSettings
from gateway.errors import ConfigError
from gateway.floor.inbound import InboundDesk
from gateway.ofp import VERSION, EnvelopeError, parse_envelope
from gateway.server.rooms import Room

log = logging.getLogger(__name__)

#: The largest body taken: the cap on an agent's reply (``HttpSettings.max_reply_bytes``).
MAX_POST_BYTES = HttpSettings().max_reply_bytes
#: The path under which inbound URLs live.
PREFIX = "/ofp/in"


class InboundServices(Protocol):
    """What the endpoint needs of the node it runs on (the Gateway): its inbound URLs and its
    rooms — a handle, so this module does not import the server above it."""

    @property
    def inbound(self) -> InboundDesk: ...

    @property
    def rooms(self) -> Mapping[str, Room]: ...


class InboundUnavailable(ConfigError):
    """The inbound port cannot be listened on (taken, or not allowed); the message says which."""


def _text(status: int, text: str, **headers: str) -> web.Response:
    return web.Response(status=status, text=text + "\n", headers=headers)


class InboundEndpoint:
    """The aiohttp application answering agents' posts for one gateway node."""

    def __init__(self, gateway: InboundServices) -> None:
        self.gateway = gateway
        self._runner: web.AppRunner | None = None
        #: The port it listens on, once started.
        self.port: int | None = None

    def app(self) -> web.Application:
        """The aiohttp application (its routes and body cap)."""
        app = web.Application(client_max_size=MAX_POST_BYTES)
        app.router.add_post(PREFIX + "/{node}/{token}", self.post)
        return app

    async def start(self, host: str, port: int) -> int:
        """Listen on ``host:port`` (0: any free port); returns the port."""
        self._runner = web.AppRunner(self.app(), access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        try:
            await site.start()
        except OSError as err:
            await self.close()
            raise InboundUnavailable(
                f"cannot listen for agents' posts on {host}:{port} ({err.strerror or err}); "
                "choose another --inbound-port (0: any free port)"
            ) from None
        self.port = self._runner.addresses[0][1]
        return self.port

    async def close(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def post(self, request: web.Request) -> web.Response:
        """One agent's post (see the module's docstring for the answers)."""
        desk = self.gateway.inbound
        token = request.match_info["token"]
        found = desk.lookup(token) if request.match_info["node"] == desk.node else None
        if found is None:
            return _text(404, "no such inbound URL (wrong, revoked, or its conversation ended)")
        if not desk.admit(token):
            return _text(429, "too many posts on this inbound URL; slow down", **{"Retry-After": "1"})
        if (request.content_length or 0) > MAX_POST_BYTES:
            return _text(413, f"the body is over {MAX_POST_BYTES} bytes")
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return _text(413, f"the body is over {MAX_POST_BYTES} bytes")
        room = self.gateway.rooms.get(found.conversation_id)
        if room is None:
            return _text(404, "that conversation has ended")
        try:
            envelope = parse_envelope(body, conversation_id=found.conversation_id, source=found.agent)
        except EnvelopeError as err:
            return _text(400, f"not an Open Floor envelope: {err}"[:1000])
        why = await room.conversation.post(found.agent, envelope)
        if why is not None:
            log.info("refused an inbound post for %s: %s", found.conversation_id, why)
            return _text(409, why)
        user = room.conversation.user
        answer = {
            "openFloor": {
                "schema": {"version": VERSION},
                "conversation": {"id": found.conversation_id},
                "sender": {"speakerUri": user.speaker_uri, "serviceUrl": desk.url(token)},
                "events": [],
            }
        }
        return web.json_response(text=json.dumps(answer))
