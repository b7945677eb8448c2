"""Incremental reloads: after ``invalidate(path)``, re-read only what the path can change, and
return exactly what a cold walk returns (property test over random edits, real files)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import harness.instruction_files.discovery._sources as files_module
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionSet,
    discover,
)
from harness.instruction_files.discovery._incremental import (
    DIRT_LIMIT,
    Base,
    Snapshot,
    add_dirt,
    scope,
    walk,
)
from harness.runtime import Supervisor
from harness.workspace import resolve_workspace
from tests.workspace.ignore_cases import git

SETTINGS = InstructionFilesSettings(walk_threads=1)
DIRS = ("", "a", "a/b", "a/b/c", "a/gen", "d", "d/e", "d/node_modules", "f")
NAMES = ("AGENTS.md", "AGENTS.override.md")
IGNORES = ("b/\n", "c\n", "AGENTS.md\n", "*.override.md\n", "gen/\n", "!AGENTS.md\n", "e/\n", "")

# An edit: (kind, directory, detail); applied to the tree, it returns the paths to invalidate.
Edit = tuple[str, str, int]
EDITS = st.tuples(
    st.sampled_from(("write", "write", "delete", "ignore", "unignore", "mkdir", "rmtree", "link")),
    st.sampled_from(DIRS),
    st.integers(0, 7),
)


def apply(root: Path, edit: Edit, serial: int) -> list[Path]:
    """Make the edit on disk; the paths a file watcher would report."""
    kind, rel, detail = edit
    folder = root / rel
    if kind == "write":
        target = folder / NAMES[detail % 2]
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.is_symlink():
            target.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text("   \n" if detail == 7 else f"rules {serial} of {rel or 'root'}\n")
        return [target]
    if kind == "delete":
        target = folder / NAMES[detail % 2]
        if target.is_symlink() or target.is_file():
            target.unlink()
        return [target]
    if kind in ("ignore", "unignore"):
        target = folder / ".gitignore"
        if kind == "ignore" and folder.is_dir():
            target.write_text(IGNORES[detail])
        elif target.exists():
            target.unlink()
        return [target]
    if kind == "mkdir":
        name = "AGENTS.md" if detail == 0 else f"new{detail}"
        made = folder / name
        if made.is_file() or made.is_symlink():  # (a dangling link too)
            return []
        made.mkdir(parents=True, exist_ok=True)
        if detail % 2:
            (made / "AGENTS.md").write_text(f"rules {serial} of a new directory\n")
        return [made]
    if kind == "rmtree":
        if rel and folder.is_dir():
            shutil.rmtree(folder)
        return [folder] if rel else []
    # "link": a symlinked instruction file, to another directory's file (or a missing one)
    if not folder.is_dir():
        return []
    target = folder / NAMES[detail % 2]
    if target.is_dir() and not target.is_symlink():
        return []
    if target.exists() or target.is_symlink():
        target.unlink()
    pointed = DIRS[detail + 1] if detail + 1 < len(DIRS) else "missing"
    os.symlink(os.path.relpath(root / pointed / "AGENTS.md", folder), target)
    return [target]


def build(root: Path, *, tracked: bool = False) -> None:
    for rel in DIRS:
        (root / rel).mkdir(parents=True, exist_ok=True)
        (root / rel / "AGENTS.md").write_text(f"rules of {rel or 'root'}\n")
    (root / "a" / ".gitignore").write_text("gen/\n")
    if tracked:  # a repository where a/gen/ is ignored but its AGENTS.md is tracked
        git(root, "init", "-q")
        git(root, "add", "-f", "a/gen/AGENTS.md")


def snapshot_of(files: InstructionFiles, root: Path) -> Snapshot:
    table = files._table
    assert table is not None
    return table.snapshots[resolve_workspace(root)][0]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    batches=st.lists(st.lists(EDITS, min_size=1, max_size=3), min_size=1, max_size=6),
    threads=st.sampled_from((1, 3)),
    tracked=st.booleans() if shutil.which("git") else st.just(False),
)
def test_every_reload_equals_a_cold_load(
    tmp_path: Path, batches: list[list[Edit]], threads: int, tracked: bool
) -> None:
    walk_settings = InstructionFilesSettings(walk_threads=threads)
    root = Path(tempfile.mkdtemp(dir=tmp_path)).resolve()  # one tree per example
    try:
        build(root, tracked=tracked)

        async def run() -> None:
            files = InstructionFiles(walk_settings)
            with anyio.fail_after(20):
                async with Supervisor([files.child_spec()]):
                    assert await files.load(root, agent="t") == discover(root, SETTINGS)
                    serial = 0
                    for batch in batches:
                        for edit in batch:
                            serial += 1
                            for path in apply(root, edit, serial):
                                files.invalidate(path)
                        reloaded = await files.load(root, agent="t")
                        assert reloaded == discover(root, SETTINGS), batches

        anyio.run(run)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_file_edit_lists_only_its_directory(tmp_path: Path) -> None:
    build(tmp_path)
    root = resolve_workspace(tmp_path)

    async def run() -> None:
        files = InstructionFiles(SETTINGS)
        with anyio.fail_after(10):
            async with Supervisor([files.child_spec()]):
                await files.load(root, agent="t")
                assert (
                    snapshot_of(files, tmp_path).walked == 7
                )  # not a/gen (gitignored), node_modules
                (tmp_path / "d" / "e" / "AGENTS.md").write_text("changed\n")
                files.invalidate(tmp_path / "d" / "e" / "AGENTS.md")
                found = await files.load(root, agent="t")
                assert snapshot_of(files, tmp_path).walked == 1
                assert "changed\n" in [source.content for source in found]
                (tmp_path / "a" / ".gitignore").write_text("")  # a subtree, its parent too
                files.invalidate(tmp_path / "a" / ".gitignore")
                found = await files.load(root, agent="t")
                assert "a/gen/AGENTS.md" in [source.path for source in found]
                assert snapshot_of(files, tmp_path).walked == 1 + 4  # root; a, a/b, a/b/c, a/gen
                files.invalidate(tmp_path)  # the workspace: a cold walk
                await files.load(root, agent="t")
                assert snapshot_of(files, tmp_path).walked == 8

    anyio.run(run)


def test_an_invalidate_during_a_load_keeps_the_snapshot_dirty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A walk an invalidate overtook is not kept as the snapshot: the path stays dirt, and
    the next load re-reads it (the guarantee of ``invalidate``, for incremental reloads)."""
    build(tmp_path)
    root = resolve_workspace(tmp_path)
    edited = tmp_path / "d" / "AGENTS.md"
    arrived, gate = threading.Event(), threading.Event()
    gate.set()

    def gated(*args: Any, **kwargs: Any) -> tuple[InstructionSet, Snapshot]:
        result = walk(*args, **kwargs)
        arrived.set()
        assert gate.wait(10)
        return result

    monkeypatch.setattr(files_module, "walk_from", gated)

    async def run() -> None:
        files = InstructionFiles(SETTINGS)
        with anyio.fail_after(10):
            async with Supervisor([files.child_spec()]):
                await files.load(root, agent="t")
                before = snapshot_of(files, tmp_path)
                edited.write_text("v1\n")
                files.invalidate(edited)
                gate.clear()
                arrived.clear()
                async with anyio.create_task_group() as group:
                    group.start_soon(partial(files.load, root, agent="t"))
                    assert await anyio.to_thread.run_sync(arrived.wait, 10)
                    edited.write_text("v2\n")  # the walk above read v1
                    files.invalidate(edited)
                    gate.set()
                table = files._table
                assert table is not None
                assert table.snapshots[root] == (before, {"d/AGENTS.md"})
                found = await files.load(root, agent="t")
                assert "v2\n" in [source.content for source in found]
                assert found == discover(root, SETTINGS)
                assert snapshot_of(files, tmp_path).walked == 1

    anyio.run(run)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/w/ws", ""),
        ("/w", ""),
        ("/", ""),
        ("/w/ws/a/AGENTS.md", "a/AGENTS.md"),
        ("/w/ws2/AGENTS.md", None),
        ("/w/other", None),
    ],
)
def test_scope_of_an_invalidated_path(path: str, expected: str | None) -> None:
    assert scope("/w/ws", path) == expected


