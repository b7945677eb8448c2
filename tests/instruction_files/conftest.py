"""Fixtures for the instruction-files tests: real trees, real SQLite files."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path

import pytest

from harness.instruction_files import create_schema

Writer = Callable[[str, str | bytes], Path]
DbMaker = Callable[[Iterable[tuple[str, str, object]]], Path]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace directory (with a sibling ``outside/`` for escape tests)."""
    root = tmp_path / "ws"
    root.mkdir()
    (tmp_path / "outside").mkdir()
    return root


@pytest.fixture
def write(ws: Path) -> Writer:
    """``write("a/b/AGENTS.md", text_or_bytes)`` creates the file (and its parents) in ``ws``."""

    def _write(rel: str, content: str | bytes) -> Path:
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    return _write


def insert_rows(database: Path, rows: Iterable[tuple[str, str, object]]) -> None:
    with closing(sqlite3.connect(database)) as connection:
        connection.executemany(
            "INSERT OR REPLACE INTO agent_instructions (project_id, agent_slug, content) "
            "VALUES (?, ?, ?)",
            list(rows),
        )
        connection.commit()


@pytest.fixture
def make_db(tmp_path: Path) -> DbMaker:
    """A real SQLite file with the shipped schema and the given (project, agent, content) rows."""

    def _make(rows: Iterable[tuple[str, str, object]] = ()) -> Path:
        database = tmp_path / "instructions.db"
        create_schema(database)
        insert_rows(database, rows)
        return database

    return _make
