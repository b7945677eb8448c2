"""The SQLite file behind ``PinStore`` (through aiosqlite): one row per (server, tool name).

::

    from harness.tools._sqlite import SqlitePins

    backend = await SqlitePins.open("pins.db")       # created if missing (its directory must exist)
    print(await backend.load("repo"))                # {name: Pin}
    await backend.close()

The file is marked as a pin store (``harness_schema`` row ``tool_pins``); a file that is not
SQLite, or an SQLite database of something else, is refused with ``PinStoreError`` rather than
written to. Only bound parameters reach SQL. Each ``save``/``forget`` is one transaction.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

import aiosqlite
import anyio.to_thread

from harness.tools._check import Pin, pin_rows
from harness.tools._errors import PinStoreError

__all__ = ["SqlitePins"]

_COMPONENT = "tool_pins"
_VERSION = 1
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS harness_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT OR IGNORE INTO harness_schema (component, version) VALUES ('{_COMPONENT}', {_VERSION});
CREATE TABLE IF NOT EXISTS tool_pins (
    server TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    definition TEXT NOT NULL,
    pinned_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (server, name)
) WITHOUT ROWID;
"""


class SqlitePins:
    """Pins in one SQLite file; the ``PinStore`` serialises the calls."""

    def __init__(self, connection: aiosqlite.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    @classmethod
    async def open(cls, target: str | os.PathLike[str]) -> SqlitePins:
        path = await anyio.to_thread.run_sync(_checked_path, target)
        connection = await aiosqlite.connect(path)
        try:
            await _prepare(connection, path)
        except BaseException:
            await connection.close()
            raise
        return cls(connection, path)

    async def load(self, server: str) -> dict[str, Pin]:
        """Every pin of ``server``, by tool name."""
        try:
            async with self._db.execute(
                "SELECT name, digest, definition FROM tool_pins WHERE server = ?", (server,)
            ) as cursor:
                rows = await cursor.fetchall()
        except sqlite3.Error as exc:
            raise _failed(self.path, "read", exc) from exc
        return {name: Pin(digest, json.loads(definition)) for name, digest, definition in rows}

    async def save(self, server: str, pins: Mapping[str, Pin], forget: Iterable[str] = ()) -> None:
        """Write ``pins`` (replacing any of the same names) and drop ``forget``, in one
        transaction."""
        rows = pin_rows(server, pins)
        try:
            await self._db.execute("BEGIN IMMEDIATE")
            await self._db.executemany(
                "INSERT INTO tool_pins (server, name, digest, definition) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (server, name) DO UPDATE SET digest = excluded.digest, "
                "definition = excluded.definition, pinned_at = excluded.pinned_at",
                rows,
            )
            await self._db.executemany(
                "DELETE FROM tool_pins WHERE server = ? AND name = ?",
                [(server, name) for name in forget],
            )
            await self._db.commit()
        except sqlite3.Error as exc:
            await self._db.rollback()
            raise _failed(self.path, "write", exc) from exc

    async def close(self) -> None:
        await self._db.close()


async def _prepare(connection: aiosqlite.Connection, path: Path) -> None:
    """Create the schema in a new or empty file; refuse a foreign or damaged one."""
    try:
        async with connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'"
        ) as cursor:
            tables = {row[0] for row in await cursor.fetchall()}
        if tables and "tool_pins" not in tables:
            raise PinStoreError(
                f"{str(path)!r} is an SQLite database of something else (no tool_pins table); "
                "give the pin store a file of its own"
            )
        await connection.executescript(_SCHEMA)
        await connection.commit()
    except sqlite3.DatabaseError as exc:
        raise PinStoreError(
            f"{str(path)!r} is not a usable SQLite pin store ({exc}); give the pin store a "
            "file of its own, or remove a damaged one"
        ) from exc


def _checked_path(target: str | os.PathLike[str]) -> Path:
    """The absolute path of the store, refused when its directory is missing or it is not a
    regular file."""
    path = Path(target).expanduser().absolute()
    if not path.parent.is_dir():
        raise PinStoreError(
            f"pin store {str(path)!r}: its directory does not exist; create it first"
        )
    if path.exists() and not path.is_file():
        raise PinStoreError(f"pin store {str(path)!r} is not a regular file")
    return path


def _failed(path: Path, action: str, exc: sqlite3.Error) -> PinStoreError:
    return PinStoreError(f"pin store {str(path)!r}: could not {action} the pins ({exc})")
