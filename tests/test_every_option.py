"""Every option of every command is read: an option that is parsed and then ignored is a defect.

:data:`CHECKS` maps each option (``"<command> <option>"``, found by walking the real parser and
its sub-parsers) to a check that the option changes what the command does. A new option without
an entry fails :func:`test_every_option_has_a_check`; an entry for an option that no longer
exists fails it too.

Most checks run the command and look at what it did (output, files, exit code, timing, a real
agent server). ``serve`` would need a model-loading server per option, so its checks run the real
``serve`` code with the parts it builds (gateway, models, recorder, agent directory) replaced by
recorders of what they were given, and prove that the option changes that: it is read and reaches
the part that acts on it. Those parts' own tests show what they do with it.

Each default lives in one place, its settings dataclass: every option's argparse default is
``None`` (:func:`test_an_option_not_given_is_none`), so a command given no options builds exactly
the default settings (:func:`test_no_options_are_the_dataclass_defaults`); help texts read the
defaults from there, and what the documentation says of them is checked against them
(:func:`test_the_documented_defaults_are_the_dataclass_defaults`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gateway.audio import SAMPLE_RATE, read_wav, write_wav
from gateway.cli import build_parser, main
from gateway.options import given
from gateway.records import SQLiteRecorder
from gateway.testing.openai_stub import OK_ANSWER, openai_stub
from gateway.testing.processes import free_port
from gateway.testing.records import ALICE, BOB, record_conversation
from gateway.testing.speech import espeak_wav, silence
from tests.ofp_schemas import envelope_samples


def actions(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[str, argparse.Action]]:
    """``("<command> <option>", action)`` for every argument of ``parser`` and its sub-parsers."""
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from actions(sub, (*path, name))
            continue
        long = [o for o in action.option_strings if o.startswith("--")]
        name = long[0] if long else action.dest
        yield (" ".join((*path, name)) if path else name), action


def walk(parser: argparse.ArgumentParser) -> Iterator[str]:
    """``"<command> <option>"`` for every argument of ``parser`` and its sub-parsers."""
    return (name for name, _ in actions(parser))


@dataclass
class Ctx:
    """What a check may use."""

    tmp: Path
    monkeypatch: pytest.MonkeyPatch
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        """``main(argv)`` in this process: exit code, stdout, stderr."""
        self.capsys.readouterr()
        try:
            code = main(list(argv))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        out = self.capsys.readouterr()
        return code, out.out, out.err

    def timed(self, *argv: str) -> tuple[float, int, str, str]:
        start = time.monotonic()
        code, out, err = self.run(*argv)
        return time.monotonic() - start, code, out, err


@pytest.fixture
def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> Ctx:
    monkeypatch.setenv("OFP_GATEWAY_DATA", str(tmp_path / "default-data"))
    monkeypatch.delenv("OFP_GATEWAY_ALLOW", raising=False)
    return Ctx(tmp_path, monkeypatch, capsys)


# ------------------------------------------------------------------------------------ top level
def check_version(t: Ctx) -> None:
    from gateway import __version__

    code, out, _ = t.run("--version")
    assert code == 0 and out.strip() == f"ofp-gateway {__version__}"


def check_verbose(t: Ctx) -> None:
    levels: list[int] = []
    t.monkeypatch.setattr(logging, "basicConfig", lambda **kw: levels.append(kw["level"]))
    sample = str(envelope_samples("1.1.0")[0])
    t.run("validate", sample)
    t.run("-v", "validate", sample)
    assert levels == [logging.WARNING, logging.INFO]


# ------------------------------------------------------------------------------------- validate
def check_validate_files(t: Ctx) -> None:
    good = str(envelope_samples("1.1.0")[0])
    bad = t.tmp / "bad.json"
    bad.write_text('{"openFloor": {"events": 3}}')
    assert t.run("validate", good)[0] == 0
    code, out, _ = t.run("validate", good, str(bad))
    assert code == 1 and "bad.json: INVALID" in out


def check_validate_json(t: Ctx) -> None:
    sample = str(envelope_samples("1.1.0")[0])
    plain = t.run("validate", sample)[1]
    doc = json.loads(t.run("validate", "--json", sample)[1])
    assert doc["valid"] is True and doc["files"][0]["file"] == sample
    with pytest.raises(json.JSONDecodeError):
        json.loads(plain)


def check_validate_lenient(t: Ctx) -> None:
    # A bye with parameters: the official schema rejects it, the gateway's parser accepts it.
    doc = json.loads(envelope_samples("1.1.0")[0].read_text())
    doc["openFloor"]["events"] = [{"eventType": "bye", "parameters": {"x": 1}}]
    path = t.tmp / "bye.json"
    path.write_text(json.dumps(doc))
    assert t.run("validate", str(path))[0] == 1
    assert t.run("validate", "--lenient", str(path))[0] == 0


# ----------------------------------------------------------------------------------------- talk
def check_talk_text(t: Ctx) -> None:
    code, out, _ = t.run("talk", "--no-record", "--text", "paint the fence")
    assert code == 0 and "You said: paint the fence" in out
    # Repeated: one utterance each, in order.
    code, out, _ = t.run("talk", "--no-record", "--text", "one", "--text", "two")
    assert code == 0 and 0 < out.index("You said: one") < out.index("You said: two")
    # Neither --text nor --wav: one utterance per line typed (here piped) at the terminal.
    t.monkeypatch.setattr("sys.stdin", io.StringIO("first line\n\nsecond line\n"))
    code, out, _ = t.run("talk", "--no-record")
    assert code == 0 and out.index("You said: first line") < out.index("You said: second line")
    t.monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code, _, err = t.run("talk", "--no-record")
    assert code == 2 and "--text" in err


def check_talk_agent(t: Ctx) -> None:
    parrot = t.run("talk", "--no-record", "--text", "hello")[1]
    clock = t.run("talk", "--no-record", "--text", "hello", "--agent", "builtin:clock")[1]
    assert "Parrot:" in parrot and "Clock:" in clock and "Parrot:" not in clock


def check_talk_json(t: Ctx) -> None:
    doc = json.loads(t.run("talk", "--no-record", "--json", "--text", "hi")[1])
    assert doc["completed"] is True
    assert not t.run("talk", "--no-record", "--text", "hi")[1].lstrip().startswith("{")


@contextlib.contextmanager
def silent_agent() -> Iterator[str]:
    """An HTTP agent on loopback that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                held.append(server.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/silent"
    finally:
        server.close()
        for conn in held:
            conn.close()


def check_talk_timeout(t: Ctx) -> None:
    with silent_agent() as url:
        args = (
            "talk",
            "--no-record",
            "--text",
            "hi",
            "--agent",
            url,
            "--allow-address",
            "127.0.0.0/8",
        )
        short, code, _, err = t.timed(*args, "--timeout", "0.5")
        assert code == 1 and "gave up waiting after 0.5 s" in err
        longer, code, _, err = t.timed(*args, "--timeout", "8")
        assert code == 1 and "after 8 s" in err
    # 7.5 s apart in theory; the rest of the run (start-up, the bounded bye) is the same in both.
    # A lower bound with 4 s to spare for that rest varying between the runs: a slower
    # machine makes both runs longer, not their difference smaller.
    assert longer - short > 3.5, (short, longer)


def check_talk_agent_timeout(t: Ctx) -> None:
    with silent_agent() as url:
        args = ("talk", "--no-record", "--text", "hi", "--agent", url)
        args += ("--allow-address", "127.0.0.0/8", "--timeout", "2")
        code, out, _ = t.run(*args, "--agent-timeout", "0.5")
        assert code == 0 and "slow to answer" in out  # it missed a turn: the person is told
        code, out, _ = t.run(*args)  # 10 s to answer: still waited for after 2 s
        assert code == 1 and "slow to answer" not in out


def check_talk_slow_notice(t: Ctx) -> None:
    with silent_agent() as url:
        args = ("talk", "--no-record", "--text", "hi", "--agent", url)
        args += ("--allow-address", "127.0.0.0/8", "--timeout", "2")
        # Told within 0.3 s that the agent is slow, by name; by default (3 s) not before
        # talk gives up waiting at 2 s; 0: never.
        code, out, _ = t.run(*args, "--slow-notice", "0.3")
        assert "One moment: 127.0.0.1" in out and "taking longer than usual" in out, out
        code, out, _ = t.run(*args)
        assert code == 1 and "One moment" not in out
        code, out, _ = t.run(*args[:-2], "--timeout", "4", "--slow-notice", "0")
        assert code == 1 and "One moment" not in out


@contextlib.contextmanager
def chatty_agents() -> Iterator[list[str]]:
    """Two HTTP agents on loopback that answer every utterance, whoever it is for."""
    import http.server

    class Chatty(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            of = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["openFloor"]
            me = f"tag:chatty{self.server.server_address[1]}"
            said = {"mimeType": "text/plain", "tokens": [{"value": "and another thing"}]}
            de = {"speakerUri": me, "span": {"startOffset": "PT0S"}, "features": {"text": said}}
            events = [
                {"eventType": "utterance", "parameters": {"dialogEvent": de}}
                for e in of["events"]
                if e["eventType"] in ("utterance", "invite")
            ]
            body = {
                "schema": {"version": "1.1.0"},
                "conversation": {"id": of["conversation"]["id"]},
                "sender": {"speakerUri": me},
            }
            data = json.dumps({"openFloor": {**body, "events": events}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Chatty) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield [f"http://127.0.0.1:{s.server_address[1]}/" for s in servers]
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def check_talk_max_agent_exchanges(t: Ctx) -> None:
    with chatty_agents() as (a, b):
        args = ("talk", "--no-record", "--json", "--text", "Everyone, hi", "--agent", a)
        args += ("--agent", b, "--allow-address", "127.0.0.0/8")

        def chatter(*extra: str) -> int:
            doc = json.loads(t.run(*args, *extra)[1])
            return sum(1 for line in doc["lines"] if line["text"] == "and another thing")

        assert (
            chatter("--max-agent-exchanges", "0")
            < chatter()
            < chatter("--max-agent-exchanges", "4")
        )


def check_talk_convener(t: Ctx) -> None:
    args = ("talk", "--no-record", "--json", "--text", "hi")
    chaired = json.loads(t.run(*args, "--convener", "builtin:convener")[1])
    plain = json.loads(t.run(*args)[1])

    def roles(doc: dict) -> list[str]:
        return doc["heard"][-1]["openFloor"]["conversation"]["assignedFloorRoles"]["convener"]

    assert roles(chaired) == ["tag:ofp-gateway,2025:builtin:convener"] and roles(plain) == []


def check_talk_allow_address(t: Ctx) -> None:
    with silent_agent() as url:
        code, _, err = t.run("talk", "--no-record", "--text", "hi", "--agent", url)
        assert code == 2 and "--allow-address" in err
        args = ("--allow-address", "127.0.0.0/8", "--timeout", "0.5")
        code, _, err = t.run("talk", "--no-record", "--text", "hi", "--agent", url, *args)
        assert code == 1 and "gave up waiting" in err  # reached, and it did not answer


def _conversations(data: Path) -> list[str]:
    if not data.exists():
        return []
    rec = SQLiteRecorder(data)
    try:
        return [c.id for c in rec.list_conversations()]
    finally:
        rec.close()


def check_talk_no_record(t: Ctx) -> None:
    default = t.tmp / "default-data"
    assert t.run("talk", "--text", "keep", "--no-record")[0] == 0
    assert _conversations(default) == []
    assert t.run("talk", "--text", "keep")[0] == 0
    assert len(_conversations(default)) == 1
    code, _, err = t.run("talk", "--text", "x", "--no-record", "--data", str(t.tmp / "d"))
    assert code == 2 and "--no-record" in err


def check_talk_data(t: Ctx) -> None:
    mine = t.tmp / "mine"
    assert t.run("talk", "--text", "keep", "--data", str(mine))[0] == 0
    assert len(_conversations(mine)) == 1
    assert _conversations(t.tmp / "default-data") == []
    blocker = t.tmp / "a-file"
    blocker.write_text("not a folder")
    code, out, err = t.run("talk", "--text", "x", "--data", str(blocker / "sub"))
    assert code == 2 and err.startswith("talk: cannot use") and "Traceback" not in err + out


#: espeak-ng's voice, transcribed reliably by tiny.en (its "elephant" is heard as "relevant").
SAID = "What time is it in Lisbon?"


def _clip(t: Ctx, text: str) -> str:
    path = t.tmp / "said.wav"
    write_wav(path, np.concatenate([silence(300), espeak_wav(text)]), SAMPLE_RATE)
    return str(path)


def check_talk_wav(t: Ctx) -> None:
    wav = _clip(t, SAID)
    code, out, _ = t.run("talk", "--no-record", "--json", "--fast", "--wav", wav)
    doc = json.loads(out)
    assert code == 0 and "lisbon" in doc["transcript"].lower()
    # The floor's options reach a spoken conversation too.
    code, out, _ = t.run(
        "talk", "--no-record", "--json", "--fast", "--wav", wav, "--convener", "builtin:convener"
    )
    conversation = json.loads(out)["heard"][-1]["openFloor"]["conversation"]
    assert code == 0 and conversation["assignedFloorRoles"]["convener"] == [
        "tag:ofp-gateway,2025:builtin:convener"
    ]
    (t.tmp / "not-audio.wav").write_text("not audio")
    for bad, why in (("not-audio.wav", "is not a recording"), ("missing.wav", "cannot read")):
        code, out, err = t.run("talk", "--no-record", "--fast", "--wav", str(t.tmp / bad))
        assert code == 2 and why in err and "Traceback" not in out + err


def check_talk_out(t: Ctx) -> None:
    wav = _clip(t, SAID)
    reply = t.tmp / "reply.wav"
    assert t.run("talk", "--no-record", "--fast", "--wav", wav, "--out", str(reply))[0] == 0
    pcm, rate = read_wav(reply)
    assert rate == 22_050 and len(pcm) > rate  # the parrot's spoken reply, over a second
    code, _, err = t.run("talk", "--no-record", "--text", "hi", "--out", str(reply))
    assert code == 2 and "--out" in err
    nowhere = str(t.tmp / "no-such-folder" / "reply.wav")
    code, _, err = t.run("talk", "--no-record", "--fast", "--wav", wav, "--out", nowhere)
    assert code == 2 and "its folder does not exist" in err


def check_talk_fast(t: Ctx) -> None:
    wav = _clip(t, SAID)
    seconds = len(read_wav(Path(wav))[0]) / SAMPLE_RATE
    t.run("talk", "--no-record", "--fast", "--wav", wav)  # models loaded before timing
    fast, code, _, _ = t.timed("talk", "--no-record", "--fast", "--wav", wav)
    paced, code2, _, _ = t.timed("talk", "--no-record", "--wav", wav)
    assert code == code2 == 0
    assert paced > seconds and paced - fast > seconds / 2, (seconds, fast, paced)


def check_talk_wake(t: Ctx) -> None:
    # The full behaviour, in a real process with a real agent: tests/talk/test_talk_wake_cli.py.
    # Here: the same clip is answered without --wake and not with it.
    wav = _clip(t, SAID)
    plain = json.loads(t.run("talk", "--no-record", "--json", "--fast", "--wav", wav)[1])
    woken = json.loads(
        t.run("talk", "--no-record", "--json", "--fast", "--wav", wav, "--wake", "alexa")[1]
    )
    assert "lisbon" in plain["transcript"].lower()
    assert "lisbon" not in woken["transcript"].lower()
    code, _, err = t.run("talk", "--no-record", "--wav", wav, "--wake", "siri")
    assert code == 2 and "unknown wake word 'siri'" in err


def _talk_service_check(option: str, kind: str) -> Callable[[Ctx], None]:
    """``talk --wav`` with a speech service at a port nothing listens on: refused before the
    conversation, naming the service (the turns through real servers: tests/speech)."""

    def check(t: Ctx) -> None:
        wav = _clip(t, SAID)
        dead = f"wyoming://127.0.0.1:{free_port()}"
        code, _, err = t.run("talk", "--no-record", "--fast", "--wav", wav, option, dead)
        assert code == 2 and f"{kind} service at {dead}" in err, err
        code, _, err = t.run("talk", "--no-record", "--text", "hi", option, dead)
        assert code == 2 and "only work with --wav" in err

    return check


def check_talk_speech_timeout(t: Ctx) -> None:
    """Refused where it would be ignored (typed words; no speech server); read with one (the
    silent server it bounds, through talk: tests/speech/test_faults_mid_turn.py)."""
    code, _, err = t.run("talk", "--no-record", "--text", "hi", "--speech-timeout", "2")
    assert code == 2 and "only work with --wav" in err, err
    wav = _clip(t, SAID)
    code, _, err = t.run("talk", "--no-record", "--fast", "--wav", wav, "--speech-timeout", "2")
    assert code == 2 and "--speech-timeout only works with --stt or --tts" in err, err
    from gateway.talk.cli import from_args as talk_args

    parsed = build_parser().parse_args(["talk", "--wav", wav, "--speech-timeout", "2"])
    assert talk_args(parsed).speech_timeout_s == 2.0


def check_talk_stt_second_model(t: Ctx) -> None:
    """It names the second reader ``talk --wav`` loads (what that reader decides: tests/proxy/
    test_second_reader.py); with typed words, where nothing is heard, it is refused."""
    import gateway.proxy.models as models

    loaded: list[tuple[str, bool]] = []
    real = models.second_reader

    def second_reader(stt: Any, name: str) -> Any:
        reader = real(stt, name)
        loaded.append((name, reader is not None))
        return reader

    t.monkeypatch.setattr(models, "second_reader", second_reader)
    wav = _clip(t, SAID)
    assert t.run("talk", "--no-record", "--fast", "--wav", wav)[0] == 0
    code, _, err = t.run(
        "talk", "--no-record", "--fast", "--wav", wav, "--stt-second-model", "none"
    )
    assert code == 0, err
    assert loaded == [("base", True), ("", False)]
    code, _, err = t.run("talk", "--no-record", "--text", "hi", "--stt-second-model", "none")
    assert code == 2 and "--stt-second-model only work with --wav" in err, err


def check_talk_no_feedback_reader(t: Ctx) -> None:
    """It keeps ``talk --wav`` from loading the feedback reader (what the reader decides:
    tests/proxy/test_overlap_feedback.py); with typed words, where nothing is heard, it is
    refused."""
    import gateway.proxy.models as models

    loaded: list[bool] = []
    real = models.default_feedback

    def default_feedback(*args: Any, **kwargs: Any) -> Any:
        reader = real(*args, **kwargs)
        loaded.append(reader is not None)
        return reader

    t.monkeypatch.setattr(models, "default_feedback", default_feedback)
    wav = _clip(t, SAID)
    assert t.run("talk", "--no-record", "--fast", "--wav", wav)[0] == 0
    code, _, err = t.run("talk", "--no-record", "--fast", "--wav", wav, "--no-feedback-reader")
    assert code == 0, err
    assert loaded == [True], "loaded without the option, not with it"
    code, _, err = t.run("talk", "--no-record", "--text", "hi", "--no-feedback-reader")
    assert code == 2 and "--no-feedback-reader only work with --wav" in err, err


def check_serve_speech_timeout(t: Ctx) -> None:
    """It reaches the speech link's settings the models are built with; alone, refused."""
    stt = ("--stt", "wyoming://127.0.0.1:10300")
    baseline = serve_world(t, *stt)
    changed = serve_world(t, *stt, "--speech-timeout", "2.5")
    assert "timeout_s=15.0" in baseline["models"] and "timeout_s=2.5" in changed["models"]
    code, _, err = t.run("serve", "--speech-timeout", "2.5")
    assert code == 2 and "--speech-timeout only works with --stt or --tts" in err, err


# ------------------------------------------------------------------------------- speech serve
def check_speech_uri(t: Ctx) -> None:
    from gateway.testing.processes import describes
    from tests.speech.conftest import own_server, running

    port = free_port()
    assert not describes(port)
    with running(own_server(t.tmp, port=port)):
        assert describes(port)
    code, _, err = t.run("speech", "serve", "--uri", "http://127.0.0.1:1")
    assert code == 2 and "tcp://HOST:PORT" in err


def check_speech_stt_model(t: Ctx) -> None:
    code, _, err = t.run("speech", "serve", "--stt-model", "no-such-model")
    assert code == 3 and "no-such-model" in err


def check_speech_stt_language(t: Ctx) -> None:
    # Reaches the model: the default tiny.en hears English only, and says so at start.
    code, _, err = t.run("speech", "serve", "--stt-language", "de")
    assert code == 3 and "hears English only, not 'de'" in err, (code, err)
    code, _, err = t.run("speech", "serve", "--stt-language", "klingon")
    assert code == 2 and "no language 'klingon'" in err


def check_speech_max_connections(t: Ctx) -> None:
    from tests.speech.conftest import own_server, running

    with running(own_server(t.tmp, "--max-connections", "1")) as server:
        held = socket.create_connection(("127.0.0.1", server.port))
        try:
            time.sleep(0.3)
            with socket.create_connection(("127.0.0.1", server.port), 5) as second:
                second.settimeout(10)
                answer = second.recv(4096)
            assert b'"error"' in answer, answer
        finally:
            held.close()


# --------------------------------------------------------------------------------- agents serve
@contextlib.contextmanager
def agents_server(*args: str, env: dict[str, str] | None = None) -> Iterator[int]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gateway", "agents", "serve", "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def _listing(host: str, port: int) -> Any:
    deadline = time.monotonic() + 20
    while True:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/", timeout=2) as r:
                return json.loads(r.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def check_agents_port(t: Ctx) -> None:
    with agents_server() as port:  # the helper passes --port
        assert _listing("127.0.0.1", port)


def check_agents_host(t: Ctx) -> None:
    with agents_server("--host", "127.0.0.2") as port:
        assert _listing("127.0.0.2", port)
        with pytest.raises(OSError):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)


def check_agents_name(t: Ctx) -> None:
    with agents_server() as port:
        every = json.dumps(_listing("127.0.0.1", port))
    with agents_server("--name", "clock") as port:
        only = json.dumps(_listing("127.0.0.1", port))
    assert "parrot" in every and "clock" in only and "parrot" not in only


# ------------------------------------------------------------------- the assistant's language model
# The model's requests are seen at an OpenAI-compatible stub (gateway/testing/openai_stub.py): a
# real server does not say what it was sent. --llm-url is also shown against a real server (the
# embedded llama.cpp, reached over HTTP as any remote one would be).
KEY = "sekrit-test-key-4242"


def _persona(t: Ctx) -> str:
    path = t.tmp / "persona.json"
    path.write_text(json.dumps({"name": "Ada", "greeting": "Hello, Ada here."}))
    return str(path)


@contextlib.contextmanager
def _model_log() -> Iterator[list[str]]:
    """The assistant's model's log lines (its warnings say why an answer failed)."""
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    handler = Keep(logging.WARNING)
    logger = logging.getLogger("gateway.llm.model")
    logger.addHandler(handler)
    try:
        yield lines
    finally:
        logger.removeHandler(handler)


def _ask(t: Ctx, *args: str) -> tuple[int, str, str]:
    return t.run("talk", "--no-record", "--text", "hi", "--agent", "builtin:assistant", *args)


def check_talk_llm_url(t: Ctx) -> None:
    from gateway.agents.builtin.assistant import APOLOGY
    from gateway.llm.embedded import EmbeddedLlama

    with EmbeddedLlama() as llama:  # a real OpenAI-compatible server, on loopback
        code, out, _ = _ask(t, "--llm-url", llama.base_url)
    assert code == 0 and "Assistant: " in out.split("Hi, I'm Assistant", 1)[1]
    assert APOLOGY not in out
    with _model_log() as log:
        code, out, err = _ask(t, "--llm-url", f"http://127.0.0.1:{free_port()}/v1")
    assert code == 0 and APOLOGY in out and "cannot reach the model" in " ".join(log)
    code, _, err = _ask(t, "--llm-url", "ftp://x")
    assert code == 2 and "http:// or https://" in err


def check_talk_llm_model(t: Ctx) -> None:
    with openai_stub() as stub:
        assert _ask(t, "--llm-url", stub.url, "--llm-model", "tiny-test")[0] == 0
        assert _ask(t, "--llm-url", stub.url)[0] == 0
    assert stub.requests[0]["body"]["model"] == "tiny-test"
    assert "model" not in stub.requests[1]["body"]
    code, _, err = _ask(t, "--llm-model", "tiny-test")
    assert code == 3 and "only work with --llm-url" in err


def check_talk_llm_key_env(t: Ctx) -> None:
    t.monkeypatch.setenv("TEST_LLM_KEY", KEY)
    data = t.tmp / "records"
    with openai_stub() as stub:
        code, out, err = t.run(
            "talk", "--data", str(data), "--text", "hi", "--agent", "builtin:assistant",
            "--llm-url", stub.url, "--llm-key-env", "TEST_LLM_KEY", "--json",
        )  # fmt: skip
        assert code == 0
        conversation = json.loads(out)["conversationId"]
        stub.mode = "401"
        with _model_log() as log:
            code2, out2, err2 = t.run(
                "-v", "talk", "--data", str(data), "--text", "hi", "--agent", "builtin:assistant",
                "--llm-url", stub.url, "--llm-key-env", "TEST_LLM_KEY",
            )  # fmt: skip
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert code2 == 0 and "Sorry" in out2 and "refused the API key" in " ".join(log)
    # The key is in no output, no log line, no record.
    assert KEY not in out + err + out2 + err2 + " ".join(log)
    assert all(KEY.encode() not in f.read_bytes() for f in data.rglob("*") if f.is_file())
    for fmt in ("mplp-dialog", "durable-agent-state"):
        code, exported, _ = t.run("export", conversation, "--format", fmt, "--data", str(data))
        assert code == 0 and "Assistant" in exported and KEY not in exported
    t.monkeypatch.delenv("TEST_LLM_KEY")
    code, _, err = _ask(t, "--llm-url", stub.url, "--llm-key-env", "TEST_LLM_KEY")
    assert code == 3 and "TEST_LLM_KEY" in err and "not set" in err


def check_talk_llm_model_file(t: Ctx) -> None:
    from gateway.agents.builtin.assistant import APOLOGY
    from gateway.llm.embedded import default_model_path

    with _model_log() as log:
        code, out, _ = _ask(t, "--llm-model-file", "nope.gguf")
    assert code == 0 and APOLOGY in out and "no language model file 'nope.gguf'" in " ".join(log)
    models = t.tmp / "models"
    (models / "llm").mkdir(parents=True)
    (models / "llm" / "mine.gguf").symlink_to(default_model_path())
    t.monkeypatch.setenv("OFP_GATEWAY_MODELS", str(models))
    code, out, _ = _ask(t, "--llm-model-file", "mine.gguf")
    assert code == 0 and APOLOGY not in out
    code, _, err = _ask(t, "--llm-model-file", "mine.gguf", "--llm-url", "http://h/v1")
    assert code == 3 and "--llm-model-file" in err


def check_talk_llm_threads(t: Ctx) -> None:
    started: list[Any] = []

    def acquire(settings: Any) -> Any:
        started.append(settings)
        raise OSError("not loaded in this check")

    t.monkeypatch.setattr("gateway.llm.model.acquire_embedded", acquire)
    _ask(t)
    _ask(t, "--llm-threads", "2")
    assert [s.threads for s in started] == [1, 2]  # reaches the embedded server's settings
    assert _ask(t, "--llm-threads", "0")[0] == 2


def check_talk_llm_persona(t: Ctx) -> None:
    with openai_stub() as stub:
        code, out, _ = _ask(t, "--llm-url", stub.url, "--llm-persona", _persona(t))
    assert code == 0 and "Ada: Hello, Ada here." in out
    assert "You are Ada" in stub.requests[0]["body"]["messages"][0]["content"]
    bad = t.tmp / "bad.json"
    bad.write_text("{")
    code, _, err = _ask(t, "--llm-persona", str(bad))
    assert code == 3 and "not JSON" in err


def _post(port: int, name: str, text: str) -> list[str]:
    from gateway.ofp import Envelope, Event, EventType, Parameters, text_event

    env = Envelope(
        conversation={"id": "conv-opt"},
        sender={"speakerUri": "tag:test,2025:person"},
        events=[
            Event(
                event_type=EventType.UTTERANCE,
                parameters=Parameters(dialog_event=text_event("tag:test,2025:person", text)),
            )
        ],
    )
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/{name}",
        data=env.to_json().encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as r:
        reply = json.loads(r.read())
    return [
        tok["value"]
        for e in reply["openFloor"]["events"]
        if e["eventType"] == "utterance"
        for tok in e["parameters"]["dialogEvent"]["features"]["text"]["tokens"]
    ]


def check_agents_llm_url(t: Ctx) -> None:
    with openai_stub() as stub, agents_server("--name", "assistant", "--llm-url", stub.url) as port:
        _listing("127.0.0.1", port)
        said = _post(port, "assistant", "Hello?")
    assert said == [OK_ANSWER]  # over HTTP: the whole answer in one envelope
    assert stub.requests


def check_agents_llm_model(t: Ctx) -> None:
    with openai_stub() as stub:
        args = ("--name", "assistant", "--llm-url", stub.url, "--llm-model", "tiny-test")
        with agents_server(*args) as port:
            _listing("127.0.0.1", port)
            _post(port, "assistant", "Hello?")
    assert stub.requests[0]["body"]["model"] == "tiny-test"


def check_agents_llm_key_env(t: Ctx) -> None:
    with openai_stub() as stub:
        args = ("--name", "assistant", "--llm-url", stub.url, "--llm-key-env", "TEST_LLM_KEY")
        with agents_server(*args, env={"TEST_LLM_KEY": KEY}) as port:
            _listing("127.0.0.1", port)
            said = _post(port, "assistant", "Hello?")
    assert stub.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(said)


def check_agents_llm_model_file(t: Ctx) -> None:
    from gateway.agents.builtin.assistant import APOLOGY

    with agents_server("--name", "assistant", "--llm-model-file", "nope.gguf") as port:
        _listing("127.0.0.1", port)
        assert _post(port, "assistant", "Hello?") == [APOLOGY]


def check_agents_llm_threads(t: Ctx) -> None:
    calls: list[dict[str, Any]] = []
    t.monkeypatch.setattr("gateway.agents.server.run_agents_server", lambda **kw: calls.append(kw))
    t.run("agents", "serve", "--llm-threads", "2")
    assert calls[0]["llm"].threads == 2  # reaches the assistant's model settings


def check_agents_llm_persona(t: Ctx) -> None:
    with agents_server("--name", "assistant", "--llm-persona", _persona(t)) as port:
        listing = json.dumps(_listing("127.0.0.1", port))
    assert "Ada" in listing


def serve_llm_check(option: str, value: str, *base: str) -> Callable[[Ctx], None]:
    """``serve`` hands the ``--llm-*`` options to the agent directory that builds the assistant
    (what the assistant then does with them: the talk and agents serve checks above)."""

    def check(t: Ctx) -> None:
        t.monkeypatch.setenv("TEST_LLM_KEY", KEY)
        v = value.replace("<tmp>", str(t.tmp))
        baseline = serve_world(t, *base)["directory"]
        changed = serve_world(t, *base, option, v)["directory"]
        assert baseline != changed and v in changed, (baseline, changed)

    return check


SERVE_LLM = {
    "--llm-url": ("http://127.0.0.1:9/v1",),
    "--llm-model": ("tiny-test", "--llm-url", "http://127.0.0.1:9/v1"),
    "--llm-key-env": ("TEST_LLM_KEY", "--llm-url", "http://127.0.0.1:9/v1"),
    "--llm-model-file": ("mine.gguf",),
    "--llm-threads": ("2",),
    "--llm-persona": ("<tmp>/persona.json",),
}


# ------------------------------------------------------------------------------ history, export
def _recorded(t: Ctx) -> Path:
    data = t.tmp / "recorded"
    if not data.exists():
        rec = SQLiteRecorder(data)
        try:
            record_conversation(rec, "conv-a")
            record_conversation(rec, "conv-b")
        finally:
            rec.close()
    return data


def check_history_list_json(t: Ctx) -> None:
    data = str(_recorded(t))
    listed = json.loads(t.run("history", "list", "--json", "--data", data)[1])
    assert sorted(c["id"] for c in listed) == ["conv-a", "conv-b"]
    assert t.run("history", "list", "--data", data)[1].startswith("ID ")


def check_history_list_data(t: Ctx) -> None:
    assert "conv-a" in t.run("history", "list", "--data", str(_recorded(t)))[1]
    assert "no conversations recorded" in t.run("history", "list")[1]


def check_history_show_id(t: Ctx) -> None:
    data = str(_recorded(t))
    code, out, _ = t.run("history", "show", "conv-b", "--data", data)
    assert code == 0 and out.startswith("conv-b ")
    code, _, err = t.run("history", "show", "conv-zzz", "--data", data)
    assert code == 1 and "no conversation 'conv-zzz'" in err


def check_history_show_json(t: Ctx) -> None:
    data = str(_recorded(t))
    doc = json.loads(t.run("history", "show", "conv-a", "--json", "--data", data)[1])
    assert doc["conversation"]["id"] == "conv-a" and doc["records"]


def check_history_show_data(t: Ctx) -> None:
    assert t.run("history", "show", "conv-a", "--data", str(_recorded(t)))[0] == 0
    assert t.run("history", "show", "conv-a")[0] == 1


def check_history_delete_id(t: Ctx) -> None:
    data = _recorded(t)
    assert t.run("history", "delete", "conv-a", "--data", str(data))[0] == 0
    assert _conversations(data) == ["conv-b"]


def check_history_delete_data(t: Ctx) -> None:
    data = _recorded(t)
    assert t.run("history", "delete", "conv-b")[0] == 1
    assert t.run("history", "delete", "conv-b", "--data", str(data))[0] == 0
    assert _conversations(data) == ["conv-a"]


def check_export_id(t: Ctx) -> None:
    data = str(_recorded(t))
    a = t.run("export", "conv-a", "--format", "mplp-dialog", "--data", data)[1]
    b = t.run("export", "conv-b", "--format", "mplp-dialog", "--data", data)[1]
    assert json.loads(a) != json.loads(b)  # ids are derived from the conversation's
    code, _, err = t.run("export", "conv-zzz", "--format", "mplp-dialog", "--data", data)
    assert code == 1 and "no conversation 'conv-zzz'" in err


def check_export_format(t: Ctx) -> None:
    data = str(_recorded(t))
    mplp = json.loads(t.run("export", "conv-a", "--format", "mplp-dialog", "--data", data)[1])
    agent = ("--agent", ALICE.speaker_uri, "--data", data)
    durable = json.loads(t.run("export", "conv-a", "--format", "durable-agent-state", *agent)[1])
    assert "schemaVersion" in durable and "schemaVersion" not in mplp


def check_export_agent(t: Ctx) -> None:
    data = str(_recorded(t))
    base = ("export", "conv-a", "--format", "durable-agent-state", "--data", data)
    alice = t.run(*base, "--agent", ALICE.speaker_uri)[1]
    bob = t.run(*base, "--agent", BOB.speaker_uri)[1]
    assert json.loads(alice) != json.loads(bob)
    code, _, err = t.run(*base)
    assert code == 1 and "choose whose state" in err


def check_export_output(t: Ctx) -> None:
    data = str(_recorded(t))
    out = t.tmp / "out.json"
    code, printed, _ = t.run(
        "export", "conv-a", "--format", "mplp-dialog", "-o", str(out), "--data", data
    )
    assert code == 0 and printed == "" and json.loads(out.read_text())


def check_export_data(t: Ctx) -> None:
    assert t.run("export", "conv-a", "--format", "mplp-dialog", "--data", str(_recorded(t)))[0] == 0
    assert t.run("export", "conv-a", "--format", "mplp-dialog")[0] == 1


# ---------------------------------------------------------------------------------------- serve
class _Stop(Exception):
    pass


def serve_world(t: Ctx, *argv: str) -> dict[str, str]:
    """Run the real ``serve`` command with its parts replaced; what each part was given."""
    world: dict[str, str] = {"restarted": "no"}

    def note(key: str) -> Callable[..., Any]:
        def record(*args: Any, **kwargs: Any) -> Any:
            world[key] = repr((args, sorted(kwargs.items())))
            return _Fake(key)

        return record

    class _Fake:
        def __init__(self, key: str) -> None:
            self.key = key

        async def start(self) -> None:
            raise _Stop

    def gateway(settings: Any, **kwargs: Any) -> _Fake:
        world["settings"] = repr(settings)
        world["gateway"] = repr(sorted((k, type(v).__name__) for k, v in kwargs.items()))
        return _Fake("gateway")

    def directory(policy: Any, settings: Any = None, llm: Any = None) -> _Fake:
        world["directory"] = repr((policy.allow, settings, llm))
        return _Fake("directory")

    class Book:
        from_file = staticmethod(note("voices"))

    mp = t.monkeypatch
    mp.setattr("gateway.server.app.Gateway", gateway)
    mp.setattr("gateway.proxy.models.VoiceModels", note("models"))
    mp.setattr("gateway.records.open.open_recorder", note("recorder"))
    mp.setattr("gateway.agents.directory.AgentDirectory", directory)
    mp.setattr("gateway.render.voices.VoiceBook", Book)
    mp.setattr("gateway.server.cli.restart_under_jemalloc", lambda: world.update(restarted="yes"))
    args = build_parser().parse_args(["serve", *argv])
    args.own_process = True  # as when started from a shell: --allocator is acted on
    with pytest.raises(_Stop):
        args.func(args)
    return world


SERVE_VALUES: dict[str, list[str]] = {
    "--host": ["0.0.0.0"],
    "--port": ["9999"],
    "--agent": ["builtin:clock"],
    "--allow-address": ["10.0.0.0/8"],
    "--allow-origin": ["https://other.test"],
    "--data": ["<tmp>/elsewhere"],
    "--no-record": [],
    "--retention-days": ["7"],
    "--public-url": ["https://gateway.test"],
    "--max-sessions": ["3"],
    "--max-frame-bytes": ["1000"],
    "--audio-feature": ["url"],
    "--stt-model": ["base"],
    "--stt-language": ["en"],
    "--stt-second-model": ["none"],
    "--unfinished-wait-ms": ["1200"],
    "--finished-wait-ms": ["400"],
    "--no-semantic": [],
    "--trim-memory": ["5"],
    "--tts-cache": ["0"],
    "--allocator": ["system"],
    "--voices": ["<tmp>/voices.json"],
    "--wake": ["alexa"],
    "--barge-in": ["stop"],
    "--no-echo-guard": [],
    "--no-feedback-reader": [],
    "--continuation-ms": ["0"],
    "--rejoin": ["30"],
    "--drain-seconds": ["5"],
    "--node": ["node-b"],
    "--allow-host": ["gateway.test"],
    "--audio-url-ttl": ["77"],
    "--ice-server": ["stun:stun.test:3478"],
    "--keep-audio": [],
    "--max-sessions-per-address": ["2"],
    "--inbound-port": ["9998"],
    "--inbound-url": ["https://inbound.test"],
    "--agent-timeout": ["4"],
    "--convener": ["builtin:convener"],
    "--max-agent-exchanges": ["5"],
    "--slow-notice": ["1.5"],
    "--stt": ["wyoming://127.0.0.1:10300"],
    "--tts": ["wyoming://127.0.0.1:10300"],
    "--wake-service": ["wyoming://127.0.0.1:10300"],
}


def serve_check(option: str) -> Callable[[Ctx], None]:
    def check(t: Ctx) -> None:
        values = [v.replace("<tmp>", str(t.tmp)) for v in SERVE_VALUES[option]]
        baseline = serve_world(t)
        assert {"settings", "models", "recorder", "directory"} <= baseline.keys(), baseline
        changed = serve_world(t, option, *values)
        differs = {k for k in baseline.keys() | changed.keys() if baseline.get(k) != changed.get(k)}
        assert differs, f"serve {option} {values} changed nothing the server is built from"

    return check


SLOW = [pytest.mark.slow]  # loads the speech models
CHECKS: dict[str, tuple[Callable[[Ctx], None], list[pytest.MarkDecorator]]] = {
    "--version": (check_version, []),
    "--verbose": (check_verbose, []),
    "validate files": (check_validate_files, []),
    "validate --json": (check_validate_json, []),
    "validate --lenient": (check_validate_lenient, []),
    "talk --text": (check_talk_text, []),
    "talk --wav": (check_talk_wav, SLOW),
    "talk --agent": (check_talk_agent, []),
    "talk --json": (check_talk_json, []),
    "talk --timeout": (check_talk_timeout, []),
    "talk --out": (check_talk_out, SLOW),
    "talk --fast": (check_talk_fast, SLOW),
    "talk --wake": (check_talk_wake, SLOW),
    "talk --no-record": (check_talk_no_record, []),
    "talk --allow-address": (check_talk_allow_address, []),
    "talk --agent-timeout": (check_talk_agent_timeout, []),
    "talk --convener": (check_talk_convener, []),
    "talk --max-agent-exchanges": (check_talk_max_agent_exchanges, []),
    "talk --slow-notice": (check_talk_slow_notice, []),
    "talk --data": (check_talk_data, []),
    "talk --stt": (_talk_service_check("--stt", "stt"), SLOW),
    "talk --tts": (_talk_service_check("--tts", "tts"), SLOW),
    "talk --wake-service": (_talk_service_check("--wake-service", "wake"), SLOW),
    "talk --speech-timeout": (check_talk_speech_timeout, []),
    "talk --stt-second-model": (check_talk_stt_second_model, SLOW),
    "talk --no-feedback-reader": (check_talk_no_feedback_reader, SLOW),
    "serve --speech-timeout": (check_serve_speech_timeout, []),
    "speech serve --uri": (check_speech_uri, SLOW),
    "speech serve --stt-model": (check_speech_stt_model, SLOW),
    "speech serve --stt-language": (check_speech_stt_language, SLOW),
    "speech serve --max-connections": (check_speech_max_connections, SLOW),
    "agents serve --host": (check_agents_host, []),
    "agents serve --port": (check_agents_port, []),
    "agents serve --name": (check_agents_name, []),
    "history list --json": (check_history_list_json, []),
    "history list --data": (check_history_list_data, []),
    "history show id": (check_history_show_id, []),
    "history show --json": (check_history_show_json, []),
    "history show --data": (check_history_show_data, []),
    "history delete id": (check_history_delete_id, []),
    "history delete --data": (check_history_delete_data, []),
    "export id": (check_export_id, []),
    "export --format": (check_export_format, []),
    "export --agent": (check_export_agent, []),
    "export --output": (check_export_output, []),
    "export --data": (check_export_data, []),
    **{f"serve {option}": (serve_check(option), []) for option in SERVE_VALUES},
    "talk --llm-url": (check_talk_llm_url, SLOW),
    "talk --llm-model": (check_talk_llm_model, []),
    "talk --llm-key-env": (check_talk_llm_key_env, []),
    "talk --llm-model-file": (check_talk_llm_model_file, SLOW),
    "talk --llm-threads": (check_talk_llm_threads, []),
    "talk --llm-persona": (check_talk_llm_persona, []),
    "agents serve --llm-url": (check_agents_llm_url, []),
    "agents serve --llm-model": (check_agents_llm_model, []),
    "agents serve --llm-key-env": (check_agents_llm_key_env, []),
    "agents serve --llm-model-file": (check_agents_llm_model_file, []),
    "agents serve --llm-threads": (check_agents_llm_threads, []),
    "agents serve --llm-persona": (check_agents_llm_persona, []),
    **{
        f"serve {option}": (serve_llm_check(option, value, *base), [])
        for option, (value, *base) in SERVE_LLM.items()
    },
}


def test_every_option_has_a_check() -> None:
    options = list(walk(build_parser()))
    assert len(options) == len(set(options)) > 40
    missing = sorted(set(options) - CHECKS.keys())
    stale = sorted(CHECKS.keys() - set(options))
    assert not missing, f"options nobody proves are read (add a check to CHECKS): {missing}"
    assert not stale, f"checks for options that no longer exist: {stale}"


@pytest.mark.parametrize(
    "option", [pytest.param(k, marks=marks) for k, (_, marks) in CHECKS.items()]
)
def test_option_changes_behaviour(option: str, ctx: Ctx) -> None:
    CHECKS[option][0](ctx)


# ------------------------------------------------------------------------ one source per default
def test_an_option_not_given_is_none() -> None:
    """No option restates a default: not given, it is None, and the command's ``from_args``
    leaves the settings field at its dataclass default."""
    from gateway.cluster.__main__ import build_parser as cluster_parser

    every = [*actions(build_parser()), *actions(cluster_parser(), ("cluster",))]
    restated = {
        name: action.default
        for name, action in every
        if not isinstance(action, argparse._VersionAction) and action.default is not None
    }
    assert len(every) > 40
    assert not restated, f"options with a default of their own (make it None): {restated}"


def test_no_options_are_the_dataclass_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command given no options builds its settings dataclass's defaults, all of them."""
    from gateway.cluster.__main__ import build_parser as cluster_parser
    from gateway.cluster.__main__ import from_args as cluster_from_args
    from gateway.cluster.local import LocalCluster
    from gateway.proxy.settings import SessionSettings
    from gateway.server.app import GatewaySettings
    from gateway.server.cli import ServeSettings
    from gateway.server.cli import from_args as serve_from_args
    from gateway.talk.cli import from_args as talk_from_args
    from gateway.talk.settings import TalkSettings
    from gateway.voice.stt import SttSettings

    parse = build_parser().parse_args
    serve = serve_from_args(parse(["serve"]))
    assert serve == ServeSettings()
    assert serve.gateway == GatewaySettings() and serve.stt == SttSettings()
    assert serve.gateway.session == SessionSettings()
    assert talk_from_args(parse(["talk"])) == TalkSettings()
    # talk --wav's wake word: the session's own default, not one of talk's.
    assert SessionSettings(**given(wake=TalkSettings().wake)) == SessionSettings()
    assert cluster_from_args(cluster_parser().parse_args([])) == LocalCluster(
        port=GatewaySettings().port
    )
    # agents serve hands run_agents_server only what was given: its own defaults apply.
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr("gateway.agents.server.run_agents_server", lambda **kw: calls.append(kw))
    for argv in (["agents", "serve"], ["agents", "serve", "--port", "9"]):
        args = parse(argv)
        args.func(args)
    assert calls == [{}, {"port": 9}]


def test_given_options_reach_the_settings() -> None:
    """The other half: each serve and talk option given changes the settings it builds (the
    checks above prove the settings then change what the command does)."""
    from gateway.server.cli import ServeSettings
    from gateway.server.cli import from_args as serve_from_args
    from gateway.talk.cli import from_args as talk_from_args
    from gateway.talk.settings import TalkSettings

    parse = build_parser().parse_args
    for option, values in SERVE_VALUES.items():
        built = serve_from_args(parse(["serve", option, *values]))
        assert built != ServeSettings(), option
    talk = {
        "--text": ["hi"],
        "--wav": ["in.wav"],
        "--agent": ["builtin:clock"],
        "--json": [],
        "--timeout": ["5"],
        "--out": ["reply.wav"],
        "--fast": [],
        "--wake": ["alexa"],
        "--no-record": [],
        "--data": ["elsewhere"],
        "--allow-address": ["10.0.0.0/8"],
        "--agent-timeout": ["4"],
        "--convener": ["builtin:convener"],
        "--max-agent-exchanges": ["5"],
        "--slow-notice": ["1.5"],
        "--llm-url": ["http://h/v1"],
        "--llm-model": ["m", "--llm-url", "http://h/v1"],
        "--llm-key-env": ["HOME", "--llm-url", "http://h/v1"],
        "--llm-model-file": ["x.gguf"],
        "--llm-threads": ["2"],
        "--llm-persona": ["p.json"],
        "--stt": ["wyoming://127.0.0.1:10300"],
        "--tts": ["wyoming://127.0.0.1:10300"],
        "--wake-service": ["wyoming://127.0.0.1:10300"],
        "--speech-timeout": ["2"],
        "--stt-second-model": ["none"],
        "--no-feedback-reader": [],
    }
    assert {f"talk {o}" for o in talk} == {o for o in CHECKS if o.startswith("talk ")}
    for option, values in talk.items():
        assert talk_from_args(parse(["talk", option, *values])) != TalkSettings(), option


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def test_help_shows_the_dataclass_defaults() -> None:
    """Help texts name their defaults as fields filled from the settings when help is printed:
    none is left unfilled, and what they show is the dataclasses' (one example per command)."""
    from gateway.server.app import GatewaySettings
    from gateway.talk.settings import TalkSettings

    parsers = list(_parsers(build_parser()))
    for parser in parsers:
        for action in parser._actions:
            if action.help:
                shown = parser._get_formatter()._expand_help(action)
                assert "{" not in shown, (parser.prog, shown)
    helps = {" ".join(p.prog.split()[1:]): p.format_help() for p in parsers}
    assert {"serve", "talk", "agents serve", "history list"} <= helps.keys()
    g = " ".join(helps["serve"].split())
    assert f"({GatewaySettings().max_sessions}: what 2 cores serve well" in g
    rule = GatewaySettings().session.turn_rule
    assert f"read as finished ({rule.unfinished_ms};" in g
    assert f"sounds finished ({rule.pause_ms})" in g
    assert f"replies ({TalkSettings().timeout_s:g})" in " ".join(helps["talk"].split())


def _documented() -> list[tuple[str, str]]:
    """(file, text): what the documentation says of a default, written from the default."""
    from gateway.agents.http import HttpSettings
    from gateway.floor.host import Limits
    from gateway.proxy.settings import SessionSettings
    from gateway.server.app import GatewaySettings

    g, http, limits = GatewaySettings(), HttpSettings(), Limits()
    session = SessionSettings()
    return [
        ("README.md", f"`--max-sessions-per-address` sessions ({g.max_sessions_per_address})"),
        ("docs/performance.md", f"(`--max-sessions`, default {g.max_sessions})"),
        ("docs/agents.md", f"`--audio-url-ttl` seconds ({g.audio_url_ttl_s:g})"),
        ("docs/agents.md", f"a timeout ({http.timeout:g} s)"),
        ("docs/agents.md", f"a reply size cap ({http.max_reply_bytes // 1024**2} MB)"),
        ("docs/agents.md", f"waiting at most {limits.bye_timeout_s:g} s for them"),
        ("docs/turn-taking.md", f"the person has {session.follow_up_ms // 1000} s to answer"),
        ("docs/turn-taking.md", f"at {session.endpoint.speculate_ms} ms of silence"),
        (
            "docs/turn-taking.md",
            f"(at {session.endpoint.idle_speculate_ms} ms when nothing else needs Whisper",
        ),
        ("docs/turn-taking.md", f"ends {session.turn_rule.pause_ms} ms into a pause"),
        (
            "docs/turn-taking.md",
            f"within the {session.turn_rule.unfinished_ms} ms unfinished wait of their",
        ),
        (
            "docs/turn-taking.md",
            f"`--finished-wait-ms` sets the {session.turn_rule.pause_ms} ms pause",
        ),
        (
            "docs/turn-taking.md",
            f"`--unfinished-wait-ms` the {session.turn_rule.unfinished_ms} ms wait for unfinished",
        ),
        ("docs/turn-taking.md", f"the wait, up to {session.turn_rule.doubt_ms / 1000:g} s;"),
        (
            "docs/turn-taking.md",
            f"sounds finished {session.turn_rule.one_word_ms} ms; no turn waits more than "
            f"{session.turn_rule.max_wait_ms / 1000:g} s",
        ),
        ("docs/turn-taking.md", f"as silence after {session.turn_rule.gap_ms} ms"),
        ("docs/turn-taking.md", f"At P(feedback) ≥ {session.overlap.feedback_p:g} they are"),
        ("docs/turn-taking.md", f"P ≤ `semantic_low` ({session.turn_rule.semantic_low:g})"),
        ("docs/turn-taking.md", f"P ≥ `semantic_high` ({session.turn_rule.semantic_high:g})"),
        (
            "docs/turn-taking.md",
            f"at least `semantic_wait_ms` ({session.turn_rule.semantic_wait_ms / 1000:g} s)",
        ),
        ("docs/turn-taking.md", f"{session.turn_rule.semantic_pause_ms} ms (`semantic_pause_ms`)"),
        (
            "docs/client-protocol.md",
            f"`--max-sessions-per-address` sessions ({g.max_sessions_per_address} by default",
        ),
        (
            "docs/client-protocol.md",
            f"`--max-frame-bytes` (default {g.max_frame_bytes // 1024} KiB)",
        ),
        ("docs/client-protocol.md", f"`--audio-url-ttl` seconds ({g.audio_url_ttl_s:g})"),
        ("docs/network.md", f"`--audio-url-ttl` seconds ({g.audio_url_ttl_s:g})"),
        ("docs/deployment.md", f"`--drain-seconds` ({g.drain_s:g})"),
    ]


@pytest.mark.parametrize("path, text", _documented())
def test_the_documented_defaults_are_the_dataclass_defaults(path: str, text: str) -> None:
    """The documentation states defaults in prose; each statement is checked against the one
    place the default lives, so changing it there fails here until the text follows."""
    words = " ".join((Path(__file__).parent.parent / path).read_text(encoding="utf-8").split())
    assert text in words, f"{path} no longer says {text!r}: say what the default is now"


def test_espeak_is_there() -> None:
    """The --wav checks synthesise their clips; without espeak-ng they would error, not skip."""
    assert shutil.which("espeak-ng"), "install espeak-ng (scripts/test does)"
    assert os.access(shutil.which("espeak-ng") or "", os.X_OK)
