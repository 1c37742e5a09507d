"""The rules behind issue 14 one by one (gateway/server/guard.py, access.py, clips.py), and the
refusals of bad ``serve`` option values. The attacks themselves run against a real gateway in
test_hostile_input.py, test_hostile_access.py and tests/web/test_hostile_html.py."""

from __future__ import annotations

import re
import re._parser as re_parser
import subprocess
import sys
import time
from collections.abc import Iterator
from re._constants import MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT
from re._parser import SubPattern
from typing import Any

import pytest
from websockets.datastructures import Headers

from gateway.server import guard
from gateway.server.access import ClipSigner, HostPolicy, client_address, path_problem
from gateway.server.clips import PERSON_PREFIX, ClipShelf, VoiceRecords, without_person_audio
from gateway.server.guard import (
    _TAG,
    MAX_HTML_CHARS,
    MAX_HTML_DEPTH,
    bound_html,
    clip_text,
    html_depth_ok,
)

HOSTILE_HTML = {
    "50 000 nested b": "<b>" * 50_000 + "x" + "</b>" * 50_000,
    "deep divs within the size bound": "<div>" * 5_000 + "x",
    "unclosed tags": "<a" * 30_000,
    "an unterminated comment": "<!--" + "-" * 60_000,
    "a tag name that never closes": "<a" + "b" * 60_000,
}


class _CountingTag:
    """guard._TAG, counting the tags the depth walk is handed."""

    def __init__(self) -> None:
        self.seen = 0

    def finditer(self, html: str) -> Iterator[re.Match[str]]:
        for m in _TAG.finditer(html):
            self.seen += 1
            yield m


