"""CONTRACT §4 InstructionFiles: acceptance tests derived from the contract text only.

The contract names no constructor for ``InstructionFiles``; the tests reach it through the
documented ``Harness(...).instruction_files`` (CONTRACT §6).
"""

from __future__ import annotations

import hashlib
import inspect
import os
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness import (
    Harness,
    InstructionSet,
    InstructionSource,
    InstructionStoreError,
)
from tests import databases

FROZEN_ERRORS = (AttributeError, TypeError, ValueError)


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def make_db(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    return databases.make_db(path, rows, updated_at="2024-01-01T00:00:00Z")


def set_row(db: Path, project: str, agent: str, content: str) -> None:
    con = sqlite3.connect(db)
    with con:
        con.execute(
            "UPDATE agent_instructions SET content = ? WHERE project_id = ? AND agent_slug = ?",
            (content, project, agent),
        )
    con.close()


def paths(found: InstructionSet) -> list[str]:
    return [s.path for s in found.sources]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    write(ws / "AGENTS.md", "root rules")
    write(ws / "b" / "AGENTS.md", "b rules")
    write(ws / "a" / "AGENTS.md", "a rules")
    write(ws / "a" / "z" / "AGENTS.md", "a/z rules")
    write(ws / "a" / "c" / "d" / "AGENTS.md", "a/c/d rules")
    write(ws / "a" / "c" / "notes.md", "not an instruction file")
    return ws


async def load(ws: Path, db: Path | None = None, **kw: Any) -> InstructionSet:
    async with Harness(database=db) as h:
        return await h.instruction_files.load(ws, **kw)


# --- Values and order ---------------------------------------------------------------------


async def test_sources_order_kinds_paths_depths(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        db = make_db(tmp_path / "i.db", [("acme", "reviewer", "db rules")])
        found = await load(tree, db, agent="reviewer", project_id="acme")
        assert isinstance(found, InstructionSet)
        assert paths(found) == [
            "AGENTS.md",
            "a/AGENTS.md",
            "b/AGENTS.md",
            "a/z/AGENTS.md",
            "a/c/d/AGENTS.md",
            "db:acme/reviewer",
        ]
        assert [s.kind for s in found.sources] == ["root"] + ["directory"] * 4 + ["database"]
        assert [s.depth for s in found.sources[:-1]] == [0, 1, 1, 2, 3]
        assert [s.content for s in found.sources] == [
            "root rules",
            "a rules",
            "b rules",
            "a/z rules",
            "a/c/d rules",
            "db rules",
        ]
        for s in found.sources[:-1]:
            raw = (tree / s.path).read_bytes()
            assert s.digest == hashlib.sha256(raw).hexdigest()
        assert found.sources[-1].digest == hashlib.sha256(b"db rules").hexdigest()
        assert list(found) == list(found.sources)
        assert isinstance(found.sources, tuple) and isinstance(found.warnings, tuple)
        assert found.warnings == ()


async def test_instruction_source_is_frozen(tree: Path) -> None:
    with anyio.fail_after(20):
        found = await load(tree, agent="reviewer")
        src = found.sources[0]
        assert isinstance(src, InstructionSource)
        with pytest.raises(FROZEN_ERRORS):
            src.content = "x"  # type: ignore[misc]


async def test_str_workspace_accepted(tree: Path) -> None:
    with anyio.fail_after(20):
        found = await load(str(tree), agent="reviewer")  # type: ignore[arg-type]
        assert paths(found)[0] == "AGENTS.md"


async def test_no_root_file(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "sub" / "AGENTS.md", "sub")
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["sub/AGENTS.md"]
        assert found.sources[0].kind == "directory" and found.sources[0].depth == 1


# --- One file per directory ----------------------------------------------------------------


async def test_override_wins_over_agents_md(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root plain")
        write(ws / "AGENTS.override.md", "root override")
        write(ws / "pkg" / "AGENTS.md", "pkg plain")
        write(ws / "pkg" / "AGENTS.override.md", "pkg override")
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["AGENTS.override.md", "pkg/AGENTS.override.md"]
        assert [s.content for s in found] == ["root override", "pkg override"]


async def test_first_regular_file_only(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        (ws / "pkg" / "AGENTS.override.md").mkdir(parents=True)  # a directory, not a file
        write(ws / "pkg" / "AGENTS.md", "pkg plain")
        if hasattr(os, "mkfifo"):
            (ws / "fifo").mkdir()
            os.mkfifo(ws / "fifo" / "AGENTS.override.md")
            write(ws / "fifo" / "AGENTS.md", "fifo dir plain")
        found = await load(ws, agent="reviewer")
        assert "pkg/AGENTS.md" in paths(found)
        assert "pkg/AGENTS.override.md" not in paths(found)
        if hasattr(os, "mkfifo"):
            assert "fifo/AGENTS.md" in paths(found)
            assert "fifo/AGENTS.override.md" not in paths(found)


# --- Never entered -------------------------------------------------------------------------


async def test_git_gitignore_vendored_never_entered(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        write(ws / ".gitignore", "build/\n")
        write(ws / ".git" / "AGENTS.md", "git decoy")
        write(ws / ".git" / "x" / "AGENTS.md", "git decoy 2")
        write(ws / "build" / "AGENTS.md", "ignored decoy")
        write(ws / "node_modules" / "pkg" / "AGENTS.md", "vendored decoy")
        write(ws / "src" / "node_modules" / "AGENTS.md", "nested vendored decoy")
        write(ws / "src" / ".gitignore", "gen/\n")
        write(ws / "src" / "gen" / "AGENTS.md", "nested ignored decoy")
        write(ws / "src" / "AGENTS.md", "src")
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["AGENTS.md", "src/AGENTS.md"]
        assert all("decoy" not in s.content for s in found)


async def test_directory_symlinks_not_followed(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        write(ws / "real" / "AGENTS.md", "real")
        outside = tmp_path / "outside"
        write(outside / "AGENTS.md", "outside decoy")
        (ws / "link_in").symlink_to(ws / "real", target_is_directory=True)
        (ws / "link_out").symlink_to(outside, target_is_directory=True)
        (ws / "loop").symlink_to(ws, target_is_directory=True)
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["AGENTS.md", "real/AGENTS.md"]


async def test_file_outside_workspace_not_read(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        secret = write(tmp_path / "secret.md", "outside decoy")
        (ws / "pkg").mkdir()
        (ws / "pkg" / "AGENTS.md").symlink_to(secret)
        found = await load(ws, agent="reviewer")
        assert all("outside decoy" not in s.content for s in found)
        assert paths(found) == ["AGENTS.md"]


async def test_one_file_two_paths_loaded_once(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        target = write(ws / "a" / "AGENTS.md", "shared")
        (ws / "b").mkdir()
        (ws / "b" / "AGENTS.md").symlink_to(target)
        (ws / "c").mkdir()
        os.link(target, ws / "c" / "AGENTS.md")
        found = await load(ws, agent="reviewer")
        assert [s.content for s in found].count("shared") == 1
        assert paths(found)[0] == "AGENTS.md"


# --- Text -----------------------------------------------------------------------------------


async def test_bom_removed(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        raw = b"\xef\xbb\xbfrules with bom"
        write(ws / "AGENTS.md", raw)
        found = await load(ws, agent="reviewer")
        assert found.sources[0].content == "rules with bom"
        assert found.sources[0].digest == hashlib.sha256(raw).hexdigest()


async def test_invalid_utf8_replaced_with_warning(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", b"ok \xff\xfe bad")
        found = await load(ws, agent="reviewer")
        assert "\ufffd" in found.sources[0].content
        assert found.sources[0].content.startswith("ok ")
        assert any("AGENTS.md" in w for w in found.warnings)


async def test_whitespace_only_skipped(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        write(ws / "blank" / "AGENTS.md", "  \n\t\n  ")
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["AGENTS.md"]
        assert any("blank/AGENTS.md" in w for w in found.warnings)


async def test_over_byte_cap_skipped_with_warning(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        write(ws / "big" / "AGENTS.md", "x" * (2 * 1024 * 1024))  # above any sane default cap
        found = await load(ws, agent="reviewer")
        assert paths(found) == ["AGENTS.md"]
        assert any("big/AGENTS.md" in w for w in found.warnings)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read any file")
async def test_unreadable_file_and_directory_skipped_with_warning(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        locked = write(ws / "locked" / "AGENTS.md", "locked")
        write(ws / "closed" / "AGENTS.md", "closed")
        locked.chmod(0)
        (ws / "closed").chmod(0)
        try:
            found = await load(ws, agent="reviewer")
        finally:
            locked.chmod(0o644)
            (ws / "closed").chmod(0o755)
        assert paths(found) == ["AGENTS.md"]
        assert any("locked" in w for w in found.warnings)
        assert any("closed" in w for w in found.warnings)


# --- Database -------------------------------------------------------------------------------


async def test_no_project_id_no_database_source(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        db = make_db(tmp_path / "i.db", [("acme", "reviewer", "db rules")])
        found = await load(tree, db, agent="reviewer")
        assert all(s.kind != "database" for s in found)


async def test_database_row_per_project_and_agent(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        db = make_db(
            tmp_path / "i.db",
            [
                ("p1", "reviewer", "p1 reviewer"),
                ("p2", "reviewer", "p2 reviewer"),
                ("p1", "tester", "p1 tester"),
            ],
        )
        async with Harness(database=db) as h:
            a = await h.instruction_files.load(tree, agent="reviewer", project_id="p1")
            b = await h.instruction_files.load(tree, agent="reviewer", project_id="p2")
            c = await h.instruction_files.load(tree, agent="tester", project_id="p1")
        assert (a.sources[-1].path, a.sources[-1].content) == ("db:p1/reviewer", "p1 reviewer")
        assert (b.sources[-1].path, b.sources[-1].content) == ("db:p2/reviewer", "p2 reviewer")
        assert (c.sources[-1].path, c.sources[-1].content) == ("db:p1/tester", "p1 tester")
        assert a.sources[-1].kind == "database"


async def test_missing_table_raises_store_error_runtime_survives(
    tree: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(20):
        db = tmp_path / "empty.db"
        sqlite3.connect(db).close()
        sqlite3.connect(db).execute("CREATE TABLE other (x)").connection.close()
        async with Harness(database=db) as h:
            with pytest.raises(InstructionStoreError) as info:
                await h.instruction_files.load(tree, agent="reviewer", project_id="acme")
            assert str(info.value)
            # the runtime is still up: a load without the database still answers
            found = await h.instruction_files.load(tree, agent="reviewer")
            assert paths(found)[0] == "AGENTS.md"


async def test_unreadable_database_raises_store_error(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        garbage = write(tmp_path / "garbage.db", b"this is not a sqlite database at all" * 200)
        async with Harness(database=garbage) as h:
            with pytest.raises(InstructionStoreError):
                await h.instruction_files.load(tree, agent="reviewer", project_id="acme")
            found = await h.instruction_files.load(tree, agent="reviewer")
            assert found.sources


async def test_missing_database_file_raises_store_error(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        async with Harness(database=tmp_path / "nope.db") as h:
            with pytest.raises(InstructionStoreError):
                await h.instruction_files.load(tree, agent="reviewer", project_id="acme")


# --- Cache and invalidate -------------------------------------------------------------------


async def test_invalidate_is_sync_returns_none_and_drops_stale_data(
    tree: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(20):
        db = make_db(tmp_path / "i.db", [("acme", "reviewer", "v1")])
        async with Harness(database=db) as h:
            files = h.instruction_files
            assert not inspect.iscoroutinefunction(files.invalidate)
            first = await files.load(tree, agent="reviewer", project_id="acme")
            assert first.sources[0].content == "root rules"
            write(tree / "AGENTS.md", "root rules v2")
            set_row(db, "acme", "reviewer", "v2")
            result = files.invalidate()
            assert result is None
            after = await files.load(tree, agent="reviewer", project_id="acme")
            assert after.sources[0].content == "root rules v2"
            assert after.sources[-1].content == "v2"


async def test_invalidate_with_filters(tree: Path, tmp_path: Path) -> None:
    with anyio.fail_after(20):
        db = make_db(tmp_path / "i.db", [("acme", "reviewer", "r1"), ("acme", "tester", "t1")])
        async with Harness(database=db) as h:
            files = h.instruction_files
            await files.load(tree, agent="reviewer", project_id="acme")
            await files.load(tree, agent="tester", project_id="acme")
            set_row(db, "acme", "reviewer", "r2")
            set_row(db, "acme", "tester", "t2")
            assert files.invalidate(tree, project_id="acme", agent="reviewer") is None
            r = await files.load(tree, agent="reviewer", project_id="acme")
            assert r.sources[-1].content == "r2"
            files.invalidate(str(tree))
            t = await files.load(tree, agent="tester", project_id="acme")
            assert t.sources[-1].content == "t2"


async def test_invalidate_during_inflight_load(tree: Path) -> None:
    """Once invalidate returns, no later load returns data read before it."""
    with anyio.fail_after(20):
        async with Harness() as h:
            files = h.instruction_files
            for i in range(5):
                write(tree / "AGENTS.md", f"version {i}")
                async with anyio.create_task_group() as tg:
                    tg.start_soon(lambda: files.load(tree, agent="reviewer"))
                    await anyio.lowlevel.checkpoint()
                    files.invalidate()
                    write(tree / "AGENTS.md", f"version {i} final")
                    files.invalidate()
                found = await files.load(tree, agent="reviewer")
                assert found.sources[0].content == f"version {i} final"


async def test_pathological_tree_neither_crashes_nor_hangs(tmp_path: Path) -> None:
    with anyio.fail_after(20):
        ws = tmp_path / "ws"
        write(ws / "AGENTS.md", "root")
        deep = ws
        for i in range(60):
            deep = deep / f"d{i}"
        write(deep / "AGENTS.md", "deep")
        (ws / "self").symlink_to(ws, target_is_directory=True)
        (ws / "dangling.md").symlink_to(tmp_path / "nowhere")
        (ws / "x").mkdir()
        (ws / "x" / "AGENTS.md").symlink_to(tmp_path / "nowhere")
        (ws / "y").mkdir()
        (ws / "y" / "AGENTS.override.md").symlink_to(ws / "y" / "AGENTS.override.md")
        found = await load(ws, agent="reviewer")
        assert paths(found)[0] == "AGENTS.md"
        assert paths(found)[-1].endswith("d59/AGENTS.md")
        assert found.sources[-1].depth == 60
