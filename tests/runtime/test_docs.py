"""docs/runtime.md: every python block runs as written and prints what its comments say."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "runtime.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def expected_output(code: str) -> list[str]:
    """The ``print(...)  # shown`` comments of a block: what it must print, in order."""
    return [m.group(1).strip() for m in re.finditer(r"print\(.*\)[ \t]+# (.*)$", code, re.M)]


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{n}" for n in range(len(BLOCKS))])
def test_a_block_runs_and_prints_what_it_says(code: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HARNESS_CONFIG", None)
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = iter(done.stdout.splitlines())
    for shown in expected_output(code):  # in order, other lines (logs) in between
        assert any(line == shown for line in printed), f"did not print {shown!r}"
