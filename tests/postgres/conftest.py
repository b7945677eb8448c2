"""Fixtures for the tests against a real PostgreSQL server.

The server comes from ``HARNESS_TEST_POSTGRES_URL`` (``.ci/postgres test`` starts a throwaway
cluster, exports it and runs these tests; ``.ci/run`` does the same in CI). Without a reachable
server the tests skip, saying how to run them; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg
import pytest

from harness.instruction_files.stores.postgres import create_schema_postgres
from harness.stores._secrets import redact
from tests.postgres.support import (
    PASSWORD_URL_VARIABLE,
    URL_VARIABLE,
    PrivateServer,
    unavailable,
)


async def _probe(url: str) -> None:
    connection = await asyncpg.connect(url, timeout=5)
    await connection.close()


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """The URL of the test server (superuser); skips (or fails under CI) without one."""
    url = os.environ.get(URL_VARIABLE)
    if not url:
        unavailable(f"{URL_VARIABLE} is not set")
        raise AssertionError("unreachable")
    try:
        asyncio.run(_probe(url))
    except Exception as exc:
        unavailable(f"no PostgreSQL answers at {redact(url)} ({type(exc).__name__}: {exc})")
    return url


@pytest.fixture
def password_url(postgres_url: str) -> str:
    """A URL whose role must give its password (scram), as ``.ci/postgres`` sets it up."""
    url = os.environ.get(PASSWORD_URL_VARIABLE)
    if not url:
        unavailable(f"{PASSWORD_URL_VARIABLE} is not set")
        raise AssertionError("unreachable")
    return url


@pytest.fixture
async def admin(postgres_url: str) -> AsyncIterator[asyncpg.Connection]:
    """A superuser connection to a database with a fresh ``agent_instructions`` (and trigger)."""
    connection = await asyncpg.connect(postgres_url, timeout=5)
    try:
        await connection.execute(
            "DROP TABLE IF EXISTS agent_instructions CASCADE;"
            "DROP FUNCTION IF EXISTS harness_agent_instructions_changed() CASCADE;"
            "DROP FUNCTION IF EXISTS harness_agent_instructions_notify_key(text, text) CASCADE;"
        )
        await create_schema_postgres(postgres_url)
        yield connection
    finally:
        await connection.close()


@pytest.fixture
def private_server(postgres_url: str) -> Iterator[PrivateServer]:
    """A private server with a fresh schema; stopped and removed at the end."""
    directory = Path(tempfile.mkdtemp(prefix="harness-pg-"))
    server = PrivateServer(directory)
    try:
        server.start()
        asyncio.run(create_schema_postgres(server.url))
        yield server
    finally:
        server.stop()
        shutil.rmtree(directory, ignore_errors=True)