@pytest.mark.parametrize("name", HOSTILE_HTML)
def test_hostile_html_is_bounded_without_reading_it_all(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What keeps hostile html cheap, as counts rather than as a time on this machine: over the
    size bound nothing is scanned; a deep one is given up at the depth bound, not at its end;
    the rest is one linear scan (test_the_tag_scan_never_backtracks)."""
    html = HOSTILE_HTML[name]
    counting = _CountingTag()
    monkeypatch.setattr(guard, "_TAG", counting)
    kept, why = bound_html([html])
    if len(html) > MAX_HTML_CHARS:
        assert kept == [] and "too large" in (why or "")
        assert counting.seen == 0  # refused on its size, before any scan
    elif name == "deep divs within the size bound":
        assert kept == [] and "nested too deeply" in (why or "")
        assert counting.seen == MAX_HTML_DEPTH + 1  # 5 000 divs, given up at the bound
    else:
        assert kept == [html] and why is None  # nothing in them nests: shown as text
        assert counting.seen == 0


def test_the_tag_scan_never_backtracks() -> None:
    """The depth scan is linear on any input: a tag cannot reach past the next ``<`` or ``>``
    (``[^<>]``), and every unbounded repeat in it is possessive (gives nothing back), so an
    attempt from one ``<`` reads at most up to the next ``<``/``>`` once. With a plain
    ``[^\\s/<>]*[^<>]*?``, ``<a`` and 60 000 letters took 38 s (quadratic backtracking)."""

    def repeats(pattern: Any) -> Iterator[tuple[Any, Any]]:
        for op, arg in pattern:
            if op in (MAX_REPEAT, MIN_REPEAT, POSSESSIVE_REPEAT):
                yield op, arg
            for part in arg if isinstance(arg, (tuple, list)) else ():
                for sub in part if isinstance(part, list) else [part]:
                    if isinstance(sub, SubPattern):
                        yield from repeats(sub)

    found = list(repeats(re_parser.parse(_TAG.pattern)))
    assert any(op is POSSESSIVE_REPEAT for op, _ in found)
    for op, (_low, high, _sub) in found:
        assert op is POSSESSIVE_REPEAT or high == 1, (op, high)  # only "/?" and "(…)?" plain
    # What it must still tell apart.
    tags = [(m.group(2), m.group(3)) for m in _TAG.finditer("<b class=x>x</b><br/><a<i>")]
    assert tags == [("b", " class=x"), ("b", None), ("br", "/"), ("i", None)]  # "<a" never closes
    assert _TAG.search("<a" + "b" * 1000) is None


def test_html_within_the_bounds_is_kept() -> None:
    nice = "<p><b>Bold</b> news<ul><li>one<li>two<li>three</ul><p>and<br>more<img src=x>"
    assert bound_html([nice]) == ([nice], None)
    # Thirty-three list items without end tags are siblings, not 33 levels.
    assert html_depth_ok("<ul>" + "<li>item" * 33 + "</ul>")
    assert html_depth_ok("<i>" * MAX_HTML_DEPTH)
    assert not html_depth_ok("<i>" * (MAX_HTML_DEPTH + 1))
    kept, why = bound_html(["<p>x</p>" * 10_000])
    assert kept == [] and "too large" in why


def test_echoed_text_is_cut_with_its_length() -> None:
    assert clip_text("short") == "short"
    cut = clip_text("u" * 200_000)
    assert len(cut) < 260 and "200000 characters" in cut


def test_host_policy_refuses_rebinding_and_compares_schemes() -> None:
    policy = HostPolicy.build(
        host="127.0.0.1", public_url="https://talk.example.org", allow_hosts=["gw.lan:8080"]
    )
    for host in ("127.0.0.1:8080", "localhost:8080", "[::1]:8080", "talk.example.org", "GW.lan"):
        assert policy.host_allowed(host), host
    for host in ("evil.example", "evil.example:8080", "127.0.0.1.evil.example", "", None, "a b"):
        assert not policy.host_allowed(host), host
    assert policy.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080")
    assert policy.origin_allowed("https://talk.example.org", "127.0.0.1:8080")  # the proxy
    assert not policy.origin_allowed("https://127.0.0.1:8080", "127.0.0.1:8080")
    assert not policy.origin_allowed("http://evil.example:8080", "evil.example:8080")
    assert not policy.origin_allowed("http://127.0.0.1:9999", "127.0.0.1:8080")
    assert not policy.origin_allowed("null", "127.0.0.1:8080")


def test_odd_paths_are_named() -> None:
    assert path_problem("/index.html") is None
    assert "NUL" in path_problem("/a%00b")
    assert "control" in path_problem("/a\x00b")
    assert "longer" in path_problem("/" + "a" * 5000)


def test_client_address_trusts_only_the_local_proxy() -> None:
    none = Headers()
    xff = Headers({"X-Forwarded-For": "198.51.100.1, 203.0.113.7"})
    assert client_address(("192.0.2.5", 5000), none) == "192.0.2.5"
    assert client_address(("192.0.2.5", 5000), xff) == "192.0.2.5"  # not our proxy: ignored
    assert client_address(("127.0.0.1", 5000), none) is None  # this machine's own client
    assert client_address(("127.0.0.1", 5000), xff) == "203.0.113.7"  # the entry it added
    assert client_address(("::1", 5000, 0, 0), xff) == "203.0.113.7"
    local = Headers({"X-Forwarded-For": "127.0.0.1"})
    assert client_address(("127.0.0.1", 5000), local) is None  # a local proxy's local client


def test_clip_capabilities_are_per_clip_and_expire() -> None:
    signer = ClipSigner(b"k" * 32, ttl_s=60)
    url = signer.url("http://gw", "conv:1", "de:1")
    query = dict(p.split("=") for p in url.split("?")[1].split("&"))
    assert signer.valid("conv:1", "de:1", query["exp"], query["sig"])
    assert not signer.valid("conv:1", "de:2", query["exp"], query["sig"])
    assert not signer.valid("conv:2", "de:1", query["exp"], query["sig"])
    assert not signer.valid("conv:1", "de:1", str(int(query["exp"]) + 1), query["sig"])
    assert not ClipSigner(b"j" * 32, 60).valid("conv:1", "de:1", query["exp"], query["sig"])
    assert not signer.valid("conv:1", "de:1", "١٢٣", query["sig"])  # non-ASCII digits
    past = str(int(time.time()) - 1)
    assert not signer.valid("conv:1", "de:1", past, signer._sig("conv:1", "de:1", int(past)))


def test_clip_shelf_expires_and_is_bounded() -> None:
    shelf = ClipShelf(ttl_s=0.2, max_bytes=100)
    shelf.put("c", "1", b"a" * 60)
    shelf.put("c", "2", b"b" * 60)  # over the bound: the oldest goes
    assert shelf.get("c", "1") is None and shelf.get("c", "2") == b"b" * 60
    time.sleep(0.25)
    assert shelf.get("c", "2") is None


def _utterance_envelope(speaker: str, audio: dict) -> dict:
    return {
        "openFloor": {
            "events": [
                {
                    "eventType": "utterance",
                    "parameters": {
                        "dialogEvent": {
                            "speakerUri": speaker,
                            "features": {"text": {"tokens": [{"value": "hi"}]}, "audio": audio},
                        }
                    },
                }
            ]
        }
    }


def test_the_persons_inline_voice_is_cut_from_records_only() -> None:
    person = f"{PERSON_PREFIX}abc"
    inline = {"mimeType": "audio/wav", "tokens": [{"value": "UklGRg=="}]}
    env = _utterance_envelope(person, inline)
    cut = without_person_audio(env)
    assert "audio" not in cut["openFloor"]["events"][0]["parameters"]["dialogEvent"]["features"]
    assert "audio" in env["openFloor"]["events"][0]["parameters"]["dialogEvent"]["features"]
    agent = _utterance_envelope("tag:agent", inline)  # an agent's own audio is its business
    assert without_person_audio(agent) is agent
    by_url = _utterance_envelope(person, {"tokens": [{"valueUrl": "http://gw/a.wav?sig=x"}]})
    assert without_person_audio(by_url) is by_url


class _Store:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def audio(self, *a, **kw) -> None:
        self.calls.append(("audio", a))

    def envelope(self, conv, **kw) -> None:
        self.calls.append(("envelope", kw["envelope"]))


def test_voice_records_keep_the_voice_only_when_told() -> None:
    person = f"{PERSON_PREFIX}abc"
    env = _utterance_envelope(person, {"tokens": [{"value": "UklGRg=="}]})
    for keep in (False, True):
        store, shelf = _Store(), ClipShelf(60)
        records = VoiceRecords(store, keep_audio=keep, shelf=shelf)
        records.audio("c", "de:1", b"RIFF")
        records.envelope("c", envelope=env, direction="in", peer=person, at=None)
        assert shelf.get("c", "de:1") == b"RIFF"
        assert [c[0] for c in store.calls] == (["audio", "envelope"] if keep else ["envelope"])
        features = store.calls[-1][1]["openFloor"]["events"][0]["parameters"]["dialogEvent"]
        assert ("audio" in features["features"]) is keep


@pytest.mark.parametrize(
    ("option", "value", "complaint"),
    [
        ("--ice-server", "http://stun.example", "not an ICE server"),
        ("--max-sessions-per-address", "-1", "negative"),
        ("--audio-url-ttl", "0", "positive"),
        ("--audio-url-ttl", "inf", "positive"),
    ],
)
def test_bad_option_values_are_refused_before_anything_loads(
    option: str, value: str, complaint: str
) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "gateway", "serve", "--no-record", option, value],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 2 and complaint in run.stderr and "Traceback" not in run.stderr
