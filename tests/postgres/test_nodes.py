"""Two ``Harness`` instances as two engine nodes on one PostgreSQL database (section 12)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import asyncpg
import pytest

from harness import Harness
from harness.instruction_files import InstructionSet, InstructionStoreError
from harness.instruction_files.stores.postgres import PostgresInstructionStore
from tests.postgres.support import PrivateServer, backends, put, until

AGENT, PROJECT = "reviewer", "acme"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "AGENTS.md").write_text("Use ruff.\n", encoding="utf-8")
    return root


@asynccontextmanager
async def nodes(url: str, count: int = 2) -> AsyncIterator[list[Harness]]:
    """``count`` Harness trees on ``url``, each listening (rows cacheable) when yielded."""
    async with AsyncExitStack() as stack:
        harnesses = [await stack.enter_async_context(Harness(database=url)) for _ in range(count)]
        for harness in harnesses:
            await until(lambda harness=harness: store_of(harness).cache_rows)
        yield harnesses


def store_of(harness: Harness) -> PostgresInstructionStore:
    store = harness.store
    assert isinstance(store, PostgresInstructionStore)
    return store


def row(found: InstructionSet) -> str | None:
    """The database source's content, or None without one."""
    rows = [source.content for source in found if source.kind == "database"]
    assert len(rows) <= 1
    return rows[0] if rows else None


async def load(harness: Harness, workspace: Path) -> str | None:
    return row(await harness.instruction_files.load(workspace, agent=AGENT, project_id=PROJECT))


async def until_row(harness: Harness, workspace: Path, expected: str | None) -> None:
    """Load until the row reads ``expected`` (bounded by the caller)."""
    while await load(harness, workspace) != expected:  # noqa: ASYNC110 (no event to wait on)
        await anyio.sleep(0.005)


async def test_a_change_committed_elsewhere_reaches_both_nodes_without_invalidate(
    admin: asyncpg.Connection, postgres_url: str, workspace: Path
) -> None:
    await put(admin, PROJECT, AGENT, "v1")
    with anyio.fail_after(20):
        async with nodes(postgres_url) as harnesses:
            for harness in harnesses:
                assert await load(harness, workspace) == "v1"
            # The rows are cached: a change that notifies nobody is not seen ...
            await admin.execute("ALTER TABLE agent_instructions DISABLE TRIGGER USER")
            await put(admin, PROJECT, AGENT, "silent")
            await admin.execute("ALTER TABLE agent_instructions ENABLE TRIGGER USER")
            for harness in harnesses:
                assert await load(harness, workspace) == "v1"
            # ... and a notified one reaches every node's next loads, no invalidate called.
            await put(admin, PROJECT, AGENT, "v2")
            for harness in harnesses:
                await until_row(harness, workspace, "v2")


async def test_a_deleted_row_leaves_every_node(
    admin: asyncpg.Connection, postgres_url: str, workspace: Path
) -> None:
    await put(admin, PROJECT, AGENT, "doomed")
    with anyio.fail_after(20):
        async with nodes(postgres_url) as harnesses:
            for harness in harnesses:
                assert await load(harness, workspace) == "doomed"
            await admin.execute("DELETE FROM agent_instructions")
            for harness in harnesses:
                await until_row(harness, workspace, None)
                found = await harness.instruction_files.load(
                    workspace, agent=AGENT, project_id=PROJECT
                )
                assert [source.path for source in found] == ["AGENTS.md"]


