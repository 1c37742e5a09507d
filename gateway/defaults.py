"""The defaults table: every setting of the settings dataclasses, its default and what it means.

Each default lives in one place, its settings dataclass; ``docs/settings.md`` is generated from
them by ``python -m gateway.defaults > docs/settings.md`` (``tests/test_docs.py`` fails when the
document no longer matches). A setting's meaning is its ``#:`` comment, or its entry in the
class docstring's ``Attributes:``.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import re
import sys
from enum import Enum
from typing import Any

from gateway.workers import THREADS_ENV

#: The settings documented, by where they apply: (title, "module:Class", what it is).
ROOTS: tuple[tuple[str, str, str], ...] = (
    ("serve", "gateway.server.cli:ServeSettings", "everything ``serve`` is told"),
    ("talk", "gateway.talk.settings:TalkSettings", "one ``talk`` run"),
    ("agents over HTTP", "gateway.agents.http:HttpSettings", "how agents are reached"),
    ("the floor", "gateway.floor.host:Limits", "each conversation's limits"),
    ("wake words", "gateway.voice.wake:WakeSettings", "the wake-word detector"),
    ("wake phrases", "gateway.voice.wake:PhraseSettings", "a spoken wake phrase (phrase:TEXT)"),
    ("voices", "gateway.render.tts:VoiceSettings", "one Piper voice"),
    ("the embedded language model", "gateway.llm.embedded:LlamaSettings", "llama.cpp"),
    ("speech serve", "gateway.speech.server:SpeechServerSettings", "a speech server (Wyoming)"),
    ("speech services", "gateway.speech.link:LinkSettings", "how one speech service is reached"),
)

#: Settings a part of the gateway sets from another, shown as that one rather than a default
#: nobody gets: a session's endpointer ends speech where the turn rule says.
SET_FROM: dict[str, str] = {
    "gateway.session.endpoint.end_silence_ms": "set from `turn_rule` (`end_silence_ms`, or "
    "`max_wait_ms` while a verdict is awaited)",
}

HEADER = """# Settings and their defaults

Generated from the settings dataclasses by `python -m gateway.defaults > docs/settings.md`; do
not edit by hand (`tests/test_docs.py` fails when this is stale). Each default lives in its
dataclass only: options left out keep it (`python -m gateway serve --help` names the option
that sets a setting). Durations are in the unit their name ends in (`_ms`, `_s`).
"""


def _load(spec: str) -> type[Any]:
    module, _, name = spec.partition(":")
    __import__(module)
    cls: type[Any] = getattr(sys.modules[module], name)
    return cls


def field_docs(cls: type[Any]) -> dict[str, str]:
    """Each field's meaning: its ``#:`` comment, else its ``Attributes:`` entry."""
    docs: dict[str, str] = {}
    doc = inspect.getdoc(cls) or ""
    if "Attributes:" in doc:
        entry: str | None = None
        for line in doc.split("Attributes:", 1)[1].splitlines():
            m = re.match(r"^    (\w+): (.*)$", line)
            if m:
                entry = m.group(1)
                docs[entry] = m.group(2)
            elif entry and line.startswith("        "):
                docs[entry] += " " + line.strip()
            elif line.strip():
                entry = None
    comment: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        text = line.strip()
        if text.startswith("#:"):
            comment.append(text[2:].strip())
            continue
        m = re.match(r"^(\w+)\s*:", text)
        if m and comment:
            docs[m.group(1)] = " ".join(comment)
        comment = []
    return docs


def _shown(value: Any) -> str:
    if isinstance(value, Enum):
        value = value.value
    if isinstance(value, tuple):
        return ", ".join(_shown(v) for v in value) if value else "(none)"
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:_}"
    return str(value)


def rows(instance: Any, prefix: str = "") -> list[tuple[str, str, str]]:
    """(setting, default, meaning) for each field of a settings dataclass, nested ones
    flattened (``session.turn_rule.pause_ms``)."""
    docs = field_docs(type(instance))
    out: list[tuple[str, str, str]] = []
    for f in dataclasses.fields(instance):
        if not f.init or f.name.startswith("_"):
            continue
        value = getattr(instance, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out += rows(value, f"{prefix}{f.name}.")
            continue
        name = f"{prefix}{f.name}"
        out.append(
            (name, SET_FROM.get(name) or _shown(value), _first_sentence(docs.get(f.name, "")))
        )
    return out


def _first_sentence(text: str) -> str:
    """What a setting is: the first sentence of its comment (the rest, measured reasons and
    all, stays beside the code)."""
    return re.split(r"(?<=[.!?])\s+(?=[A-Z(`])", text, maxsplit=1)[0]


def _cell(text: str) -> str:
    # Sphinx roles and double backquotes read as plain code in Markdown.
    text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    """docs/settings.md: the built-in defaults, whatever this process's environment says (the
    model threads' ``$OFP_GATEWAY_THREADS``, which the test suite sets to 1 and 4 to shake out
    numerics, made the table read 4 under that run)."""
    saved = os.environ.pop(THREADS_ENV, None)
    try:
        parts = [HEADER]
        for title, spec, what in ROOTS:
            cls = _load(spec)
            parts.append(f"\n## {title}\n\n`{cls.__module__}.{cls.__name__}`: {what}.\n")
            parts.append("\n| setting | default | meaning |\n|---|---|---|\n")
            for name, default, meaning in rows(cls()):
                parts.append(f"| `{name}` | {_cell(default)} | {_cell(meaning)} |\n")
    finally:
        if saved is not None:
            os.environ[THREADS_ENV] = saved
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(render())
