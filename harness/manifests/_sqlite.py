"""The SQLite file behind ``ManifestStore`` (the embedded default): schema, checks, writes.

``ManifestStore.open(path)`` uses it; on its own (the store serialises the calls)::

    from pathlib import Path
    from harness.manifests._sqlite import SqliteBackend

    backend = await SqliteBackend.open(Path("manifests.db"), create=True, wait=5.0)
    print(await backend.rows(agent=None, project_id=None, limit=10))
    await backend.aclose()
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from harness.manifests._codec import SCHEMA_VERSION, Batch, Row
from harness.manifests._errors import ManifestStoreError
from harness.manifests._watch import FileWatch
from harness.workspace import kind_of

__all__ = ["Identity", "SqliteBackend", "explain", "open_database", "write_batch"]

_COMPONENT = "manifests"
_HEADER = b"SQLite format 3\x00"
_TABLES = frozenset({"harness_schema", "manifests", "manifest_texts", "manifest_parts"})

_SCHEMA = f"""
CREATE TABLE harness_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO harness_schema (component, version) VALUES ('{_COMPONENT}', {SCHEMA_VERSION});
CREATE TABLE manifest_texts (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE manifest_parts (sha256 TEXT PRIMARY KEY, body BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE manifests (
    manifest_id TEXT NOT NULL UNIQUE,
    requested_at TEXT NOT NULL,
    agent TEXT NOT NULL,
    project_id TEXT,
    workspace TEXT NOT NULL,
    digest TEXT NOT NULL,
    manifest BLOB NOT NULL
);
CREATE INDEX manifests_by_agent ON manifests (agent, manifest_id);
CREATE INDEX manifests_by_project ON manifests (project_id, manifest_id);
"""

_LIST_COLUMNS = "manifest_id, requested_at, agent, project_id, workspace, digest, manifest"


@dataclass(frozen=True, slots=True)
class Identity:
    """Which file was opened (device and inode), to notice it being removed or replaced."""

    path: Path
    device: int
    inode: int


def _where(path: Path) -> str:
    return f"manifest store {str(path)!r}"


def explain(path: Path, exc: sqlite3.Error, doing: str) -> ManifestStoreError:
    """A ``ManifestStoreError`` that says what went wrong with ``path`` and what to do."""
    text = str(exc)
    lowered = text.lower()
    if "readonly" in lowered or "read-only" in lowered:
        advice = (
            "is read-only: give the process write access to the file and its directory, "
            "or record to another path"
        )
    elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        advice = (
            "is corrupt or not a manifest store: restore it from a backup, or record to a new path"
        )
    elif "locked" in lowered or "busy" in lowered:
        advice = "stayed locked by another connection: retry, or raise the store's timeout"
    elif "disk" in lowered and "full" in lowered:
        advice = "is on a full disk: free space, or record to another disk"
    elif "unable to open" in lowered:
        advice = "cannot be opened: check that the path and its directory exist and are readable"
    else:
        advice = f"failed ({type(exc).__name__}: {text}): check the file and its directory"
    return ManifestStoreError(f"{_where(path)}: {doing}: it {advice}")


def _check_file(path: Path, create: bool) -> bool:
    """Raise unless ``path`` may be opened; True when it must be created."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        if not create:
            raise ManifestStoreError(
                f"{_where(path)} does not exist: record builds into it first (Harness("
                "manifests=PATH) or `harness debug ... --record PATH` create it), or check "
                "the path"
            ) from None
        if not path.parent.is_dir():
            raise ManifestStoreError(
                f"{_where(path)} cannot be created: its directory {str(path.parent)!r} does "
                "not exist; create the directory first"
            ) from None
        return True
    except OSError as exc:
        raise ManifestStoreError(
            f"{_where(path)} cannot be opened ({exc.strerror}): check the path"
        ) from None
    if not stat.S_ISREG(mode):
        raise ManifestStoreError(
            f"{_where(path)} is {kind_of(mode)}, not a regular file: point it at a manifest "
            "store file (or at a new path to create one)"
        )
    with path.open("rb") as file:
        header = file.read(len(_HEADER))
    if header and header != _HEADER:
        raise ManifestStoreError(
            f"{_where(path)} is not an SQLite database (a foreign or corrupt file): point it "
            "at a manifest store, or at a new path to create one"
        )
    return False


def _check_schema(connection: sqlite3.Connection, path: Path) -> None:
    """Create the schema in an empty database; otherwise check it is ours, and its version."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    if not tables:
        connection.executescript(f"BEGIN IMMEDIATE;{_SCHEMA}COMMIT;")
        return
    if "harness_schema" not in tables:
        raise ManifestStoreError(
            f"{_where(path)} is an SQLite database of something else (tables: "
            f"{', '.join(sorted(tables)[:5])}): point it at a manifest store, or at a new path"
        )
    row = connection.execute(
        "SELECT version FROM harness_schema WHERE component = ?", (_COMPONENT,)
    ).fetchone()
    if row is None:
        raise ManifestStoreError(
            f"{_where(path)} holds another harness component's data, not manifests: record "
            "manifests to a file of their own"
        )
    version = row[0]
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ManifestStoreError(
            f"{_where(path)} has schema version {version!r}, newer than this harness reads "
            f"({SCHEMA_VERSION}): upgrade harness to read it"
        )
    if version < SCHEMA_VERSION or not tables >= _TABLES:
        raise ManifestStoreError(
            f"{_where(path)} has a damaged or unknown schema (version {version!r}, missing "
            f"{', '.join(sorted(_TABLES - tables)) or 'nothing'}): restore it from a backup"
        )


def open_database(
    path: Path, *, create: bool, timeout: float
) -> tuple[sqlite3.Connection, Identity]:
    """Open (or, with ``create``, create) the store at ``path``; checks as in the notes."""
    _check_file(path, create)
    try:
        connection = sqlite3.connect(
            path, timeout=timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise explain(path, exc, "opening") from exc
    try:
        connection.execute("PRAGMA foreign_keys = ON")
        _check_schema(connection, path)
        mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()
        if mode is None or str(mode[0]).lower() != "wal":
            connection.execute("SELECT count(*) FROM manifests").fetchone()  # readable at least
        connection.execute("PRAGMA synchronous = FULL")
        info = os.stat(path)
    except ManifestStoreError:
        connection.close()
        raise
    except sqlite3.Error as exc:
        connection.close()
        raise explain(path, exc, "opening") from exc
    return connection, Identity(path, info.st_dev, info.st_ino)


def _check_identity(identity: Identity, info: os.stat_result | None) -> None:
    """Raise unless ``info`` (the store file's ``stat`` now) is of the file that was opened."""
    if info is None:
        try:
            info = os.stat(identity.path)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise ManifestStoreError(
                f"{_where(identity.path)} cannot be written: the file is gone ({reason}); its "
                "directory was removed or the file deleted: recreate the directory and restart"
            ) from None
    if (info.st_dev, info.st_ino) != (identity.device, identity.inode):
        raise ManifestStoreError(
            f"{_where(identity.path)} cannot be written: the file was replaced since it was "
            "opened; restart the Harness to open the new file"
        )


_ROWS_PER_STATEMENT = 256
"""Rows inserted by one statement (7 values each: far below SQLite's 32,766 parameters)."""


def _insert(
    connection: sqlite3.Connection, into: str, width: int, rows: Sequence[Sequence[object]]
) -> None:
    """Insert ``rows`` with one multi-row statement per ``_ROWS_PER_STATEMENT`` rows.

    One statement is one step of SQLite, and the sqlite3 module lets go of the GIL around
    every step: row by row (``executemany``), a batch of 64 builds would take the GIL back 64
    times from an event loop that is busy building the next prompts."""
    values = f"({', '.join('?' * width)})"
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start : start + _ROWS_PER_STATEMENT]
        connection.execute(
            f"{into} VALUES {', '.join([values] * len(chunk))}",
            [value for row in chunk for value in row],
        )


def write_batch(
    connection: sqlite3.Connection, identity: Identity, batch: Batch, watch: FileWatch
) -> None:
    """Write ``batch`` in one transaction (committed, and so synced, before it returns);
    ``watch`` refuses the write, or reports it lost, when the files broke under the store.

    Each step of SQLite and each ``stat`` lets go of the GIL, and this thread then waits for
    it back from an event loop busy building prompts (up to the interpreter's switch
    interval): so the common batch, rows only, is one statement, its own transaction."""
    watch.before_write(lambda info: _check_identity(identity, info))
    try:
        if not batch.texts and not batch.parts and len(batch.rows) <= _ROWS_PER_STATEMENT:
            _insert(connection, f"INSERT INTO manifests ({_LIST_COLUMNS})", 7, batch.rows)
        else:
            _transaction(connection, batch)
    except sqlite3.Error as exc:
        raise explain(identity.path, exc, f"recording {len(batch.rows)} build(s)") from exc
    watch.after_write()


def _transaction(connection: sqlite3.Connection, batch: Batch) -> None:
    connection.execute("BEGIN IMMEDIATE")
    try:
        texts = "INSERT OR IGNORE INTO manifest_texts (sha256, body)"
        _insert(connection, texts, 2, list(batch.texts.items()))
        parts = "INSERT OR IGNORE INTO manifest_parts (sha256, body)"
        _insert(connection, parts, 2, list(batch.parts.items()))
        _insert(connection, f"INSERT INTO manifests ({_LIST_COLUMNS})", 7, batch.rows)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _lookup(
    connection: sqlite3.Connection, path: Path, table: str, addresses: Iterable[str]
) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    query = f"SELECT body FROM {table} WHERE sha256 = ?"  # table: one of ours, never input
    try:
        for address in dict.fromkeys(addresses):
            row = connection.execute(query, (address,)).fetchone()
            if row is not None and isinstance(row[0], bytes):
                found[address] = row[0]
    except sqlite3.Error as exc:
        raise explain(path, exc, f"reading {table}") from exc
    return found


def _rows(
    connection: sqlite3.Connection,
    path: Path,
    agent: str | None,
    project_id: str | None,
    limit: int,
) -> list[Row]:
    clauses, values = [], []
    if agent is not None:
        clauses.append("agent = ?")
        values.append(agent)
    if project_id is not None:
        clauses.append("project_id = ?")
        values.append(project_id)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    query = f"SELECT {_LIST_COLUMNS} FROM manifests{where} ORDER BY manifest_id DESC LIMIT ?"
    try:
        return connection.execute(query, (*values, limit)).fetchall()
    except sqlite3.Error as exc:
        raise explain(path, exc, "listing manifests") from exc


def _row(connection: sqlite3.Connection, path: Path, manifest_id: str) -> bytes | None:
    try:
        row = connection.execute(
            "SELECT manifest FROM manifests WHERE manifest_id = ?", (manifest_id,)
        ).fetchone()
    except sqlite3.Error as exc:
        raise explain(path, exc, f"reading manifest {manifest_id!r}") from exc
    return None if row is None else row[0]


_T = TypeVar("_T")


class SqliteBackend:
    """One store file on one connection; each call runs in a worker thread
    (see docs/architecture/stores.md)."""

    def __init__(self, connection: sqlite3.Connection, identity: Identity) -> None:
        self._connection = connection
        # Its own thread: a commit never queues behind the builds' file reads, which share
        # anyio's worker threads and limiter (the builds it would delay are the ones waiting
        # on it); and a call is handed to it at once, where anyio's ``to_thread`` first lets
        # every ready task run (the builds a commit just woke would delay the next commit).
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="harness-manifest-store")
        self._identity = identity
        self._watch = FileWatch(identity.path)
        self.path: Path | None = identity.path
        self.where = _where(identity.path)

    @classmethod
    async def open(cls, path: Path, *, create: bool, wait: float) -> SqliteBackend:
        """Open (or create) the file in a worker thread; ``wait`` bounds lock waits."""
        connection, identity = await anyio.to_thread.run_sync(
            lambda: open_database(path, create=create, timeout=wait)
        )
        return cls(connection, identity)

    async def _call(self, operation: Callable[[], _T]) -> _T:
        done = asyncio.get_running_loop().run_in_executor(self._thread, operation)
        with anyio.CancelScope(shield=True):  # a cancelled caller still waits for the thread
            result = await done
        return result

    async def write(self, batch: Batch) -> None:
        await self._call(lambda: write_batch(self._connection, self._identity, batch, self._watch))

    async def row(self, manifest_id: str) -> bytes | None:
        path = self._identity.path
        return await self._call(lambda: _row(self._connection, path, manifest_id))

    async def parts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        path = self._identity.path
        return await self._call(
            lambda: _lookup(self._connection, path, "manifest_parts", addresses)
        )

    async def texts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        path = self._identity.path
        return await self._call(
            lambda: _lookup(self._connection, path, "manifest_texts", addresses)
        )

    async def rows(self, *, agent: str | None, project_id: str | None, limit: int) -> list[Row]:
        path = self._identity.path
        return await self._call(lambda: _rows(self._connection, path, agent, project_id, limit))

    async def aclose(self) -> None:
        try:
            await self._call(self._connection.close)
        finally:
            self._thread.shutdown(wait=False)
