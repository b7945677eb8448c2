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


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("free", [1, 2, 20])
def test_a_small_directory_budget_is_shared_and_given_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, threads: int, free: int
) -> None:
    """A walk takes descriptors a few at a time: with fewer free than it would take, it
    takes what is free, reaches the rest from the root, and gives every one back."""
    _tree(tmp_path)
    for depth in range(12):  # deeper than what a walk takes at a time
        (tmp_path.joinpath(*[f"d{n}" for n in range(depth + 1)]) / "x").mkdir(parents=True)
    settings = InstructionFilesSettings(walk_threads=threads)
    normal = discover(tmp_path, settings)
    budget = PinBudget()
    monkeypatch.setattr(budget, "_free", free)
    monkeypatch.setattr(walk, "_DIRECTORIES", budget)
    before = len(os.listdir("/proc/self/fd"))
    small = discover(tmp_path, settings)
    assert len(os.listdir("/proc/self/fd")) == before
    assert budget._free == free
    assert [s.path for s in small] == [s.path for s in normal]
    assert small.warnings == normal.warnings == ()


def test_take_up_to_takes_what_is_free() -> None:
    budget = PinBudget()
    budget._free = 3
    assert (budget.take_up_to(8), budget.take_up_to(8), budget._free) == (3, 0, 0)
    budget.give_back(3)
    assert (budget.take_up_to(2), budget._free) == (2, 1)
