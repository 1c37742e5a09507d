"""``web/protocol.js``, the page's copy of the message and state names, rendered as JavaScript.

``python -m gateway.server.messages --js`` prints it from the catalogue
(:mod:`gateway.server.messages`); ``tests/server/test_messages.py`` fails when the checked-in
file is out of date.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable


def render_js(
    to_gateway: Iterable[str], from_gateway: Iterable[str], states: type[enum.StrEnum]
) -> str:
    """``web/protocol.js``: the message types each way and the session states as frozen objects
    the page imports."""

    def frozen(name: str, doc: str, names: list[str]) -> str:
        body = "".join(f"  {n}: {json.dumps(n)},\n" for n in names)
        return f"/** {doc} */\nexport const {name} = Object.freeze({{\n{body}}});\n"

    return "\n".join(
        [
            "// The page <-> gateway message names (docs/client-protocol.md). Generated from\n"
            "// gateway/server/messages.py by `python -m gateway.server.messages --js`: do not\n"
            "// edit; tests/server/test_messages.py fails when this file is out of date.\n",
            frozen("TO_GATEWAY", "Message types the page sends.", list(to_gateway)),
            frozen("FROM_GATEWAY", "Message types the gateway sends.", list(from_gateway)),
            frozen("STATES", "Session states in `state` messages.", [s.value for s in states]),
        ]
    )
