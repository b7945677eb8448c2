"""The SQLite ``InstructionStore``: the agent's row in ``agent_instructions``, read-only.

The embedded default: a path given as ``database=`` (to ``Harness``, ``InstructionFiles``, the
CLI's ``--db``) opens this store. Used on its own::

    import anyio
    from harness.instruction_files import create_schema
    from harness.instruction_files.stores._sqlite import SqliteInstructionStore

    create_schema("/tmp/instructions.db")          # the table, for tests and examples

    async def main() -> None:
        store = SqliteInstructionStore("/tmp/instructions.db", timeout=5.0)
        read = await store.read("acme", "reviewer")
        print(read.source, read.warnings)          # None () : no row yet
        await store.aclose()

    anyio.run(main)

The file is opened read-only (a mistyped path is an error, not a new empty database), SQL is
parameterised, and every failure becomes an ``InstructionStoreError`` that says what to do.
"""

from __future__ import annotations

import importlib.resources
import os
import sqlite3
import stat
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiosqlite
import anyio
import anyio.lowlevel
import anyio.to_thread

from harness.instruction_files._models import InstructionStoreError
from harness.instruction_files.stores._base import StoreEvents, StoreRead
from harness.instruction_files.stores._rows import row_read, source_path, text_of
from harness.stores import fits_text
from harness.workspace import kind_of

if TYPE_CHECKING:
    from harness.runtime import ChildSpec

__all__ = [
    "SCHEMA_SQL",
    "SqliteInstructionStore",
    "create_schema",
    "read_agent_row",
    "row_read",
    "source_path",
    "worker_thread",
]

SCHEMA_SQL: str = (
    importlib.resources.files("harness.instruction_files").joinpath("schema.sql").read_text("utf-8")
)
"""The ``CREATE TABLE IF NOT EXISTS agent_instructions (...)`` statement harness ships."""

_QUERY = (
    "SELECT content, updated_at FROM agent_instructions WHERE project_id = ? AND agent_slug = ? "
    "ORDER BY updated_at DESC LIMIT 1"
)


def create_schema(database: str | os.PathLike[str]) -> None:
    """Create ``agent_instructions`` in the SQLite file ``database`` (made if absent).

    For tests, examples and local setups; production databases get the table from the
    migrations of the service that owns it. Idempotent.
    """
    with closing(sqlite3.connect(os.fspath(database))) as connection:
        connection.executescript(SCHEMA_SQL)
        connection.commit()


def _read_only_uri(database: Path) -> str:
    return database.absolute().as_uri() + "?mode=ro"


def _explain(database: Path, exc: sqlite3.Error, timeout: float) -> InstructionStoreError:
    text = str(exc)
    where = f"instructions database {str(database)!r}"
    lowered = text.lower()
    if "unable to open" in lowered or database.is_dir() or not database.exists():
        what = (
            "does not exist"
            if not database.exists()
            else "is a directory"
            if database.is_dir()
            else "is not readable"
        )
        advice = (
            f"cannot be opened ({what}): pass the path of an existing SQLite file, create "
            "one with harness.instruction_files.create_schema(path), or leave project_id out "
            "to load instruction files without the database"
        )
    elif "not a database" in lowered or "malformed" in lowered:
        advice = (
            "is not a readable SQLite database (corrupt, or another kind of file): restore it "
            "from a backup or point `database` at the right file"
        )
    elif "no such table" in lowered:
        advice = (
            "has no agent_instructions table: create it with "
            "harness.instruction_files.create_schema(path) (the SQL is "
            "harness.instruction_files.SCHEMA_SQL) or run the migration that owns it"
        )
    elif "no such column" in lowered:
        advice = (
            f"has an agent_instructions table without the expected columns ({text}): it needs "
            "project_id, agent_slug, content and updated_at (see "
            "harness.instruction_files.SCHEMA_SQL)"
        )
    elif "locked" in lowered or "busy" in lowered:
        advice = (
            f"stayed locked by another connection for {timeout:g}s: retry once the writer "
            "commits, or raise instruction_files.database_timeout"
        )
    else:
        advice = f"could not be read ({type(exc).__name__}: {text}): check the file"
    return InstructionStoreError(f"{where} {advice}")


def _refuse_special_file(database: Path) -> None:
    """Raise ``InstructionStoreError`` if ``database`` exists but is not a regular file.

    A missing path is left to sqlite (``mode=ro`` fails fast and ``_explain`` words it); a
    FIFO would block sqlite's ``open`` forever, and a directory or device is never a database.
    The ``stat`` follows symlinks, as sqlite's open does.
    """
    try:
        mode = os.stat(database).st_mode
    except OSError:
        return
    if stat.S_ISREG(mode):
        return
    raise InstructionStoreError(
        f"instructions database {str(database)!r} cannot be opened: it is {kind_of(mode)}, not a "
        "regular file (sqlite could block on it forever): point `database` at an SQLite file, "
        "create one with harness.instruction_files.create_schema(path), or leave project_id "
        "out to load instruction files without the database"
    )


