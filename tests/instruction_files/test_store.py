"""The agent_instructions table: a real SQLite file, read-only, errors that say what to do."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path

import anyio
import pytest

from harness.instruction_files import (
    SCHEMA_SQL,
    InstructionFiles,
    InstructionFilesSettings,
    InstructionStoreError,
    create_schema,
)
from harness.runtime import Supervisor

DbMaker = Callable[[Iterable[tuple[str, str, object]]], Path]


@pytest.fixture
def workspace(ws: Path) -> Path:
    (ws / "AGENTS.md").write_text("root rules\n")
    (ws / "pkg").mkdir()
    (ws / "pkg" / "AGENTS.md").write_text("pkg rules\n")
    return ws


async def test_row_is_the_last_source(workspace: Path, make_db: DbMaker) -> None:
    database = make_db([("acme", "reviewer", "Review like acme."), ("acme", "tester", "Test.")])
    with anyio.fail_after(10):
        found = await InstructionFiles(database=database).load(
            workspace, agent="reviewer", project_id="acme"
        )
    assert [source.path for source in found] == ["AGENTS.md", "pkg/AGENTS.md", "db:acme/reviewer"]
    row = found.sources[-1]
    assert row.kind == "database" and row.depth == 0
    assert row.content == "Review like acme."
    assert row.digest == hashlib.sha256(b"Review like acme.").hexdigest()
    assert found.warnings == ()


async def test_no_project_id_means_no_database_source_and_no_database_access(
    workspace: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "never-opened.db"
    with anyio.fail_after(10):
        found = await InstructionFiles(database=missing).load(workspace, agent="reviewer")
    assert [source.kind for source in found] == ["root", "directory"]
    assert not missing.exists()


async def test_no_row_means_no_database_source_and_no_warning(
    workspace: Path, make_db: DbMaker
) -> None:
    database = make_db([("acme", "reviewer", "x")])
    with anyio.fail_after(10):
        found = await InstructionFiles(database=database).load(
            workspace, agent="planner", project_id="acme"
        )
    assert [source.kind for source in found] == ["root", "directory"]
    assert found.warnings == ()


async def test_project_id_without_a_database_is_a_warning(workspace: Path) -> None:
    with anyio.fail_after(10):
        found = await InstructionFiles().load(workspace, agent="reviewer", project_id="acme")
    assert [source.kind for source in found] == ["root", "directory"]
    assert found.warnings == (
        "db:acme/reviewer: not loaded: no database is configured "
        "(pass database= to InstructionFiles or Harness)",
    )


async def test_parameters_are_bound_not_spliced(workspace: Path, make_db: DbMaker) -> None:
    database = make_db([("acme", "reviewer", "acme only")])
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        for project in ("x' OR '1'='1", "acme' --", '"; DROP TABLE agent_instructions; --'):
            found = await files.load(workspace, agent="reviewer", project_id=project)
            assert [source.kind for source in found] == ["root", "directory"]
        found = await files.load(workspace, agent="reviewer", project_id="acme")
    assert found.sources[-1].content == "acme only"


async def test_row_content_rules(workspace: Path, make_db: DbMaker) -> None:
    database = make_db(
        [
            ("p", "blank", "  \n\t"),
            ("p", "blob", b"\xef\xbb\xbfbytes \xff\n"),
        ]
    )
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        blank = await files.load(workspace, agent="blank", project_id="p")
        blob = await files.load(workspace, agent="blob", project_id="p")
    assert [source.kind for source in blank] == ["root", "directory"]
    assert blank.warnings == ("db:p/blank: skipped: empty or whitespace-only",)
    assert blob.sources[-1].content == "bytes \ufffd\n"
    assert blob.sources[-1].digest == hashlib.sha256(b"\xef\xbb\xbfbytes \xff\n").hexdigest()
    assert len(blob.warnings) == 2 and all(
        w.startswith("db:p/blob: altered") for w in blob.warnings
    )


async def test_text_rows_are_decoded_like_files(workspace: Path, make_db: DbMaker) -> None:
    """A TEXT value holding invalid UTF-8, or a leading BOM, is altered with a warning; it does
    not fail the load (the workspace's files included)."""
    database = make_db([("p", "bom", "\ufeffpolicy\n")])
    with sqlite3.connect(database) as connection:
        connection.execute(
            "INSERT INTO agent_instructions VALUES ('p', 'bad', CAST(x'6f6bff0a' AS TEXT), '1')"
        )
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        bad = await files.load(workspace, agent="bad", project_id="p")
        bom = await files.load(workspace, agent="bom", project_id="p")
    assert [source.kind for source in bad] == ["root", "directory", "database"]
    assert bad.sources[-1].content == "ok\ufffd\n"
    assert bad.sources[-1].digest == hashlib.sha256(b"ok\xff\n").hexdigest()
    assert [w for w in bad.warnings if w.startswith("db:p/bad: altered")]
    assert bom.sources[-1].content == "policy\n"
    assert [w for w in bom.warnings if w.startswith("db:p/bom: altered")]


async def test_missing_database_file_is_an_error_and_is_not_created(
    workspace: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "typo.db"
    with anyio.fail_after(10), pytest.raises(InstructionStoreError) as caught:
        await InstructionFiles(database=missing).load(workspace, agent="r", project_id="p")
    assert "cannot be opened" in str(caught.value) and "create_schema" in str(caught.value)
    assert str(missing) in str(caught.value)
    assert not missing.exists()


async def test_missing_table_says_how_to_create_it(workspace: Path, tmp_path: Path) -> None:
    database = tmp_path / "empty.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("CREATE TABLE other (x)")
    with anyio.fail_after(10), pytest.raises(InstructionStoreError) as caught:
        await InstructionFiles(database=database).load(workspace, agent="r", project_id="p")
    message = str(caught.value)
    assert "has no agent_instructions table" in message and "create_schema" in message


async def test_wrong_columns_are_named(workspace: Path, tmp_path: Path) -> None:
    database = tmp_path / "old.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("CREATE TABLE agent_instructions (project_id, agent, body)")
    with anyio.fail_after(10), pytest.raises(InstructionStoreError, match="expected columns"):
        await InstructionFiles(database=database).load(workspace, agent="r", project_id="p")


async def test_corrupt_database_file(workspace: Path, tmp_path: Path) -> None:
    database = tmp_path / "corrupt.db"
    database.write_bytes(b"this is not sqlite at all" * 100)
    with anyio.fail_after(10), pytest.raises(InstructionStoreError, match="not a readable SQLite"):
        await InstructionFiles(database=database).load(workspace, agent="r", project_id="p")


async def test_directory_as_database(workspace: Path, tmp_path: Path) -> None:
    with anyio.fail_after(10), pytest.raises(InstructionStoreError, match="cannot be opened"):
        await InstructionFiles(database=tmp_path).load(workspace, agent="r", project_id="p")


async def test_locked_database_fails_within_the_timeout(workspace: Path, make_db: DbMaker) -> None:
    database = make_db([("p", "r", "row")])
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # rollback-journal mode: readers are locked out
    files = InstructionFiles(InstructionFilesSettings(database_timeout=0.2), database=database)
    try:
        started = time.monotonic()
        with anyio.fail_after(10), pytest.raises(InstructionStoreError) as caught:
            await files.load(workspace, agent="r", project_id="p")
        assert time.monotonic() - started < 5
        assert "locked" in str(caught.value) and "database_timeout" in str(caught.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with anyio.fail_after(10):
        found = await files.load(workspace, agent="r", project_id="p")
    assert found.sources[-1].content == "row"


async def test_store_error_leaves_the_runtime_running_and_the_cache_unpoisoned(
    workspace: Path, tmp_path: Path
) -> None:
    database = tmp_path / "later.db"
    with closing(sqlite3.connect(database)) as connection:
        connection.execute("CREATE TABLE unrelated (x)")
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]) as supervisor:
            for _ in range(3):
                with pytest.raises(InstructionStoreError):
                    await files.load(workspace, agent="r", project_id="p")
            (info,) = supervisor.which_children()
            assert info.status == "running" and info.restarts == 0
            assert files.cache_running
            with closing(sqlite3.connect(database)) as connection:  # the operator fixes it
                connection.executescript(SCHEMA_SQL)
                connection.execute(
                    "INSERT INTO agent_instructions (project_id, agent_slug, content) "
                    "VALUES ('p', 'r', 'fixed')"
                )
                connection.commit()
            found = await files.load(workspace, agent="r", project_id="p")
            assert found.sources[-1].content == "fixed"  # nothing stale was cached
            assert supervisor.which_children()[0].restarts == 0


async def test_two_projects_over_one_workspace_never_see_each_other(
    workspace: Path, make_db: DbMaker
) -> None:
    database = make_db([("alpha", "reviewer", "alpha rules"), ("beta", "reviewer", "beta rules")])
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        async with Supervisor([files.child_spec()]):
            for _ in range(3):  # cached or not, each project keeps its own row
                alpha, beta, none = (
                    await files.load(workspace, agent="reviewer", project_id="alpha"),
                    await files.load(workspace, agent="reviewer", project_id="beta"),
                    await files.load(workspace, agent="reviewer"),
                )
                assert alpha.sources[-1].content == "alpha rules"
                assert beta.sources[-1].content == "beta rules"
                assert [source.kind for source in none] == ["root", "directory"]
                assert alpha.sources[:-1] == beta.sources[:-1] == none.sources


def test_schema_is_shipped_and_idempotent(tmp_path: Path) -> None:
    database = tmp_path / "s.db"
    create_schema(database)
    create_schema(database)
    with closing(sqlite3.connect(database)) as connection:
        columns = [row[1] for row in connection.execute("PRAGMA table_info(agent_instructions)")]
        connection.execute(
            "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES ('p','a','c')"
        )
        with pytest.raises(sqlite3.IntegrityError):  # one row per (project_id, agent_slug)
            connection.execute(
                "INSERT INTO agent_instructions (project_id, agent_slug, content) "
                "VALUES ('p','a','again')"
            )
        (updated_at,) = connection.execute("SELECT updated_at FROM agent_instructions").fetchone()
    assert columns == ["project_id", "agent_slug", "content", "updated_at"]
    assert "CREATE TABLE IF NOT EXISTS agent_instructions" in SCHEMA_SQL
    assert updated_at.endswith("Z")


async def test_database_is_opened_read_only(workspace: Path, make_db: DbMaker) -> None:
    database = make_db([("p", "r", "row")])
    before = database.stat().st_mtime_ns
    with anyio.fail_after(10):
        found = await InstructionFiles(database=database).load(workspace, agent="r", project_id="p")
    assert found.sources[-1].content == "row"
    assert database.stat().st_mtime_ns == before


async def test_fifo_as_database_is_refused_before_opening(workspace: Path, tmp_path: Path) -> None:
    """sqlite would block forever in open(2) on a FIFO (database_timeout bounds locks only):
    the path is refused by its type, without any open, so no writer is needed to unblock it."""
    fifo = tmp_path / "instructions.db"
    os.mkfifo(fifo)
    try:
        with anyio.fail_after(5), pytest.raises(InstructionStoreError) as caught:
            await InstructionFiles(database=fifo).load(workspace, agent="r", project_id="p")
    finally:  # should the check regress: release a reader blocked on the FIFO so exit is clean
        for _ in range(50):
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:  # ENXIO: no reader, as expected
                break
            await anyio.sleep(0.01)
    assert "a FIFO, not a regular file" in str(caught.value)
    assert "create_schema" in str(caught.value)


async def test_symlink_to_a_fifo_as_database_is_refused(workspace: Path, tmp_path: Path) -> None:
    (tmp_path / "pipe").mkdir()
    os.mkfifo(tmp_path / "pipe" / "real.db")
    link = tmp_path / "instructions.db"
    link.symlink_to(tmp_path / "pipe" / "real.db")
    with anyio.fail_after(5), pytest.raises(InstructionStoreError, match="a FIFO"):
        await InstructionFiles(database=link).load(workspace, agent="r", project_id="p")


def _live_sqlite_workers() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]


