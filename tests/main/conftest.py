"""Fixtures for the main-job tests: the shipped example and small real workspaces."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli import ACME, ACME_DB
from tests.databases import make_db


@pytest.fixture(name="make_db")
def make_db_fixture(tmp_path: Path) -> Callable[..., Path]:
    """Create a real SQLite database with ``agent_instructions`` rows."""

    def make(rows: list[tuple[str, str, str]], name: str = "instructions.db") -> Path:
        return make_db(tmp_path / name, rows, updated_at="2026-01-01T00:00:00Z")

    return make


@pytest.fixture
def acme() -> Path:
    return ACME


@pytest.fixture
def acme_db() -> Path:
    return ACME_DB


@pytest.fixture
def tree(tmp_path: Path) -> Callable[[dict[str, str | bytes]], Path]:
    """Write ``{relative path: content}`` into a fresh workspace directory and return it."""

    def write(files: dict[str, str | bytes]) -> Path:
        root = tmp_path / "ws"
        for relative, content in files.items():
            path = root / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return root

    return write
