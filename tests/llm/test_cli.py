"""The ``--llm-*`` options read back as LlmSettings (their effect on each command:
tests/test_every_option.py)."""

from __future__ import annotations

import argparse

import pytest

from gateway.errors import ConfigError
from gateway.llm.cli import add_llm_options, llm_from_args
from gateway.llm.settings import LlmSettings


def _parse(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_llm_options(p)
    return p.parse_args(argv)


def test_no_option_is_the_dataclass_default_and_a_url_loses_its_slash():
    assert llm_from_args(_parse()) == LlmSettings()
    assert llm_from_args(_parse("--llm-url", "http://h:8000/v1/")).url == "http://h:8000/v1"


def test_options_for_the_other_kind_of_model_are_refused_by_name():
    with pytest.raises(ConfigError, match="--llm-model only work with --llm-url"):
        llm_from_args(_parse("--llm-model", "m"))
    with pytest.raises(ConfigError, match="--llm-threads set the embedded model"):
        llm_from_args(_parse("--llm-url", "http://h/v1", "--llm-threads", "2"))


def test_bad_values_are_usage_errors(capsys):
    for argv in (["--llm-url", "ftp://h"], ["--llm-threads", "0"]):
        with pytest.raises(SystemExit) as stopped:
            _parse(*argv)
        assert stopped.value.code == 2
    assert "give 1 or more" in capsys.readouterr().err
