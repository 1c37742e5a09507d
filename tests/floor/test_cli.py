"""The conversation options' own logic (their effect on serve and talk: tests/test_every_option.py)."""

from __future__ import annotations

import argparse

from gateway.agents.http import HttpSettings
from gateway.floor.cli import add_conversation_options, agent_http_settings


def test_an_agent_timeout_bounds_connecting_too():
    assert agent_http_settings(None) is None  # not given: the client's defaults
    long = agent_http_settings(60.0)
    assert long is not None and long.timeout == 60.0
    assert long.connect_timeout == HttpSettings().connect_timeout
    short = agent_http_settings(0.25)
    assert short is not None and short.timeout == short.connect_timeout == 0.25


def test_the_help_names_the_floors_own_defaults():
    p = argparse.ArgumentParser()
    add_conversation_options(p)
    text = p.format_help()
    assert "OFP_GATEWAY_ALLOW=cidr,cidr" in " ".join(text.split())
    assert f"({HttpSettings().timeout:g}); a slow agent" in " ".join(text.split())
    assert p.parse_args([]).record is None and p.parse_args(["--no-record"]).record is False
