"""Fixtures for the instruction-files tests: real trees, real SQLite files."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from tests.databases import insert_rows as insert_rows
from tests.databases import make_db

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


@pytest.fixture(name="make_db")
def make_db_fixture(tmp_path: Path) -> DbMaker:
    """A real SQLite file with the shipped schema and the given (project, agent, content) rows."""

    def _make(rows: Iterable[tuple[str, str, object]] = ()) -> Path:
        return make_db(tmp_path / "instructions.db", rows)

    return _make
