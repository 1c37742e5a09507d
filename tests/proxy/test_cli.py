"""The turn rule's options made one rule (gateway/proxy/cli.py); serve's path is in
tests/server/test_serve_turn_options.py."""

from __future__ import annotations

import argparse

import pytest

from gateway.errors import ConfigError
from gateway.proxy.cli import add_overlap_options, add_turn_options, turn_rule_from_args
from gateway.proxy.settings import SessionSettings
from gateway.proxy.turn_rule import TurnRule


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_turn_options(parser)
    return parser.parse_args(list(argv))


def test_no_option_keeps_the_rule() -> None:
    rule = TurnRule()
    assert turn_rule_from_args(rule, _args(), 30_000) == rule


def test_the_waits_move_the_rules_other_waits_out_of_their_way() -> None:
    rule = turn_rule_from_args(TurnRule(), _args("--finished-wait-ms", "500"), 30_000)
    assert rule.pause_ms == 500 and rule.doubt_ms >= 500 and rule.max_wait_ms >= 500
    longer = turn_rule_from_args(TurnRule(), _args("--unfinished-wait-ms", "4000"), 30_000)
    assert longer.unfinished_ms == 4000 and longer.max_wait_ms >= 4000


def test_no_semantic_leaves_the_words_signal_out() -> None:
    served = SessionSettings().turn_rule  # serve's rule consults the words' signal
    assert served.semantic_low is not None
    assert turn_rule_from_args(served, _args("--no-semantic"), 30_000).semantic_low is None


def test_waits_that_do_not_fit_are_refused_by_option_name() -> None:
    with pytest.raises(ConfigError, match="--unfinished-wait-ms 5000 is not shorter"):
        turn_rule_from_args(TurnRule(), _args("--unfinished-wait-ms", "5000"), 5000)
    with pytest.raises(ConfigError, match="--finished-wait-ms"):
        turn_rule_from_args(TurnRule(), _args("--finished-wait-ms", "0"), 30_000)


def test_barge_in_takes_decide_or_stop_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    add_overlap_options(parser)
    assert parser.parse_args(["--barge-in", "stop"]).decide is False
    assert parser.parse_args(["--barge-in", "decide", "--no-echo-guard"]).echo_guard is False
    assert parser.parse_args([]).decide is None and parser.parse_args([]).echo_guard is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--barge-in", "sometimes"])
    assert "'sometimes': give decide or stop" in capsys.readouterr().err
