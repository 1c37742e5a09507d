"""JSON at the edge: the one place where text from outside (agents, the page) becomes data.

Python's :func:`json.loads` accepts three things that break a gateway later, far from their
cause, so they are decided here, once, for every external input:

* **Unpaired UTF-16 surrogates** (``"\\ud800"``): valid JSON, but the resulting ``str`` cannot
  be encoded as UTF-8, so the page send, the forward to other agents and the record would each
  fail on it. Each one becomes U+FFFD (the replacement character), with a logged warning.
* **Non-finite numbers** (``NaN``, ``Infinity``, ``1e999``): not JSON (RFC 8259 §6), and
  re-sent by :func:`json.dumps` as ``Infinity``, which no other parser reads. They are refused
  with an :class:`~gateway.ofp.errors.EnvelopeError` naming the field.
* **Duplicate object keys**: RFC 8259 leaves the meaning open; Python keeps the last value,
  silently. The last value is still kept (as JavaScript's ``JSON.parse`` does, so the page and
  the gateway agree), with a logged warning naming the key.

:func:`loads_external` does all three and raises nothing but ``EnvelopeError`` (broken JSON,
bad UTF-8, nesting deeper than :data:`MAX_DEPTH` included). :func:`dumps` is the matching writer:
``allow_nan=False`` always, so a non-finite number can never leave as non-JSON.

Callers that want the findings as data (``validate``) pass a list as ``notes``; each entry is a
:class:`~gateway.ofp.errors.Problem` with the JSON path of the scrubbed string or duplicate key.
"""

from __future__ import annotations

import json
import logging
import math
import re
from typing import Any

from gateway.ofp.errors import EnvelopeError, Problem

log = logging.getLogger(__name__)

#: Largest nesting depth accepted; deeper JSON is refused before it can exhaust the stack.
MAX_DEPTH = 64

_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_KEY = re.compile(r"[^.\[\]\"'\s]+")
#: The message of a duplicate-key note (``validate`` tells them from surrogate notes by it).
DUPLICATE_KEY = "duplicate key: the last value is used"
#: What an unpaired surrogate becomes.
REPLACEMENT = "\ufffd"