def worker_thread(connection: aiosqlite.Connection) -> threading.Thread | None:
    """The thread that runs ``connection``'s statements, or None if aiosqlite hides it.

    aiosqlite has no public name for it: this is the one read of its private ``_thread``
    (a test fails the day it disappears; pyproject bounds aiosqlite's version).
    """
    thread = getattr(connection, "_thread", None)
    return thread if isinstance(thread, threading.Thread) else None


async def _join_worker(connection: aiosqlite.Connection) -> None:
    """Wait (off the loop) until the connection's worker thread has ended.

    aiosqlite stops its thread without joining it, and after a failed connect it does not
    even await the stop: the thread then reports to the event loop later, possibly after the
    loop has closed ("Event loop is closed" in that thread). Joining here keeps every thread
    this read started inside the read.
    """
    thread = worker_thread(connection)
    if thread is not None and thread.is_alive():
        await anyio.to_thread.run_sync(thread.join)


_ATTEMPT_SECONDS = 0.05
"""How long one attempt waits on a locked database: the latency of giving up on one."""
_RETRY_PAUSE = 0.01


def _is_locked(exc: sqlite3.Error) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


async def _read_row(database: Path, project_id: str, agent: str, busy_timeout: float) -> Any:
    """One read of the agent's row, waiting at most ``busy_timeout`` on a lock.

    Shielded: a connection abandoned by a cancelled caller keeps its worker thread, which later
    reports to a closed loop. The attempt is short (bounded busy wait, no FIFOs), so the
    caller's cancellation is delivered right after it.
    """
    connection = aiosqlite.connect(_read_only_uri(database), uri=True, timeout=busy_timeout)
    with anyio.CancelScope(shield=True):
        try:
            async with connection as db:
                # TEXT as its UTF-8 bytes: a row holding invalid UTF-8 is then decoded like a
                # file (U+FFFD and a warning), instead of failing the whole load.
                db.text_factory = bytes
                async with db.execute(_QUERY, (project_id, agent)) as cursor:
                    return await cursor.fetchone()
        finally:
            await _join_worker(connection)


async def read_agent_row(
    database: Path, project_id: str, agent: str, *, busy_timeout: float
) -> StoreRead:
    """The database source for (project_id, agent); ``source`` is ``None`` without a row.

    The warnings (``"db:<project>/<agent>: ..."``) name a row whose content was altered (BOM,
    invalid bytes) or skipped (NULL or whitespace-only). A locked database is waited on for
    ``busy_timeout`` seconds.
    """
    _refuse_special_file(database)
    if not (fits_text(project_id) and fits_text(agent)):
        return StoreRead(None)  # no row can hold an id that is not text (bytes on a CLI)
    # A locked database is retried in short, shielded attempts with unshielded pauses between
    # them, rather than in one busy wait of ``busy_timeout``: a caller that gives up (a
    # deadline, a cancelled build, an engine shutting down) is let go within one attempt.
    deadline = anyio.current_time() + busy_timeout
    while True:
        attempt = max(0.0, min(_ATTEMPT_SECONDS, deadline - anyio.current_time()))
        try:
            row = await _read_row(database, project_id, agent, attempt)
            break
        except sqlite3.Error as exc:
            # A caller that was cancelled meanwhile gets its cancellation, not this error.
            await anyio.lowlevel.checkpoint_if_cancelled()
            if not _is_locked(exc) or anyio.current_time() >= deadline:
                raise _explain(database, exc, busy_timeout) from exc
        await anyio.sleep(_RETRY_PAUSE)
    await anyio.lowlevel.checkpoint_if_cancelled()  # deliver a cancellation the shield held
    if row is None:
        return StoreRead(None)
    value = row[0]
    # TEXT or BLOB (sqlite is dynamically typed) arrives as bytes, decoded as a file; a number
    # is its text.
    content = value if value is None or isinstance(value, bytes) else str(value)
    return row_read(project_id, agent, content, text_of(row[1]))


class SqliteInstructionStore:
    """``InstructionStore`` over one SQLite file (opened read-only, one connection per read).

    ``timeout`` is how long a read waits on a locked database (``database_timeout``). The
    path is made absolute at construction: a later ``chdir`` does not move the database.
    Nothing is checked until the first read, so a store for a file that does not exist yet
    can be built (the read then says how to create it).
    """

    def __init__(self, database: str | os.PathLike[str], *, timeout: float = 5.0) -> None:
        self._path = Path(database).absolute()
        self._timeout = timeout

    def __repr__(self) -> str:
        return f"SqliteInstructionStore({str(self._path)!r})"

    @property
    def path(self) -> Path:
        """The absolute path of the SQLite file."""
        return self._path

    @property
    def name(self) -> str:
        return str(self._path)

    @property
    def cache_rows(self) -> bool:
        return True  # one process owns the cache; changes arrive through invalidate()

    @property
    def generation(self) -> int:
        return 0

    async def read(self, project_id: str, agent: str) -> StoreRead:
        return await read_agent_row(self._path, project_id, agent, busy_timeout=self._timeout)

    def child_specs(self, events: StoreEvents) -> Sequence[ChildSpec]:
        return ()

    async def aclose(self) -> None:
        return None  # no connection outlives a read
