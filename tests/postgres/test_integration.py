"""A URL wherever a path is taken: create_schema, settings, the command line, the README."""

from __future__ import annotations

import ast
import asyncio
import re
import subprocess
import sys
from pathlib import Path

import anyio
import asyncpg
import pytest

from harness import Harness, HarnessConfig, HarnessError
from harness.cli import main as cli_main
from harness.instruction_files import (
    POSTGRES_SCHEMA_SQL,
    InstructionFilesSettings,
    InstructionStoreError,
    create_schema,
)
from harness.instruction_files.stores.postgres import PostgresInstructionStore
from tests.postgres.support import put

ROOT = Path(__file__).resolve().parents[2]


async def _tables(url: str) -> tuple[bool, bool]:
    connection = await asyncpg.connect(url)
    try:
        table = await connection.fetchval("SELECT to_regclass('agent_instructions') IS NOT NULL")
        trigger = await connection.fetchval(
            "SELECT count(*) = 2 FROM pg_trigger WHERE tgname LIKE 'harness_agent_instructions%'"
        )
        return table, trigger
    finally:
        await connection.close()


async def test_create_schema_of_a_url_is_awaited_and_makes_the_table_and_trigger(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await admin.execute("DROP TABLE agent_instructions")
    with anyio.fail_after(10):
        pending = create_schema(postgres_url)
        assert await _tables(postgres_url) == (False, False)  # nothing happens until awaited
        await pending
        assert await _tables(postgres_url) == (True, True)
        await create_schema(postgres_url)  # idempotent
        await create_schema(postgres_url.replace("postgresql://", "postgres://", 1))
    assert "CREATE TABLE IF NOT EXISTS agent_instructions" in POSTGRES_SCHEMA_SQL


async def test_create_schema_of_a_path_is_done_on_return_and_may_be_awaited(
    tmp_path: Path,
) -> None:
    create_schema(tmp_path / "plain.db")
    assert (tmp_path / "plain.db").is_file()
    await create_schema(str(tmp_path / "awaited.db"))
    assert (tmp_path / "awaited.db").is_file()


def test_create_schema_of_an_unknown_scheme_is_a_typed_error() -> None:
    with pytest.raises(InstructionStoreError, match="'mysql' is not supported") as caught:
        create_schema("mysql://db/engine")
    assert isinstance(caught.value, HarnessError)


async def test_create_schema_failures_are_typed_without_the_password(tmp_path: Path) -> None:
    with anyio.fail_after(10), pytest.raises(InstructionStoreError) as caught:
        await create_schema(f"postgresql://app:Hidden-Pw-99@/e?host={tmp_path}&port=5432")
    assert "connection was refused" in str(caught.value)
    assert "Hidden-Pw-99" not in str(caught.value)


def test_importing_the_package_does_not_import_the_driver() -> None:
    code = (
        "import sys, harness.instruction_files as f; f.POSTGRES_SCHEMA_SQL; "
        "print('asyncpg' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr


async def test_listener_heartbeat_and_database_timeout_reach_the_store(postgres_url: str) -> None:
    settings = InstructionFilesSettings(listener_heartbeat=0.25, database_timeout=1.5)
    harness = Harness(HarnessConfig(instruction_files=settings), database=postgres_url)
    store = harness.store
    assert isinstance(store, PostgresInstructionStore)
    assert (store.heartbeat, store.timeout) == (0.25, 1.5)
    assert harness.database == store.name
    with anyio.fail_after(10):
        async with harness:
            while not store.cache_rows:  # noqa: ASYNC110 (no event announces it)
                await anyio.sleep(0.01)


def test_the_command_line_takes_a_url_for_db(
    postgres_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async def prepare() -> None:
        connection = await asyncpg.connect(postgres_url)
        try:
            await connection.execute("DROP TABLE IF EXISTS agent_instructions CASCADE")
            await create_schema(postgres_url)
            await put(connection, "acme", "reviewer", "Row from PostgreSQL.")
        finally:
            await connection.close()

    asyncio.run(prepare())
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Use ruff.\n", encoding="utf-8")
    status = cli_main(
        ["sources", str(workspace), "--agent", "reviewer", "--project-id", "acme", "--db",
         postgres_url]
    )  # fmt: skip
    out = capsys.readouterr()
    assert status == 0, out.err
    assert "db:acme/reviewer" in out.out and "AGENTS.md" in out.out


def test_the_readme_postgresql_example_runs(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    section = (ROOT / "docs" / "postgresql.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "postgresql://app@db/engine" in example
    code = compile(
        example.replace("postgresql://app@db/engine", postgres_url),
        "docs/postgresql.md",
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )
    namespace: dict[str, object] = {}

    async def run() -> None:
        with anyio.fail_after(20):
            result = eval(code, namespace)  # top-level await: a coroutine
            if result is not None:
                await result

    asyncio.run(run())
    assert "'AGENTS.md'" in capsys.readouterr().out
