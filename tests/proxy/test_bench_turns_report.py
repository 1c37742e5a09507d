"""``scripts/bench_turns.py``'s report of a paced run, on rows made up here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_turns", ROOT / "scripts/bench_turns.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _row(kind: str, pause_ms: int, utterances: int, total: float) -> dict:
    return {
        "kind": kind,
        "voice": "piper",
        "pauseMs": pause_ms,
        "text": "Set an alarm | for seven.",
        "heard": ["Set", "an", "alarm."],
        "utterances": utterances,
        "endpoint": total - 90,
        "total": total,
        "endReason": "finished",
        "waitMs": 200,
        "verdictMs": 250,
        "decode": 190.0,
    }


def test_a_run_of_paused_requests_only_is_reported():
    # --kinds paused: no complete request, so no latency line (this raised IndexError).
    rows = [_row("paused", 350, 2, 400.0), _row("paused", 500, 1, 900.0)]
    out = _bench().report_paced("default", rows)
    assert out["cut350"] == "1/1" and out["cut500"] == "0/1" and out["cut700"] == "0/0"
    assert "totalMedian" not in out and out["pausedWaitMedian"] == 810.0


def test_complete_requests_give_the_latency_figures():
    rows = [_row("complete", 0, 1, t) for t in (300.0, 400.0, 500.0)]
    out = _bench().report_paced("default", rows)
    assert (out["totalMedian"], out["totalP95"]) == (400.0, 500.0)
    assert out["cutComplete"] == "0/3" and out["endReasons"] == {"finished": 3}
