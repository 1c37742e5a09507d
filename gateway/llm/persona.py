"""Who the assistant is: its name, manifest words, greeting and system prompt.

A persona file is a small JSON object; every key is optional and falls back on
:data:`DEFAULT`::

    {"name": "Ada", "synopsis": "…", "keyphrases": ["…"], "descriptions": ["…"],
     "greeting": "…", "prompt": "You are Ada, …"}

``{name}`` in the prompt and greeting is replaced by the name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

from gateway.errors import ConfigError

#: Largest persona file read.
MAX_PERSONA_BYTES = 64 * 1024


@dataclass(frozen=True)
class Persona:
    """The assistant's identity and instructions."""

    name: str = "Assistant"
    synopsis: str = "Answers questions and talks about anything."
    keyphrases: tuple[str, ...] = ("assistant", "ask a question", "explain", "advice")
    descriptions: tuple[str, ...] = (
        "A general assistant backed by a language model: questions, advice, explanations.",
    )
    greeting: str = "Hi, I'm {name}. Ask me anything."
    prompt: str = field(
        default=(
            "You are {name}, a helpful voice assistant in a spoken conversation. Your words are "
            "read aloud, so answer in two or three short, plain sentences: no lists, no "
            "markdown, no code. Other speakers may be in the conversation; their lines start "
            "with their name."
        )
    )
    #: Lines added to what the model is told with every request, after the date, the agents
    #: here and the person's facts (gateway/llm/grounding.py): "The person is in Lisbon.", …
    context: tuple[str, ...] = ()

    def filled(self) -> Persona:
        """This persona with ``{name}`` replaced in the greeting and the prompt."""
        return replace(
            self,
            greeting=self.greeting.replace("{name}", self.name),
            prompt=self.prompt.replace("{name}", self.name),
        )


DEFAULT = Persona()


def load_persona(path: str | None) -> Persona:
    """The persona in ``path`` (None: :data:`DEFAULT`); raises :class:`ConfigError` with what is
    wrong for a file that cannot be read or does not fit."""
    if not path:
        return DEFAULT.filled()
    file = Path(path).expanduser()
    try:
        raw = file.read_bytes()[: MAX_PERSONA_BYTES + 1]
    except OSError as exc:
        raise ConfigError(f"cannot read the persona file {path}: {exc.strerror}") from None
    if len(raw) > MAX_PERSONA_BYTES:
        raise ConfigError(f"the persona file {path} is over {MAX_PERSONA_BYTES // 1024} KiB")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ConfigError(f"the persona file {path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"the persona file {path} must hold a JSON object")
    known = {f.name for f in fields(Persona)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"the persona file {path} has unknown keys {', '.join(unknown)}; "
            f"known: {', '.join(sorted(known))}"
        )
    lists: dict[str, tuple[str, ...]] = {}
    texts: dict[str, str] = {}
    for key, value in data.items():
        if key in ("keyphrases", "descriptions", "context"):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{key} in {path} must be a list of strings")
            lists[key] = tuple(value)
        elif not isinstance(value, str) or not value.strip():
            raise ConfigError(f"{key} in {path} must be a non-empty string")
        else:
            texts[key] = value.strip()
    persona = Persona(
        name=texts.get("name", DEFAULT.name),
        synopsis=texts.get("synopsis", DEFAULT.synopsis),
        keyphrases=lists.get("keyphrases", DEFAULT.keyphrases),
        descriptions=lists.get("descriptions", DEFAULT.descriptions),
        greeting=texts.get("greeting", DEFAULT.greeting),
        prompt=texts.get("prompt", DEFAULT.prompt),
        context=lists.get("context", DEFAULT.context),
    )
    return persona.filled()
