"""The ``talk`` command: its options, :func:`from_args`, and the run that prints what happened."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from gateway.floor.cli import add_conversation_options, agent_http_settings
from gateway.llm.cli import add_llm_options, llm_from_args
from gateway.options import defaults_shown, from_options
from gateway.talk.settings import TalkSettings
from gateway.voice.cli import SECOND_STT_MODEL, add_feedback_option, add_second_model_option

if TYPE_CHECKING:
    from gateway.records.base import Recorder
    from gateway.talk.text import DirectoryFactory


def _shown() -> dict[str, Any]:
    """What the help texts' fields name: the defaults (``d``), read when help is printed."""
    from gateway.proxy.settings import SessionSettings

    d = TalkSettings()
    return {"d": d, "agents": ", ".join(d.agents), "wake": SessionSettings().wake}


def add_talk_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``talk`` on the main parser."""
    p = sub.add_parser(
        "talk",
        help="hold a conversation with agents from the terminal",
        formatter_class=defaults_shown(_shown),
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--text",
        dest="texts",
        action="append",
        help="what you say (repeatable: one utterance each, in order); without --text and "
        "--wav, each line typed at the terminal is an utterance",
    )
    src.add_argument("--wav", metavar="IN.wav", help="say what this recording says")
    p.add_argument(
        "--agent",
        dest="agents",
        action="append",
        metavar="URL|builtin:NAME",
        help="an agent to invite (repeatable; default {agents})",
    )
    p.add_argument(
        "--convener",
        metavar="URL|builtin:NAME",
        help="an agent made the conversation's convener (builtin:convener is one); without it "
        "the floor is the minimal convener",
    )
    p.add_argument(
        "--json",
        action="store_true",
        default=None,
        help="print one JSON object with every envelope",
    )
    p.add_argument(
        "--timeout",
        dest="timeout_s",
        type=float,
        metavar="SECONDS",
        help="seconds to wait for replies ({d.timeout_s:g})",
    )
    p.add_argument("--out", metavar="reply.wav", help="with --wav: write the reply audio here")
    p.add_argument(
        "--fast",
        action="store_true",
        default=None,
        help="with --wav: do not pace input in real time",
    )
    p.add_argument(
        "--wake",
        metavar="NAME",
        help="with --wav: a wake word (hey_jarvis, okay_nabu, alexa, hey_mycroft, "
        "phrase:TEXT, or off; default {wake}); only speech after it becomes an utterance",
    )
    add_second_model_option(p)
    add_feedback_option(p)
    add_conversation_options(p)
    add_llm_options(p)
    from gateway.speech.cli import add_speech_service_options

    add_speech_service_options(p)
    p.set_defaults(func=cmd_talk)


def from_args(args: argparse.Namespace) -> TalkSettings:
    """The settings the options ask for (each option's ``dest`` is the field it sets); an
    option not given keeps the dataclass default."""
    return replace(from_options(TalkSettings(), args), llm=llm_from_args(args))


def usage_error(s: TalkSettings) -> str | None:
    """Why these ``talk`` settings cannot go together, or None. An option that would be parsed
    and then ignored is refused instead."""
    if s.wav is None:  # typed: --text, or lines from the terminal
        voice_only = [o for o, on in (("--out", s.out), ("--fast", s.fast)) if on]
        voice_only += ["--wake"] if _waking(s) else []
        voice_only += [
            o
            for o, on in (
                ("--stt", s.stt_service),
                ("--tts", s.tts_service),
                ("--wake-service", s.wake_service),
                ("--speech-timeout", s.speech_timeout_s is not None),
                ("--stt-second-model", s.second_stt_model != SECOND_STT_MODEL),
                ("--no-feedback-reader", not s.feedback_reader),
            )
            if on
        ]
        if voice_only:
            return f"{', '.join(voice_only)} only work with --wav (a recording), not with --text"
    if s.speech_timeout_s is not None and not (s.stt_service or s.tts_service):
        return "--speech-timeout only works with --stt or --tts (a speech server)"
    if not s.record and s.data:
        return "--data names where to record, --no-record says not to: give one of them"
    if s.wake is not None and _waking(s) and not s.wake.startswith("phrase:"):
        from gateway.catalogue import ModelNotAvailable, wake_words

        try:
            known = wake_words()
        except ModelNotAvailable as exc:
            return str(exc)
        if s.wake not in known:
            return f"unknown wake word {s.wake!r}: use one of {', '.join(known)}, phrase:TEXT"
    return None


def _waking(s: TalkSettings) -> bool:
    """Whether a wake word was asked for (``--wake off`` asks for none)."""
    return s.wake not in (None, "off")


def _directory_factory(s: TalkSettings) -> DirectoryFactory:
    from gateway.agents.directory import AgentDirectory
    from gateway.agents.policy import AddressPolicy

    policy = AddressPolicy.from_env_and_args(s.allow_addresses)
    http = agent_http_settings(s.agent_timeout_s)
    return lambda: AgentDirectory(policy, settings=http, llm=s.llm)


def _recorder(s: TalkSettings) -> Recorder | None:
    """The recorder ``--data``/``--no-record`` ask for; raises ``RecordsError`` (with what to do)
    when the folder or database cannot be used."""
    if not s.record:
        return None
    from gateway.records.open import open_recorder

    return open_recorder(s.data)


def cmd_talk(args: argparse.Namespace) -> int:
    """Hold the conversation, print it (or its JSON); exit 1 when replies did not all come."""
    from gateway.agents.directory import UnknownAgent
    from gateway.agents.errors import AgentError
    from gateway.records.errors import RecordsError
    from gateway.talk.text import run_talk

    s = from_args(args)
    problem = usage_error(s)
    if problem is not None:
        print(f"talk: {problem}", file=sys.stderr)
        return 2

    def show(speaker: str, text: str) -> None:
        if not s.json:
            print(f"{speaker}: {text}", flush=True)

    try:
        recorder = _recorder(s)
    except RecordsError as exc:  # e.g. --data names a folder that cannot be written
        print(f"talk: {exc}", file=sys.stderr)
        return 2
    try:
        if s.wav is None:
            from gateway.talk.text import NothingSaid

            try:
                result = run_talk(
                    s, directory_factory=_directory_factory(s), recorder=recorder, on_line=show
                )
            except NothingSaid as exc:
                print(f"talk: {exc}", file=sys.stderr)
                return 2
        else:
            from gateway.talk.voice import TalkInputError, run_talk_wav

            try:
                result = run_talk_wav(
                    s, directory_factory=_directory_factory(s), recorder=recorder, on_line=show
                )
            except TalkInputError as exc:
                print(f"talk: {exc}", file=sys.stderr)
                return 2
    except (AgentError, UnknownAgent) as exc:
        print(f"talk: {exc}", file=sys.stderr)
        return 2
    finally:
        if recorder is not None:
            recorder.close()
    if s.json:
        print(json.dumps(result.as_json(), indent=2, ensure_ascii=False, allow_nan=False))
    elif not result.completed:
        print(f"(gave up waiting after {s.timeout_s:g} s)", file=sys.stderr)
    return 0 if result.completed else 1
