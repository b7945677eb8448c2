"""Helpers for the PostgreSQL tests: the server's URLs, rows, backends, an events recorder."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import asyncpg
import pytest

URL_VARIABLE = "HARNESS_TEST_POSTGRES_URL"
PASSWORD_URL_VARIABLE = "HARNESS_TEST_POSTGRES_PASSWORD_URL"
SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "postgres"
HOW_TO_RUN = "run `.ci/postgres test` (it starts a throwaway PostgreSQL and runs these tests)"


def unavailable(reason: str) -> None:
    """Skip, or fail under CI (where a server must be running)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}", pytrace=False)
    pytest.skip(f"{reason}: {HOW_TO_RUN}")


async def put(connection: asyncpg.Connection, project: str, agent: str, content: str) -> None:
    """Insert or replace the row of (project, agent), committed when this returns."""
    await connection.execute(
        "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES ($1, $2, $3) "
        "ON CONFLICT (project_id, agent_slug) DO UPDATE SET content = EXCLUDED.content, "
        "updated_at = EXCLUDED.updated_at",
        project,
        agent,
        content,
    )


async def backends(connection: asyncpg.Connection, *names: str) -> list[int]:
    """Server pids of this database's sessions whose application_name is one of ``names``."""
    rows = await connection.fetch(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND application_name = ANY($1::text[]) AND pid <> pg_backend_pid()",
        list(names),
    )
    return [row["pid"] for row in rows]


async def until(predicate: Callable[[], bool], pause: float = 0.01) -> None:
    """Return once ``predicate()`` holds (callers bound this with ``anyio.fail_after``)."""
    while not predicate():  # noqa: ASYNC110 (for states that no event announces)
        await anyio.sleep(pause)


@dataclass
class Recorder:
    """A ``StoreEvents`` that records what the listener told it and wakes waiters."""

    changed: list[tuple[str, str]] = field(default_factory=list)
    unreliable: int = 0
    _news: anyio.Event = field(default_factory=anyio.Event)

    def row_changed(self, project_id: str, agent: str) -> None:
        self.changed.append((project_id, agent))
        self._wake()

    def rows_unreliable(self) -> None:
        self.unreliable += 1
        self._wake()

    def _wake(self) -> None:
        self._news.set()
        self._news = anyio.Event()

    async def until(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds, woken by each event (bound it by the caller)."""
        while not predicate():
            await self._news.wait()


@dataclass
class PrivateServer:
    """A cluster of its own (``.ci/postgres start`` in a temporary directory), to stop at will."""

    directory: Path
    url: str = ""

    def start(self) -> None:
        done = subprocess.run(
            [str(SCRIPT), "start", str(self.directory)], capture_output=True, text=True, timeout=120
        )
        if done.returncode != 0:
            unavailable(f"cannot start a private PostgreSQL: {done.stderr.strip()[-500:]}")
        for line in done.stdout.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            if name == URL_VARIABLE:
                self.url = value.strip("'")

    def stop(self) -> None:
        subprocess.run([str(SCRIPT), "stop", str(self.directory)], capture_output=True, timeout=60)
