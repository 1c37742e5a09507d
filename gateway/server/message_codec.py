"""The page ↔ gateway messages as JSON: the :class:`Message` base the catalogue
(:mod:`gateway.server.messages`) derives from, and the one small reader and writer behind it.

Fields are snake_case in Python and camelCase on the wire (``speaker_uri`` is ``speakerUri``). A
field declared with :func:`optional` is left out of the JSON while it is ``None``; every other
field is always sent (``None`` as ``null``). Reading is strict about types (a ``ptt`` message's
``down`` is a boolean, not ``"yes"``) and ignores fields it does not know, so newer clients keep
working; a message class may be :attr:`Message.LENIENT` (the catalogue's ``Hello`` is).
"""

from __future__ import annotations

import dataclasses
import enum
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import (
    Any,
    ClassVar,
    Literal,
    TypeVar,
    Union,
    cast,
    get_args,
    get_origin,
    get_type_hints,
)

from gateway.errors import GatewayError
from gateway.ofp.errors import EnvelopeError
from gateway.ofp.jsonio import loads_external
from gateway.server.guard import clip_text


class ProtocolError(GatewayError, ValueError):
    """A message that does not fit its definition. Its text is meant for whoever sent it.
    (Also a ``ValueError``: the server answers it as a bad request.)"""


def optional(default: Any = None) -> Any:
    """A field left out of the JSON while it is ``None``."""
    return field(default=default, metadata={"omit_none": True})


M = TypeVar("M", bound="Message")
T = TypeVar("T")


@dataclass(frozen=True)
class Message:
    """One message on the WebSocket; subclasses name their wire ``type`` in :attr:`TYPE`."""

    TYPE: ClassVar[str] = ""
    #: Read a field that does not fit as its default instead of refusing the message.
    LENIENT: ClassVar[bool] = False

    def to_dict(self) -> dict[str, Any]:
        """The message as JSON-ready data, ``type`` first."""
        out: dict[str, Any] = {"type": self.TYPE} if self.TYPE else {}
        for f in _fields(cast(type, type(self))):
            value = getattr(self, f.name)
            if value is None and f.omit_none:
                continue
            out[f.wire] = _encode(value)
        return out

    def to_json(self) -> str:
        """The JSON text sent on the WebSocket.

        UTF-8 when it can be; a lone surrogate (which UTF-8 cannot carry) is sent as a ``\\ud800``
        escape, which ``JSON.parse`` takes. Raises ``ValueError`` for a non-finite number.
        """
        data = self.to_dict()
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(data, ensure_ascii=True, allow_nan=False)
        return text

    @classmethod
    def from_dict(cls: type[M], data: Mapping[str, Any]) -> M:
        """Read the message from decoded JSON; :class:`ProtocolError` if it does not fit."""
        if not isinstance(data, Mapping):
            raise ProtocolError(f"a {cls._name()} must be a JSON object")
        if cls.TYPE and data.get("type") != cls.TYPE:
            raise ProtocolError(f"expected a {cls.TYPE!r} message, not {_quote(data.get('type'))}")
        return construct(cls, data, f"the {cls._name()}", lenient=cls.LENIENT)

    @classmethod
    def from_json(cls: type[M], text: str | bytes) -> M:
        """Read the message from JSON text (through the gateway's parse boundary)."""
        return cls.from_dict(_object(text))

    @classmethod
    def _name(cls) -> str:
        return f"{cls.TYPE!r} message" if cls.TYPE else cls.__name__


def read(data: Any, registry: Mapping[str, type[M]]) -> M:
    """The message ``data`` (decoded JSON) is, looked up by its ``type`` in ``registry``.

    :class:`ProtocolError` when it is not an object, its type is not in ``registry``, or its
    fields do not fit.
    """
    if not isinstance(data, Mapping):
        raise ProtocolError("messages are JSON objects")
    kind = data.get("type")
    cls = registry.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(f"unknown or misplaced message {_quote(kind)}")
    return cls.from_dict(data)


def read_json(text: str | bytes, registry: Mapping[str, type[M]]) -> M:
    """:func:`read` from JSON text (through the gateway's parse boundary)."""
    return read(_object(text), registry)


