"""Our ignore decisions against the real ``git`` on random trees and ignore files.

Each batch is a git repository of 40 random cases (see ``tests/workspace/ignore_cases.py``:
root and nested ``.gitignore`` files, sometimes ``.git/info/exclude`` and ``git add -f``d
files, patterns drawn from POSIX classes, ranges, escapes, negations, slashes, ``**`` runs,
trailing blanks, non-ASCII names); every path of it is compared. Fixed seeds keep the suite
deterministic; ``benchmarks/ignore_differential.py`` runs the larger count.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.workspace.ignore_cases import GIT, compare_batch, compare_load

pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")

BATCHES = 40
CASES = 40  # per batch: 1,600 cases in the suite


@pytest.mark.parametrize("seed", range(BATCHES))
def test_random_ignore_files_agree_with_git(tmp_path: Path, seed: int) -> None:
    compared, divergences = compare_batch(random.Random(seed), tmp_path / "repo", CASES)
    assert compared > 0
    assert divergences == []


LOAD_BATCHES = 25  # 1,000 more cases, compared on what discovery loads


@pytest.mark.parametrize("seed", range(LOAD_BATCHES))
def test_the_instruction_files_loaded_are_those_git_shows(tmp_path: Path, seed: int) -> None:
    """``discover`` (the walk behind ``InstructionFiles.load``) loads, per directory, the first
    of ``AGENTS.override.md`` / ``AGENTS.md`` that is a regular file git does not ignore, or
    is the local ``AGENTS.override.md`` outside every ignored directory."""
    expected, divergences = compare_load(random.Random(10_000 + seed), tmp_path / "repo", CASES)
    assert expected > 0
    assert divergences == []
