"""The person's proxy on the command line (``serve``): the turn rule's options
(:func:`add_turn_options`, read back with :func:`turn_rule_from_args`, the policy that makes
them one consistent :class:`~gateway.proxy.turn_rule.TurnRule`) and speech over an agent's
(:func:`add_overlap_options`: ``decide`` of :class:`~gateway.proxy.overlap.OverlapSettings`,
``echo_guard`` and ``continuation_ms`` of :class:`~gateway.proxy.settings.SessionSettings`, by
their ``dest``)."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import TYPE_CHECKING

from gateway.errors import ConfigError
from gateway.options import count, given

if TYPE_CHECKING:
    from gateway.proxy.turn_rule import TurnRule


def add_turn_options(p: argparse.ArgumentParser) -> None:
    """``--unfinished-wait-ms``, ``--finished-wait-ms`` and ``--no-semantic``. Their help texts
    name the rule's defaults as ``{rule.…}``: the command's help formatter fills them
    (:func:`gateway.options.defaults_shown`), so the parser imports no turn-taker."""
    p.add_argument(
        "--unfinished-wait-ms",
        dest="unfinished_ms",
        type=int,
        metavar="MS",
        help="the turn rule's wait for words that do not read as finished ({rule.unfinished_ms}; "
        "a finished-sounding sentence ends after {rule.pause_ms})",
    )
    p.add_argument(
        "--finished-wait-ms",
        dest="finished_wait_ms",
        type=int,
        metavar="MS",
        help="the turn rule's wait for a sentence that reads and sounds finished "
        "({rule.pause_ms}). Longer answers later and cuts off fewer people who pause "
        "mid-sentence: the turn-taking trade-off in docs/performance.md measures 400 and 500",
    )
    p.add_argument(
        "--no-semantic",
        dest="semantic",
        action="store_false",
        default=None,
        help="end turns on the transcript and the voice alone: the semantic end-of-turn "
        "signal's language model is not loaded (about 100 MB less, no call at each pause; "
        "more people cut off mid-sentence: docs/performance.md)",
    )


def turn_rule_from_args(rule: TurnRule, args: argparse.Namespace, longest_ms: int) -> TurnRule:
    """``rule`` with ``--unfinished-wait-ms`` (its wait for words that do not read as finished)
    and ``--finished-wait-ms`` (its wait when everything says "finished") applied. The rule's other
    waits move out of their way: its bound (``max_wait_ms``) rises to the longest wait, and a
    doubtful sentence waits at least the finished wait. The semantic signal's waits follow:
    clearly finished words wait the finished wait, clearly unfinished ones at least the
    unfinished wait.

    Raises :class:`ConfigError`, naming the options, when the two do not fit together or the
    unfinished wait is not shorter than ``longest_ms`` (the longest utterance, which ends first)."""
    if getattr(args, "semantic", None) is False:  # --no-semantic: the words' signal not consulted
        rule = replace(rule, semantic_low=None)
    # Named for the rule's fields here, not by dest: the endpointer has a pause_ms of its own.
    asked = given(
        unfinished_ms=getattr(args, "unfinished_ms", None),
        pause_ms=getattr(args, "finished_wait_ms", None),
    )
    if not asked:
        return rule
    end = asked.get("unfinished_ms", rule.unfinished_ms)
    early = asked.get("pause_ms", rule.pause_ms)
    if early <= 0:
        raise ConfigError(f"--finished-wait-ms {early} is not a silence: give a positive number")
    if early > end:
        raise ConfigError(
            f"the finished wait ({early} ms, --finished-wait-ms) is longer than the unfinished "
            f"wait ({end} ms, --unfinished-wait-ms): a sentence that sounds finished would wait "
            "longer than one that does not. Give a shorter finished wait or a longer unfinished one"
        )
    if end >= longest_ms:
        raise ConfigError(
            f"--unfinished-wait-ms {end} is not shorter than the longest utterance "
            f"({longest_ms} ms), which would end first: give a shorter wait"
        )
    return replace(
        rule,
        unfinished_ms=end,
        pause_ms=early,
        doubt_ms=max(rule.doubt_ms, early),
        # The semantic signal's two waits follow: clearly finished words wait the early end
        # in the rule's proportion (192 of 200 ms by default); clearly unfinished ones at least
        # the end silence.
        semantic_pause_ms=max(1, round(early * rule.semantic_pause_ms / rule.pause_ms)),
        semantic_wait_ms=max(rule.semantic_wait_ms, end),
        # Sure bare words wait between the two: never less than the early end.
        semantic_unpunctuated_ms=(
            None
            if rule.semantic_unpunctuated_ms is None
            else max(rule.semantic_unpunctuated_ms, early)
        ),
        # Words the signal is unsure of, with a voice that is not very sure, wait as
        # unfinished ones.
        semantic_unsure_ms=None if rule.semantic_unsure_ms is None else end,
        max_wait_ms=max(rule.max_wait_ms, end, rule.doubt_ms, early),
    )


def add_overlap_options(p: argparse.ArgumentParser) -> None:
    """``--barge-in``, ``--no-echo-guard`` and ``--continuation-ms``: what speech over an agent,
    or soon after a turn, does."""
    p.add_argument(
        "--barge-in",
        dest="decide",
        type=_barge_in,
        metavar="decide|stop",
        help="speech over an agent: pause it and decide from the words whether it resumes (a "
        "backchannel, a noise) or stops (an interruption), or stop it at once (decide; "
        "docs/turn-taking.md)",
    )
    p.add_argument(
        "--no-echo-guard",
        dest="echo_guard",
        action="store_false",
        default=None,
        help="do not compare the microphone with what was played: a client without echo "
        "cancellation then interrupts its own agent",
    )
    p.add_argument(
        "--continuation-ms",
        dest="continuation_ms",
        type=count,
        metavar="MS",
        help="speech that begins within this long of the last word of a turn just ended goes "
        "on with that turn: its answer is dropped unplayed and the whole request goes as one "
        "utterance (0: never; default {g.session.continuation_ms})",
    )


def _barge_in(text: str) -> bool:
    if text not in ("decide", "stop"):
        raise argparse.ArgumentTypeError(f"{text!r}: give decide or stop")
    return text == "decide"
