"""Database faults and hostile ids: a typed error or the right row, never another project's
row, never a crash of the runtime, never a write to the database."""

from __future__ import annotations

import contextlib
import hashlib
import html
import os
import re
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from harness._harness import Harness
from harness.config import HarnessConfig
from harness.instruction_files import (
    InstructionFiles,
    InstructionFilesSettings,
    InstructionStoreError,
    create_schema,
)
from tests.scenarios import (
    DB_EXPECT,
    DB_FAULTS,
    check_db_outcome,
    db_path,
    fault_database,
    quiet_logs,
    small_world,
)

CONFIG = HarnessConfig(
    instruction_files=InstructionFilesSettings(database_timeout=0.2, walk_threads=1)
)


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


@pytest.mark.parametrize("kind", DB_FAULTS)
async def test_database_fault_gives_a_typed_error_or_the_right_row(
    tmp_path: Path, kind: str
) -> None:
    """Through ``load`` and ``build_prompt``; the cache child is untouched afterwards, a load
    without a project still works, and the database file is byte-for-byte unchanged."""
    ws, _ = small_world(tmp_path)
    with anyio.fail_after(20), quiet_logs(), fault_database(kind, tmp_path) as path:
        digest = _digest(path)
        async with Harness(CONFIG, database=path) as h:
            outcome: object
            try:
                outcome = await h.instruction_files.load(ws, agent="reviewer", project_id="acme")
            except Exception as exc:
                outcome = exc
            assert check_db_outcome(kind, outcome) is None, check_db_outcome(kind, outcome)

            try:
                prompt = await h.build_prompt(ws, agent="reviewer", project_id="acme")
            except InstructionStoreError:
                assert DB_EXPECT[kind] in ("error", "row_or_error")
            else:
                assert DB_EXPECT[kind] != "error"
                layer = next(r for r in prompt.layers if r.name == "instruction_files")
                has_row = "db:acme/reviewer" in layer.kept
                assert has_row == (DB_EXPECT[kind] in ("row", "row_or_error")), layer.kept

            [child] = h.supervisor.which_children()
            assert (child.status, child.restarts) == ("running", 0)
            plain = await h.instruction_files.load(ws, agent="reviewer")
            assert [s.path for s in plain] == ["AGENTS.md", "pkg/AGENTS.md"]
        assert _digest(path) == digest


async def test_locked_database_fails_within_its_timeout_then_recovers(tmp_path: Path) -> None:
    """A writer holding an exclusive transaction: the reader gives up after
    ``database_timeout`` with a message about the lock; once the writer is gone, nothing stale
    was cached and the next load returns the committed row."""
    ws, _ = small_world(tmp_path)
    with anyio.fail_after(20), quiet_logs():
        with fault_database("locked", tmp_path) as path:
            async with Harness(CONFIG, database=path) as h:
                start = anyio.current_time()
                with pytest.raises(InstructionStoreError, match="locked"):
                    await h.instruction_files.load(ws, agent="reviewer", project_id="acme")
                assert anyio.current_time() - start < 5
        # The holder rolled back on leaving the `with`; a new Harness on the same file:
        async with Harness(CONFIG, database=path) as h:
            found = await h.instruction_files.load(ws, agent="reviewer", project_id="acme")
            assert [s.content for s in found if s.kind == "database"] == [
                "the reviewer's row for acme"
            ]


async def test_failed_read_is_not_cached(tmp_path: Path) -> None:
    """The table appears after a failure: the very next load (same Harness) sees the row."""
    ws, _ = small_world(tmp_path)
    path = tmp_path / "late.db"
    path.write_bytes(b"")
    with anyio.fail_after(20), quiet_logs():
        async with Harness(CONFIG, database=path) as h:
            with pytest.raises(InstructionStoreError, match="agent_instructions"):
                await h.instruction_files.load(ws, agent="reviewer", project_id="acme")
            create_schema(path)
            with contextlib.closing(sqlite3.connect(path)) as db:
                db.execute(
                    "INSERT INTO agent_instructions (project_id, agent_slug, content) "
                    "VALUES ('acme', 'reviewer', 'now present')"
                )
                db.commit()
            found = await h.instruction_files.load(ws, agent="reviewer", project_id="acme")
            assert found.sources[-1].content == "now present"


HOSTILE_PROJECTS = (
    "acme",
    "ACME",
    "acme ",
    " acme",
    "acme\n",
    "acme\x00",
    "acme\x00evil",
    "acme'--",
    "acme' OR '1'='1",
    "'; DROP TABLE agent_instructions; --",
    '"acme"',
    "acme%",
    "%",
    "_cme",
    "*",
    "../acme",
    "../../etc/passwd",
    "acme/../acme",
    "acme/reviewer",
    "C:\\acme",
    "ａｃｍｅ",  # noqa: RUF001 - a full-width look-alike, on purpose
    "acme\u200b",
    "db:acme",
    '<context path="x">',
)
HOSTILE_AGENTS = ("reviewer", "Reviewer", "reviewer'--", "%", "../reviewer", "x' OR '1'='1")