class _NonFinite:
    """Stands in for a non-finite number during decoding, so the walk can name its path."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _parse_float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


class _Decoder:
    """One decoding: the hooks record what the walk reports with paths afterwards."""

    def __init__(self) -> None:
        # id() of each object that had duplicate keys -> those keys. The decoded tree keeps the
        # objects alive until the walk, so the ids stay unique.
        self.duplicates: dict[int, list[str]] = {}

    def pairs(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            dups = []
            for key, _ in pairs:
                if key in seen and key not in dups:
                    dups.append(key)
                seen.add(key)
            self.duplicates[id(obj)] = dups
        return obj


def child_path(path: str, key: str) -> str:
    """The JSON path of ``key`` inside the object at ``path``: ``$.a.b``, or ``$.a["b c"]`` when
    the key holds a character that would make the dotted form ambiguous."""
    if key and _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key, ensure_ascii=True)}]"


def _scrub(text: str) -> str:
    return _SURROGATE.sub(REPLACEMENT, text)


def _has_surrogate(text: str) -> bool:
    # isascii() is a flag lookup: inline audio (base64, megabytes) never pays for the search.
    return not text.isascii() and _SURROGATE.search(text) is not None


def loads_external(
    data: str | bytes | bytearray,
    *,
    notes: list[Problem] | None = None,
    source: str = "",
) -> Any:
    """Decode JSON text from outside the gateway into Python data that is safe downstream.

    The result holds no unpaired surrogate (each became U+FFFD), no non-finite number (refused)
    and nothing nested deeper than :data:`MAX_DEPTH`. Duplicate keys keep their last value.
    Scrubbed strings and duplicate keys are reported as :class:`Problem` records with JSON paths:
    appended to ``notes`` when it is given (the caller reports them, as ``validate`` does), else
    logged as warnings (``source`` says where the text came from, e.g. an agent's URL).

    Raises :class:`EnvelopeError` and nothing else: bytes that are not UTF-8, text that is not
    JSON, non-finite numbers (naming the field), nesting too deep.
    """
    if isinstance(data, bytes | bytearray):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EnvelopeError(
                Problem("$", f"not UTF-8 text: {exc}", "send UTF-8 encoded JSON")
            ) from None
    if not isinstance(data, str):
        raise EnvelopeError(Problem("$", "not JSON text", "send a UTF-8 JSON object"))
    decoder = _Decoder()
    try:
        value = json.loads(
            data,
            object_pairs_hook=decoder.pairs,
            parse_float=_parse_float,
            parse_constant=_NonFinite,
        )
    except RecursionError:
        raise EnvelopeError(
            Problem("$", f"JSON nested deeper than {MAX_DEPTH} levels", "flatten the document")
        ) from None
    except ValueError as exc:  # JSONDecodeError, and int() over its digit limit
        raise EnvelopeError(Problem("$", f"not JSON: {exc}", "send a UTF-8 JSON object")) from None
    found: list[Problem] = []
    value = _walk(value, decoder, found)
    if notes is not None:
        notes.extend(found)
    else:
        for note in found:
            log.warning("JSON input%s: %s", f" from {source}" if source else "", note)
    return value


def _walk(root: Any, decoder: _Decoder, found: list[Problem]) -> Any:
    """Check depth, refuse non-finite numbers, scrub surrogates (in place), report duplicates.

    Iterative, so a deep document cannot exhaust the stack here either.
    """
    if isinstance(root, str):
        if _has_surrogate(root):
            found.append(_surrogate_note("$"))
            return _scrub(root)
        return root
    if isinstance(root, _NonFinite):
        raise _non_finite("$", root)
    stack: list[tuple[Any, str, int]] = [(root, "$", 1)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise EnvelopeError(
                Problem(path, f"JSON nested deeper than {MAX_DEPTH} levels", "flatten the document")
            )
        if isinstance(node, dict):
            for key in decoder.duplicates.get(id(node), ()):
                found.append(
                    Problem(
                        child_path(path, _scrub(key)),
                        DUPLICATE_KEY,
                        "give each key once",
                    )
                )
            if any(_has_surrogate(k) for k in node):
                items = list(node.items())
                node.clear()
                for key, item in items:
                    if _has_surrogate(key):
                        found.append(_surrogate_note(child_path(path, _scrub(key)), key=True))
                        key = _scrub(key)
                    node[key] = item
            for key, item in node.items():
                child = child_path(path, key)
                if isinstance(item, str):
                    if _has_surrogate(item):
                        found.append(_surrogate_note(child))
                        node[key] = _scrub(item)
                elif isinstance(item, _NonFinite):
                    raise _non_finite(child, item)
                elif isinstance(item, dict | list):
                    stack.append((item, child, depth + 1))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                child = f"{path}[{i}]"
                if isinstance(item, str):
                    if _has_surrogate(item):
                        found.append(_surrogate_note(child))
                        node[i] = _scrub(item)
                elif isinstance(item, _NonFinite):
                    raise _non_finite(child, item)
                elif isinstance(item, dict | list):
                    stack.append((item, child, depth + 1))
    found.sort(key=lambda p: p.path)
    return root


def _surrogate_note(path: str, *, key: bool = False) -> Problem:
    what = "key" if key else "string"
    return Problem(
        path,
        f"{what} holds an unpaired UTF-16 surrogate; it was replaced by U+FFFD",
        "escape characters outside the BMP as a surrogate pair, or send them as UTF-8",
    )


def _non_finite(path: str, item: _NonFinite) -> EnvelopeError:
    return EnvelopeError(
        Problem(
            path,
            f"non-finite number {item.text} is not JSON",
            "send a finite number (RFC 8259 has no NaN or Infinity)",
        )
    )


def dumps(
    obj: Any,
    *,
    indent: int | None = None,
    compact: bool = False,
    ensure_ascii: bool = False,
) -> str:
    """JSON text for anything the gateway sends or stores; never ``NaN``/``Infinity``.

    ``compact`` drops the spaces after separators (the wire form). A non-finite float raises
    ``ValueError``: it is a bug here, since :func:`loads_external` refuses them on the way in.
    """
    separators = (",", ":") if compact else None
    return json.dumps(
        obj, indent=indent, separators=separators, ensure_ascii=ensure_ascii, allow_nan=False
    )
