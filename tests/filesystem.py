"""Filesystem probes shared by test directories (import as ``tests.filesystem``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def reuses_inodes_at_once(directory: Path) -> bool:
    """Whether this filesystem hands a just-freed inode number to the next new file."""
    for _ in range(20):
        first = directory / "probe-a"
        first.write_text("a")
        number = first.stat().st_ino
        first.unlink()
        second = directory / "probe-b"
        second.write_text("b")
        reused = second.stat().st_ino == number
        second.unlink()
        if reused:
            return True
    return False


def run_python_in_child(script: str, *args: str) -> str:
    """Run ``script`` in a fresh interpreter that imports this checkout; return its stdout.

    For limits that must not touch the test process (e.g. ``RLIMIT_NOFILE``).
    """
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
