"""Reading an envelope in either dialect: Open Floor 1.x (the ``openFloor`` key) or OVON 0.9 (the
``ovon`` key, rewritten into a 1.x body by :mod:`gateway.ofp.ovon`).

The dispatch lives here, above both, so that the envelope model (:mod:`gateway.ofp.envelope`)
knows nothing of OVON and the OVON conversion imports the model without a circle.
"""

from __future__ import annotations

from typing import Any

from gateway.ofp.envelope import Envelope, Sender, envelope_from_body, load_json
from gateway.ofp.errors import EnvelopeError, Problem
from gateway.ofp.ovon import from_ovon


def parse_envelope(
    data: bytes | str | dict[str, Any],
    *,
    sender: Sender | None = None,
    conversation_id: str | None = None,
    source: str = "",
) -> Envelope:
    """Read an envelope leniently (1.x under ``openFloor``, or OVON 0.9 under ``ovon``).

    ``sender`` and ``conversation_id`` fill in what the transport already knows when the
    envelope leaves them out; ``source`` (e.g. the agent's URL) names the sender in the warnings
    logged about the JSON text (see :mod:`gateway.ofp.jsonio`). Raises :class:`EnvelopeError`
    (and nothing else) on bad input.
    """
    doc = load_json(data, source=source)
    if "openFloor" in doc:
        body, dialect, prefix = doc["openFloor"], "openFloor", "$.openFloor"
    elif "ovon" in doc:
        body, dialect, prefix = from_ovon(doc["ovon"]), "ovon", "$.ovon"
    else:
        raise EnvelopeError(
            Problem("$", "no 'openFloor' key", 'an Open Floor envelope is {"openFloor": {...}}')
        )
    if not isinstance(body, dict):
        raise EnvelopeError(Problem(prefix, "not a JSON object", "use a JSON object"))
    return envelope_from_body(body, dialect, prefix, sender, conversation_id)
