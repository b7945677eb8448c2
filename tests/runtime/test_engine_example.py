"""The engine example (examples/engine) runs end to end: 100 sessions, hooks, crashes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DRIVER = Path(__file__).resolve().parents[2] / "examples" / "engine" / "driver.py"


def test_the_driver_starts_100_sessions_and_survives_the_crashes() -> None:
    env = {key: value for key, value in os.environ.items() if key != "HARNESS_CONFIG"}
    done = subprocess.run(
        [sys.executable, str(DRIVER)],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "started 100 sessions" in out
    assert (
        "100 turns: 80 tool calls ran, 10 blocked by the pre_tool_use hook, 10 tools crashed" in out
    )
    assert "recorded 100 manifests" in out
    assert "destructive command refused by hooks/pre_tool_use.sh" in out
    assert "crashed 12 sessions on purpose: down reasons {'SessionCrashed': 12}" in out
    assert "restarted 12 of them (found again by id); 88 others untouched" in out
    assert "supervisor: 100 running, 12 restarts" in out
    assert "stopped: 0 sessions still found by id" in out
