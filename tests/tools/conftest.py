"""The pin store targets every pin test runs against: a SQLite file, and PostgreSQL when a
test server is configured (skipped without one, failing under CI)."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import asyncpg
import pytest

from tests.postgres.support import URL_VARIABLE, unavailable


async def _fresh(url: str) -> None:
    connection = await asyncpg.connect(url, timeout=5)
    try:
        await connection.execute("DROP TABLE IF EXISTS harness_tool_pins")
    finally:
        await connection.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def pin_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a test's ``PinStore.open`` points: empty every time."""
    if request.param == "sqlite":
        return str(tmp_path / "pins.db")
    url = os.environ.get(URL_VARIABLE)
    if not url:
        unavailable(f"{URL_VARIABLE} is not set")
        raise AssertionError("unreachable")
    with anyio.fail_after(10):
        await _fresh(url)
    return url
