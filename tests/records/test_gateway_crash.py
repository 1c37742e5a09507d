"""SIGKILL the gateway mid-conversation: every event it had completed is in the records after."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PY = sys.executable


class _Hang(BaseHTTPRequestHandler):
    """An agent that never answers within the conversation's lifetime."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        time.sleep(30)

    def log_message(self, *args: object) -> None:
        pass


def test_sigkill_mid_conversation_keeps_completed_events(tmp_path: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hang)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hang_url = f"http://127.0.0.1:{server.server_address[1]}/agent"
    proc = subprocess.Popen(
        [
            PY,
            "-u",
            "-m",
            "gateway",
            "talk",
            "--text",
            "are you there",
            "--agent",
            "builtin:parrot",
            "--agent",
            hang_url,
            "--allow-address",
            "127.0.0.0/8",
            "--data",
            str(tmp_path),
            "--timeout",
            "60",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            # Printed only after the envelope carrying it was recorded and delivered.
            if line.startswith("Parrot: Hi"):
                break
        else:
            raise AssertionError("".join(seen))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.shutdown()
    assert proc.returncode == -signal.SIGKILL

    listing = subprocess.run(
        [PY, "-m", "gateway", "history", "list", "--json", "--data", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    [conv] = json.loads(listing.stdout)
    shown = subprocess.run(
        [PY, "-m", "gateway", "history", "show", "--json", "--data", str(tmp_path), conv["id"]],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    records = json.loads(shown.stdout)["records"]
    envelopes = [r for r in records if r["kind"] == "envelope"]
    text = json.dumps(envelopes)
    # The person's invites went in, and the parrot's greeting came out to the person.
    assert any(r["direction"] == "in" and '"invite"' in json.dumps(r["data"]) for r in envelopes)
    assert "Hi, I'm Parrot" in text
    assert any(r["kind"] == "floor" for r in records)
    # The conversation was never ended cleanly, and the store says so honestly.
    assert conv.get("status") != "completed"