def test_a_start_that_vanished_falls_back_to_a_cold_walk(tmp_path: Path) -> None:
    build(tmp_path)
    root = resolve_workspace(tmp_path)
    _, snapshot = walk(root, SETTINGS)
    shutil.rmtree(tmp_path / "a" / "b")  # only the file is reported, not the directory
    found, after = walk(root, SETTINGS, base=(snapshot, frozenset({"a/b/c/AGENTS.md"})))
    assert found == discover(root, SETTINGS) and after.walked == 5
    os.symlink(tmp_path / "d", tmp_path / "a" / "b")  # now a symlink: never entered
    found, again = walk(root, SETTINGS, base=(after, frozenset({"a/b/AGENTS.md"})))
    assert found == discover(root, SETTINGS) and again.walked == 1  # from a, b is no directory


def test_dirt_is_bounded(tmp_path: Path) -> None:
    build(tmp_path)
    root = resolve_workspace(tmp_path)
    _, snapshot = walk(root, SETTINGS)
    snapshots: dict[str, Base] = {root: (snapshot, frozenset())}
    add_dirt(snapshots, {f"{root}/d/f{n}" for n in range(DIRT_LIMIT)})
    assert len(snapshots[root][1]) == DIRT_LIMIT
    add_dirt(snapshots, {f"{root}/d/one-more"})
    assert root not in snapshots  # the next load walks cold
    snapshots[root] = (snapshot, frozenset())
    add_dirt(snapshots, {f"{root}x/AGENTS.md", "/elsewhere"})  # unrelated: untouched
    assert snapshots[root] == (snapshot, frozenset())
    add_dirt(snapshots, {os.path.dirname(root)})  # a directory holding the workspace
    assert root not in snapshots


def test_a_directory_named_like_an_instruction_file_is_walked_again(tmp_path: Path) -> None:
    """``invalidate`` of a directory that bears an instruction file's name (its contents
    replaced wholesale, as a watcher reports) re-walks that directory, not only its parent."""
    build(tmp_path)
    folder = tmp_path / "d" / "AGENTS.override.md"
    (folder / "x").mkdir(parents=True)
    (folder / "x" / "AGENTS.md").write_text("old\n")
    root = resolve_workspace(tmp_path)
    _, snapshot = walk(root, SETTINGS)
    shutil.rmtree(folder)
    (folder / "y").mkdir(parents=True)
    (folder / "y" / "AGENTS.md").write_text("new\n")
    found, _ = walk(root, SETTINGS, base=(snapshot, frozenset({"d/AGENTS.override.md"})))
    assert found == discover(root, SETTINGS)
    assert "d/AGENTS.override.md/y/AGENTS.md" in [source.path for source in found]