async def test_a_killed_listener_while_the_row_changes_never_yields_the_old_row(
    admin: asyncpg.Connection, postgres_url: str, workspace: Path
) -> None:
    await put(admin, PROJECT, AGENT, "old")
    with anyio.fail_after(30):
        async with nodes(postgres_url) as harnesses:
            node = harnesses[0]
            store = store_of(node)
            assert await load(node, workspace) == "old"
            generation = store.generation
            await admin.execute("SELECT pg_terminate_backend($1)", store.listener_pid)
            # Committed while the listener is down: its notice is lost for this node. The
            # trigger is off too, so only the loss handling can make the node read again.
            await admin.execute("ALTER TABLE agent_instructions DISABLE TRIGGER USER")
            await put(admin, PROJECT, AGENT, "new")
            await admin.execute("ALTER TABLE agent_instructions ENABLE TRIGGER USER")
            while True:
                noticed = store.generation != generation
                seen = await load(node, workspace)
                if noticed:  # the node knows it lost notices: never the old row again
                    assert seen == "new"
                if seen == "new" and store.cache_rows:
                    break
                assert seen in ("old", "new")
                await anyio.sleep(0.001)
            for _ in range(20):
                assert await load(node, workspace) == "new"
            # Notices work again after the reconnect, on both nodes.
            await put(admin, PROJECT, AGENT, "newer")
            for harness in harnesses:
                await until_row(harness, workspace, "newer")


async def test_the_server_stopped_and_restarted_under_load(
    private_server: PrivateServer, workspace: Path
) -> None:
    outcomes: dict[str, int] = {"row": 0, "error": 0}
    latest = ["v0"]

    async def reader(harness: Harness, stop: anyio.Event) -> None:
        while not stop.is_set():
            try:
                seen = await load(harness, workspace)
            except InstructionStoreError:
                outcomes["error"] += 1
            else:
                outcomes["row"] += 1
                assert seen is not None and seen.startswith("v")
            await anyio.sleep(0.002)

    writer = await asyncpg.connect(private_server.url)
    try:
        await put(writer, PROJECT, AGENT, "v0")
    finally:
        await writer.close()
    with anyio.fail_after(90):
        async with nodes(private_server.url) as harnesses, anyio.create_task_group() as group:
            stop = anyio.Event()
            for harness in harnesses:
                group.start_soon(reader, harness, stop)
            await anyio.sleep(0.2)
            await anyio.to_thread.run_sync(private_server.stop)
            for harness in harnesses:
                await until(lambda harness=harness: not store_of(harness).cache_rows)
            errors = outcomes["error"]
            await until(lambda: outcomes["error"] > errors)  # loads fail typed, nothing crashes
            await anyio.to_thread.run_sync(private_server.start)
            for harness in harnesses:
                await until(lambda harness=harness: store_of(harness).cache_rows)
            writer = await asyncpg.connect(private_server.url)
            try:
                latest[0] = "v1"
                await put(writer, PROJECT, AGENT, "v1")
            finally:
                await writer.close()
            for harness in harnesses:
                await until_row(harness, workspace, "v1")
            stop.set()
    assert outcomes["row"] > 0 and outcomes["error"] > 0


async def test_leaving_the_harness_leaves_no_connection_behind(
    admin: asyncpg.Connection, postgres_url: str, workspace: Path
) -> None:
    await put(admin, PROJECT, AGENT, "x")
    with anyio.fail_after(20):
        async with nodes(postgres_url) as harnesses:
            for harness in harnesses:
                await load(harness, workspace)
            ours = await backends(admin, "harness_listener", "harness")
            assert len(ours) >= 4  # two listeners, two pooled connections
        while set(ours) & set(await backends(admin, "harness_listener", "harness")):  # noqa: ASYNC110
            await anyio.sleep(0.01)


async def test_entering_a_harness_whose_server_is_down_succeeds(
    tmp_path: Path, workspace: Path
) -> None:
    url = f"postgresql://app@/engine?host={tmp_path}&port=5432"
    with anyio.fail_after(10):
        async with Harness(database=url) as harness:
            with pytest.raises(InstructionStoreError, match="connection was refused"):
                await load(harness, workspace)
            found = await harness.instruction_files.load(workspace, agent=AGENT)
            assert [source.path for source in found] == ["AGENTS.md"]  # no project: no row
