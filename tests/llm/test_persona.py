"""The persona file: defaults, a partial file, and files that are wrong."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

import pytest

from gateway.errors import ConfigError
from gateway.llm.persona import DEFAULT, Persona, load_persona


def test_the_default_names_itself_in_its_prompt() -> None:
    p = load_persona(None)
    assert p.name == DEFAULT.name and p.name in p.prompt and p.name in p.greeting


def test_a_file_sets_what_it_names_and_keeps_the_rest(tmp_path: Path) -> None:
    f = tmp_path / "p.json"
    f.write_text(json.dumps({"name": "Ada", "keyphrases": ["travel"]}))
    p = load_persona(str(f))
    assert p.name == "Ada" and p.keyphrases == ("travel",)
    assert "Ada" in p.greeting and "Ada" in p.prompt and p.synopsis == DEFAULT.synopsis


def test_every_field_is_read_from_a_file(tmp_path: Path) -> None:
    """A field added to Persona and not read from the file fails here (the file's keys are
    checked against the fields, so it would be taken and dropped)."""
    lists = {f.name for f in fields(Persona) if f.type == "tuple[str, ...]"}
    given = {f.name: [f"{f.name} 1"] if f.name in lists else f"{f.name} X" for f in fields(Persona)}
    path = tmp_path / "every.json"
    path.write_text(json.dumps(given))
    read = asdict(load_persona(str(path)))
    assert read == {k: tuple(v) if k in lists else v for k, v in given.items()}


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("not json", "not JSON"),
        ("[1]", "JSON object"),
        ('{"nmae": "x"}', "unknown keys nmae"),
        ('{"name": ""}', "non-empty"),
        ('{"keyphrases": "a"}', "list of strings"),
    ],
)
def test_a_wrong_file_is_a_config_error_saying_what_is_wrong(
    tmp_path: Path, content: str, why: str
) -> None:
    f = tmp_path / "p.json"
    f.write_text(content)
    with pytest.raises(ConfigError, match=why):
        load_persona(str(f))
    with pytest.raises(ConfigError, match="cannot read"):
        load_persona(str(tmp_path / "missing.json"))
