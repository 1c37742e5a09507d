"""How an option becomes a settings field, and the shared value types."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from gateway.options import count, from_options, positive_int, seconds, seconds_or_zero


@dataclass(frozen=True)
class _Settings:
    port: int = 8080
    names: tuple[str, ...] = ("a",)


def test_an_option_not_given_keeps_the_default_and_a_list_becomes_a_tuple():
    assert from_options(_Settings(), argparse.Namespace(port=None, names=None)) == _Settings()
    given = from_options(_Settings(), argparse.Namespace(port=9, names=["b", "c"]))
    assert given == _Settings(9, ("b", "c"))


@pytest.mark.parametrize(
    ("kind", "good", "bad"),
    [
        (count, {"0": 0, "3": 3}, ["-1"]),
        (positive_int, {"1": 1}, ["0"]),
        (seconds, {"0.5": 0.5}, ["0", "-1", "inf", "nan"]),
        (seconds_or_zero, {"0": 0.0, "2": 2.0}, ["-1", "inf", "nan"]),
    ],
)
def test_value_types_take_their_range_and_refuse_the_rest(kind, good, bad):
    for text, value in good.items():
        assert kind(text) == value
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError):
            kind(text)