def _hostile_db(path: Path) -> set[tuple[str, str]]:
    """Rows for most (project, agent) pairs, each naming its own pair; some pairs left out."""
    create_schema(path)
    rows = {
        (p, a)
        for i, p in enumerate(HOSTILE_PROJECTS)
        for j, a in enumerate(HOSTILE_AGENTS)
        if (i + j) % 4 != 3
    }
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executemany(
            "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES (?, ?, ?)",
            [(p, a, f"row for {p!r} / {a!r}") for p, a in sorted(rows)],
        )
        db.commit()
    return rows


async def test_hostile_project_ids_and_slugs_get_exactly_their_own_row(tmp_path: Path) -> None:
    """SQL syntax, LIKE wildcards, path syntax, NULs, case/space/unicode look-alikes: every
    (project, agent) pair gets its own row or none; never a neighbour's. Twice, so the second
    round reads through the cache (keys must not collide there either)."""
    ws, _ = small_world(tmp_path)
    path = tmp_path / "hostile.db"
    rows = _hostile_db(path)
    digest = _digest(path)
    with anyio.fail_after(30):
        async with Harness(CONFIG, database=path) as h:
            for _round in range(2):
                for p in HOSTILE_PROJECTS:
                    for a in HOSTILE_AGENTS:
                        found = await h.instruction_files.load(ws, agent=a, project_id=p)
                        db_rows = [s for s in found if s.kind == "database"]
                        if (p, a) in rows:
                            assert [(s.path, s.content) for s in db_rows] == [
                                (db_path(p, a), f"row for {p!r} / {a!r}")
                            ]
                        else:
                            assert db_rows == []
            [child] = h.supervisor.which_children()
            assert (child.status, child.restarts) == ("running", 0)
    assert _digest(path) == digest
    with contextlib.closing(sqlite3.connect(path)) as db:  # the DROP TABLE never ran
        assert db.execute("SELECT count(*) FROM agent_instructions").fetchone() == (len(rows),)


async def test_hostile_project_ids_through_build_prompt(tmp_path: Path) -> None:
    """The prompt's database block carries exactly that project's row, attributed to it."""
    ws, _ = small_world(tmp_path)
    path = tmp_path / "hostile.db"
    rows = _hostile_db(path)
    block = re.compile(r'<context path="(db:[^"]*)">\n(.*?)\n</context>', re.DOTALL)
    with anyio.fail_after(30):
        async with Harness(CONFIG, database=path) as h:
            for p in HOSTILE_PROJECTS:
                prompt = await h.build_prompt(ws, agent="reviewer", project_id=p)
                found = [(html.unescape(s), body) for s, body in block.findall(prompt.text)]
                if (p, "reviewer") in rows:
                    assert found == [(db_path(p, "reviewer"), f"row for {p!r} / 'reviewer'")]
                else:
                    assert found == []


async def test_empty_project_id_is_refused_not_matched(tmp_path: Path) -> None:
    """An empty project id is a caller error (ValueError), never a match on '' rows."""
    ws, _ = small_world(tmp_path)
    path = tmp_path / "empty.db"
    create_schema(path)
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(
            "INSERT INTO agent_instructions (project_id, agent_slug, content) "
            "VALUES ('', 'reviewer', 'the empty project')"
        )
        db.commit()
    with anyio.fail_after(10):
        files = InstructionFiles(database=path)
        with pytest.raises(ValueError, match="project_id"):
            await files.load(ws, agent="reviewer", project_id="")


async def test_database_path_that_is_a_fifo_fails_instead_of_hanging(tmp_path: Path) -> None:
    ws, _ = small_world(tmp_path)
    fifo = tmp_path / "instructions.db"
    os.mkfifo(fifo)
    files = InstructionFiles(database=fifo)

    def sqlite_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]

    threads = set(sqlite_threads())
    try:
        with anyio.fail_after(3):
            with pytest.raises(InstructionStoreError):
                await files.load(ws, agent="reviewer", project_id="acme")
    finally:
        # Release the reader blocked in open(2) (again each time sqlite reopens the FIFO) so
        # its non-daemon thread can end and not hold up interpreter exit.
        with anyio.move_on_after(5):
            while set(sqlite_threads()) - threads:
                with contextlib.suppress(OSError):
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
                await anyio.sleep(0.01)
        leftover = [t.name for t in set(sqlite_threads()) - threads]
        assert not leftover, f"threads still blocked on the FIFO: {leftover}"