# ---------------------------------------------------------------------------- reading, writing
@dataclass(frozen=True)
class _Field:
    name: str
    wire: str
    hint: Any
    omit_none: bool
    has_default: bool


@cache
def _fields(cls: type) -> tuple[_Field, ...]:
    hints = get_type_hints(cls)
    return tuple(
        _Field(
            f.name,
            _camel(f.name),
            hints[f.name],
            bool(f.metadata.get("omit_none")),
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(cls)
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def _encode(value: Any) -> Any:
    if isinstance(value, Message):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.wire: _encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {k: _encode(v) for k, v in value.items()}
    return value


def _decode(value: Any, hint: Any, where: str) -> Any:
    """``value`` read as ``hint`` says, or :class:`ProtocolError` naming ``where``."""
    origin = get_origin(hint)
    if hint is Any:
        return value
    if origin in (Union, types.UnionType):
        options = get_args(hint)
        if value is None and type(None) in options:
            return None
        messages = {o.TYPE: o for o in options if isinstance(o, type) and issubclass(o, Message)}
        if messages and isinstance(value, Mapping) and value.get("type") in messages:
            return messages[value["type"]].from_dict(value)
        for option in options:
            if option is type(None):
                continue
            try:
                return _decode(value, option, where)
            except ProtocolError:
                pass
        raise ProtocolError(f"{where} must be {_describe(hint)}")
    if origin is Literal:
        if any(value == v and type(value) is type(v) for v in get_args(hint)):
            return value
        raise ProtocolError(f"{where} must be {_describe(hint)}, not {_quote(value)}")
    if origin is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ProtocolError(f"{where} must be an object")
        item = get_args(hint)[1]
        return {k: _decode(v, item, f"{where}[{k!r}]") for k, v in value.items()}
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise ProtocolError(f"{where} must be a list")
        item = get_args(hint)[0]
        items = [_decode(v, item, f"{where}[{i}]") for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise ProtocolError(f"{where} must be {_describe(hint)}, not {_quote(value)}") from None
    if isinstance(hint, type) and issubclass(hint, Message):
        return hint.from_dict(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if not isinstance(value, Mapping):
            raise ProtocolError(f"{where} must be an object")
        return construct(hint, value, where)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if (
        isinstance(hint, type)
        and isinstance(value, hint)
        and not (isinstance(value, bool) and hint is not bool)
    ):
        return value
    raise ProtocolError(f"{where} must be {_describe(hint)}")


def construct(cls: type[T], data: Mapping[str, Any], where: str, *, lenient: bool = False) -> T:
    """An instance of the dataclass ``cls`` from its wire fields (unknown ones ignored)."""
    values: dict[str, Any] = {}
    for f in _fields(cast(type, cls)):
        if f.wire not in data:
            if not f.has_default:
                raise ProtocolError(f"{where} needs {f.wire!r}")
            continue
        try:
            values[f.name] = _decode(data[f.wire], f.hint, f"{where}'s {f.wire!r}")
        except ProtocolError:
            if not (lenient and f.has_default):
                raise
    return cls(**values)


def _describe(hint: Any) -> str:
    origin = get_origin(hint)
    if origin is Literal or (isinstance(hint, type) and issubclass(hint, enum.Enum)):
        values = get_args(hint) if origin is Literal else [m.value for m in hint]
        return "one of " + ", ".join(repr(v) for v in values)
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(o) for o in get_args(hint))
    names = {str: "a string", bool: "true or false", int: "an integer", float: "a number"}
    if hint is type(None):
        return "null"
    return names.get(hint, getattr(hint, "__name__", str(hint)))


def _quote(value: Any) -> str:
    """``value`` as an error message quotes it: at most ECHO_CHARS of it (server/guard.py)."""
    return clip_text(repr(value))


def _object(text: str | bytes) -> Any:
    try:
        data = loads_external(text, source="the WebSocket")
    except (EnvelopeError, RecursionError):
        raise ProtocolError("messages are JSON objects (not too deep)") from None
    if not isinstance(data, dict):
        raise ProtocolError("messages are JSON objects (not too deep)")
    return data