async def test_a_cancelled_read_on_a_locked_database_lets_go_at_once_and_leaks_nothing(
    workspace: Path, make_db: DbMaker
) -> None:
    """A caller that gives up is let go within one short attempt (not the whole busy timeout),
    gets its cancellation (not a lock error), and leaves no aiosqlite worker thread behind."""
    database = make_db([("p", "r", "row")])
    holder = sqlite3.connect(database, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")  # the read waits on the lock
    files = InstructionFiles(InstructionFilesSettings(database_timeout=5.0), database=database)
    try:
        with anyio.fail_after(10):
            scope = anyio.CancelScope()
            errors: list[BaseException] = []

            async def reader() -> None:
                with scope:
                    try:
                        await files.load(workspace, agent="r", project_id="p")
                    except InstructionStoreError as exc:  # pragma: no cover - the bug
                        errors.append(exc)

            async with anyio.create_task_group() as group:
                group.start_soon(reader)
                while not _live_sqlite_workers():  # noqa: ASYNC110 - the thread is the signal
                    await anyio.sleep(0.005)  # the read has begun: it waits on the lock
                cancelled_at = time.monotonic()
                scope.cancel()
            assert time.monotonic() - cancelled_at < 1.0  # not the 5 s busy timeout
            assert scope.cancelled_caught and errors == []
            # A deadline on a build over a locked database is a timeout, not a store error.
            started = time.monotonic()
            with pytest.raises(TimeoutError), anyio.fail_after(0.2):
                await files.load(workspace, agent="r", project_id="p")
            assert time.monotonic() - started < 1.0
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _live_sqlite_workers() == []  # every attempt joined its worker before returning


async def test_no_database_worker_thread_outlives_a_read(workspace: Path, tmp_path: Path) -> None:
    """aiosqlite does not join its thread (nor await its stop after a failed connect)."""
    missing = tmp_path / "missing.db"
    good = tmp_path / "good.db"
    create_schema(good)
    files = InstructionFiles(database=missing)
    with anyio.fail_after(20):
        for _ in range(20):
            with pytest.raises(InstructionStoreError):
                await files.load(workspace, agent="r", project_id="p")
            assert _live_sqlite_workers() == []
            found = await InstructionFiles(database=good).load(workspace, agent="r", project_id="p")
            assert [s.kind for s in found] == ["root", "directory"]
            assert found.warnings == ()  # the database was read: no row, no warning
            assert _live_sqlite_workers() == []


def test_database_source_paths_name_one_row() -> None:
    from harness.instruction_files import source_path

    assert source_path("acme", "reviewer") == "db:acme/reviewer"
    assert source_path("acme/prod", "reviewer") != source_path("acme", "prod/reviewer")
    assert source_path("acme/prod", "reviewer") == "db:acme%2Fprod/reviewer"
    assert source_path("50%", "a") == "db:50%25/a"
    assert source_path("a\x1b[31m", "b\n") == "db:a%1B[31m/b%0A"  # printable
    assert source_path("projet-é", "a") == "db:projet-é/a"  # other text verbatim


async def test_aiosqlite_still_keeps_its_worker_thread_where_harness_reads_it(
    tmp_path: Path,
) -> None:
    """The one private read of aiosqlite (its worker thread, joined after each read): when a
    release moves it, this fails instead of threads silently outliving reads."""
    import aiosqlite

    from harness.instruction_files.stores._sqlite import worker_thread

    connection = aiosqlite.connect(tmp_path / "probe.db")
    thread = worker_thread(connection)
    assert isinstance(thread, threading.Thread), (
        f"aiosqlite {aiosqlite.__version__} no longer keeps its worker thread in `_thread`: "
        "update harness.instruction_files.stores._sqlite.worker_thread"
    )
    with anyio.fail_after(10):
        async with connection:
            assert thread.is_alive()
    thread.join(5)
    assert not thread.is_alive()


async def test_an_id_that_is_not_text_names_no_row(workspace: Path, make_db: DbMaker) -> None:
    """Bytes that are not UTF-8 on a command line become lone surrogates: no row can be
    theirs, so there is no database source (never a raw UnicodeEncodeError)."""
    database = make_db([("acme", "reviewer", "row")])
    files = InstructionFiles(database=database)
    with anyio.fail_after(10):
        for project, agent in (("acme\udcff", "reviewer"), ("acme", "rev\ud800iewer")):
            found = await files.load(workspace, agent=agent, project_id=project)
            assert [source.kind for source in found] == ["root", "directory"]
            assert found.warnings == ()
