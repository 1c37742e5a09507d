"""The page's JavaScript unit tests (tests/web/js/*.test.js), run by Node's own test runner.

They cover what web/state.js and the pure parts of web/render.js decide; the DOM they draw is
covered in Chromium by the other tests here. scripts/test installs Node (Debian's nodejs).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
JS_TESTS = sorted((Path(__file__).parent / "js").glob("*.test.js"))


def test_the_page_modules_pass_their_node_unit_tests() -> None:
    node = shutil.which("node")
    assert node, "no node on PATH: scripts/test installs it (Debian package nodejs)"
    assert JS_TESTS, "no tests/web/js/*.test.js found"
    done = subprocess.run(
        [node, "--test", "--test-reporter=tap", *map(str, JS_TESTS)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    # The runner's own summary: tests ran (a file that imports nothing would pass empty).
    counts = {k: int(v) for k, v in re.findall(r"^# (pass|fail|skipped|todo) (\d+)$", report, re.M)}
    assert counts.get("pass", 0) >= 20, report
    assert counts.get("fail") == 0 and counts.get("skipped") == 0 and counts.get("todo") == 0


def test_every_end_reason_the_gateway_gives_is_explained_on_the_page() -> None:
    """The page says why a turn ended from its own table (web/state.js ``END_REASONS``); a
    reason the turn-taker gives that is missing there would show as a bare code."""
    from typing import get_args

    from gateway.proxy.turn_rule import EndReason

    source = (ROOT / "web" / "state.js").read_text()
    table = source.split("export const END_REASONS = Object.freeze({", 1)[1].split("});", 1)[0]
    keys = set(re.findall(r'^\s*(?:"([^"]+)"|([a-z]+)):', table, re.M))
    explained = {quoted or bare for quoted, bare in keys}
    assert set(get_args(EndReason)) <= explained, set(get_args(EndReason)) - explained
