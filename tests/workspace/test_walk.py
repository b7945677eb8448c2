"""The descriptor walk: same result whether directories stay open or are reached from the root."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.instruction_files import InstructionFilesSettings, discover
from harness.workspace import PinBudget
from harness.workspace import _identity as identity
from harness.workspace import _walk as walk


def _tree(ws: Path) -> None:
    for rel in ("AGENTS.md", "a/AGENTS.md", "a/b/c/AGENTS.md", "a/b/d/AGENTS.md", "e/f/AGENTS.md"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"{rel}\n")


@pytest.mark.parametrize("threads", [1, 3])
def test_past_the_directory_budget_the_walk_reaches_directories_from_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int
) -> None:
    _tree(tmp_path)
    settings = InstructionFilesSettings(walk_threads=threads)
    normal = discover(tmp_path, settings)
    empty = PinBudget()
    monkeypatch.setattr(empty, "_free", 0)
    monkeypatch.setattr(walk, "_DIRECTORIES", empty)
    before = len(os.listdir("/proc/self/fd"))
    starved = discover(tmp_path, settings)
    assert len(os.listdir("/proc/self/fd")) == before
    assert (
        [s.path for s in starved]
        == [s.path for s in normal]
        == [
            "AGENTS.md",
            "a/AGENTS.md",
            "e/f/AGENTS.md",
            "a/b/c/AGENTS.md",
            "a/b/d/AGENTS.md",
        ]
    )
    assert starved.warnings == normal.warnings == ()


def test_directory_descriptors_are_given_back(tmp_path: Path) -> None:
    _tree(tmp_path)
    discover(tmp_path)
    assert walk._DIRECTORIES._free in (None, identity.pin_capacity())
