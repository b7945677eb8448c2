"""Real SQLite instruction databases for tests (import as ``tests.databases``): the shipped
``agent_instructions`` schema and the rows a test needs, in one call."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

from harness.instruction_files import create_schema

Row = tuple[str, str, object]
"""(project_id, agent_slug, content)."""


def insert_rows(database: Path, rows: Iterable[Row], *, updated_at: str | None = None) -> None:
    """Insert or replace ``rows``; ``updated_at`` defaults to the time of the insert."""
    with closing(sqlite3.connect(database)) as connection:
        if updated_at is None:
            connection.executemany(
                "INSERT OR REPLACE INTO agent_instructions (project_id, agent_slug, content) "
                "VALUES (?, ?, ?)",
                list(rows),
            )
        else:
            connection.executemany(
                "INSERT OR REPLACE INTO agent_instructions "
                "(project_id, agent_slug, content, updated_at) VALUES (?, ?, ?, ?)",
                [(*row, updated_at) for row in rows],
            )
        connection.commit()


def make_db(database: Path, rows: Iterable[Row] = (), *, updated_at: str | None = None) -> Path:
    """``database`` with the shipped schema (created if missing) and ``rows``; returns it."""
    create_schema(database)
    insert_rows(database, rows, updated_at=updated_at)
    return database


def plain_db(database: Path, rows: Iterable[Row]) -> Path:
    """``database`` with the four columns a user's own table may have (no keys, no defaults)
    and ``rows`` with an empty ``updated_at``: what harness must read besides its own schema."""
    with closing(sqlite3.connect(database)) as connection:
        connection.execute(
            "CREATE TABLE agent_instructions (project_id TEXT, agent_slug TEXT, content TEXT,"
            " updated_at TEXT)"
        )
        connection.executemany(
            "INSERT INTO agent_instructions VALUES (?, ?, ?, '')", [tuple(row) for row in rows]
        )
        connection.commit()
    return database
