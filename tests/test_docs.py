"""The README's tour matches the tree, and the documents' links lead somewhere."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _tour() -> list[str]:
    """The paths the README's tour names, one per line that starts with a path."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## A short tour", 1)[1].split("```", 2)[1]
    return [m.group(1) for m in re.finditer(r"^(\S+)\s", block, re.MULTILINE)]


def test_the_tour_names_only_what_exists() -> None:
    named = _tour()
    assert len(named) > 10, "the tour's code block was not found"
    missing = [p for p in named if not (ROOT / p).exists()]
    assert not missing, f"the README's tour names {missing}, which are not in the tree"


def test_the_tour_names_every_part_of_the_package() -> None:
    named = {p.rstrip("/") for p in _tour()}
    parts = [
        f"gateway/{p.name}"
        for p in (ROOT / "gateway").iterdir()
        if (p.is_dir() and (p / "__init__.py").exists())
        or (p.suffix == ".py" and p.name not in {"__init__.py", "__main__.py"})
    ]
    assert parts
    untold = sorted(set(parts) - named)
    assert not untold, f"add {untold} to the README's tour"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_relative_links_lead_to_files_and_headings(doc: Path) -> None:
    """A moved section leaves no link pointing at nothing (anchors as GitHub makes them)."""
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (doc.parent / path).resolve() if path else doc
        assert file.exists(), f"{doc.name} links to {target}, which does not exist"
        if anchor and file.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"{doc.name} links to #{anchor}, not a heading of {file.name}"


def test_the_settings_table_is_generated_from_the_settings() -> None:
    """docs/settings.md is what ``python -m gateway.defaults`` prints: a default changed in its
    dataclass (the one place it lives) and not regenerated fails here."""
    from gateway.defaults import render

    written = (ROOT / "docs" / "settings.md").read_text(encoding="utf-8")
    assert written == render(), "regenerate: python -m gateway.defaults > docs/settings.md"


def test_the_settings_table_has_one_row_per_setting_and_the_rules_silences() -> None:
    from gateway.defaults import render

    table = render()
    assert "| `gateway.session.turn_rule.end_silence_ms` | 700 |" in table
    assert "| `gateway.session.endpoint.end_silence_ms` | set from `turn_rule`" in table
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| `")]
    sections = table.split("\n## ")
    for section in sections[1:]:
        names = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
        assert names and len(names) == len(set(names)), section.splitlines()[0]
    assert len(rows) > 80
