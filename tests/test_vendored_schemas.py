"""The schemas the tests check against are in the repository, with their licences and sources,
and a missing sample set fails instead of quietly turning into zero tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import ofp_schemas
from tests.ofp_schemas import ENVELOPE_SAMPLE_COUNTS, envelope_samples

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "tests" / "schemas"


def test_every_vendored_folder_keeps_its_licence_and_source() -> None:
    readme = (VENDORED / "README.md").read_text()
    for folder, licence in (
        ("openfloor", "Apache License"),
        ("mplp", "Apache License"),
        ("agent-framework", "MIT License"),
    ):
        assert licence in (VENDORED / folder / "LICENSE").read_text()
        assert f"`{folder}/`" in readme
    assert "065a19427c63d1cc080ba19fe6542ccf903560e4" in readme  # the upstream version


def test_the_sample_sets_are_all_there() -> None:
    assert sum(map(len, map(envelope_samples, ENVELOPE_SAMPLE_COUNTS))) == len(envelope_samples())
    assert len(envelope_samples()) == 93


def test_a_missing_sample_folder_is_a_failure(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(ofp_schemas, "SCHEMAS", tmp_path)
    with pytest.raises(AssertionError, match="expected 17 official envelope samples"):
        envelope_samples("1.1.0")
    with pytest.raises(AssertionError, match="found 0"):
        envelope_samples()


def test_nothing_reads_the_shared_folder_beside_the_checkout() -> None:
    """A clone has no shared folder beside it: no file of the project may name one as a path."""
    pattern = re.compile(r"\.\./shared|parents\[\d\]\s*/\s*[\"']shared[\"']")
    files = [ROOT / "pyproject.toml", *ROOT.glob("scripts/*")]
    files += [p for d in ("gateway", "tests", "web") for p in (ROOT / d).rglob("*.*")]
    files = [p for p in files if p.suffix in ("", ".py", ".sh", ".toml", ".js") and p.is_file()]
    assert len(files) > 100
    hits = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        if p != Path(__file__)
        for n, line in enumerate(p.read_text(errors="replace").splitlines(), 1)
        if pattern.search(line)
    ]
    assert hits == []
