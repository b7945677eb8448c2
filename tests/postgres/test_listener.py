"""The LISTEN child on a real server: notices, lost connections, restarts, no leftovers."""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import asyncpg
import pytest

from harness.instruction_files._models import InstructionStoreError
from harness.instruction_files.stores.postgres import CHANNEL, PostgresInstructionStore
from harness.instruction_files.stores.postgres._listener import _backoff
from harness.runtime import Supervisor
from tests.postgres.support import PrivateServer, Recorder, backends, put, until

LISTENER = "harness_listener"


@asynccontextmanager
async def listening(
    url: str, recorder: Recorder, *, heartbeat: float = 5.0
) -> AsyncIterator[PostgresInstructionStore]:
    """A store whose listener child runs under a supervisor, as in the Harness tree."""
    store = PostgresInstructionStore(url, timeout=5, heartbeat=heartbeat)
    try:
        async with Supervisor(list(store.child_specs(recorder))):
            yield store
    finally:
        await store.aclose()


@dataclass
class Watching(Recorder):
    """A recorder that notes whether rows were still cacheable when it was told they are not."""

    store: PostgresInstructionStore | None = None
    seen: list[bool] = field(default_factory=list)

    def rows_unreliable(self) -> None:
        assert self.store is not None
        self.seen.append(self.store.cache_rows)
        super().rows_unreliable()


async def connected(store: PostgresInstructionStore) -> None:
    await until(lambda: store.cache_rows)


@asynccontextmanager
async def frozen_listener(store: PostgresInstructionStore) -> AsyncIterator[int]:
    """Once the listener is connected, stop its server backend (SIGSTOP) for the block: the
    connection dies silently, as behind a dead network; the backend resumes on the way out."""
    await connected(store)
    frozen = store.listener_pid
    assert frozen is not None
    try:
        os.kill(frozen, signal.SIGSTOP)
    except OSError as exc:
        pytest.skip(f"cannot stop the server's backend from here ({exc})")
    try:
        yield frozen
    finally:
        os.kill(frozen, signal.SIGCONT)


async def test_rows_are_not_cacheable_until_listen_is_active(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    store = PostgresInstructionStore(postgres_url, timeout=5)
    assert (store.cache_rows, store.generation, store.listener_pid) == (False, 0, None)
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            assert store.generation == 1
            assert store.listener_pid in await backends(admin, LISTENER)
    assert (store.cache_rows, store.listener_pid) == (False, None)
    assert store.generation == 2


async def test_each_committed_change_names_its_row(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            await put(admin, "acme", "reviewer", "v1")  # insert
            await put(admin, "acme", "reviewer", "v2")  # update
            await admin.execute(
                "UPDATE agent_instructions SET agent_slug = 'writer' WHERE agent_slug = 'reviewer'"
            )
            await admin.execute("DELETE FROM agent_instructions")
            expected = [
                ("acme", "reviewer"),
                ("acme", "reviewer"),
                ("acme", "reviewer"),
                ("acme", "writer"),
                ("acme", "writer"),
            ]
            await recorder.until(lambda: len(recorder.changed) >= len(expected))
    assert recorder.changed == expected
    assert recorder.unreliable == 1  # the shutdown only


async def test_an_uncommitted_change_says_nothing(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            transaction = admin.transaction()
            await transaction.start()
            await put(admin, "acme", "rolled", "back")
            await transaction.rollback()
            await put(admin, "acme", "committed", "yes")
            await recorder.until(lambda: bool(recorder.changed))
    assert recorder.changed == [("acme", "committed")]


@pytest.mark.parametrize(
    "statement",
    [
        "TRUNCATE agent_instructions",
        f"NOTIFY {CHANNEL}, 'not json'",
        f"""NOTIFY {CHANNEL}, '{json.dumps({"project_id": 1})}'""",
    ],
)
async def test_a_notice_naming_no_row_makes_every_row_unreliable(
    admin: asyncpg.Connection, postgres_url: str, statement: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            await admin.execute(statement)
            await recorder.until(lambda: recorder.unreliable == 1)
            assert store.cache_rows  # still listening: nothing was missed after this notice
    assert recorder.changed == []


async def test_ids_too_long_for_a_notice_still_commit_and_mean_every_row(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            await put(admin, "p" * 9000, "a", "long")
            await recorder.until(lambda: recorder.unreliable == 1)
    assert await admin.fetchval("SELECT count(*) FROM agent_instructions") == 1


async def test_a_terminated_listener_drops_rows_then_reconnects_and_listens_again(
    admin: asyncpg.Connection, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="harness.instruction_files.stores.postgres._listener")
    recorder = Watching()
    with anyio.fail_after(20):
        async with listening(postgres_url, recorder) as store:
            recorder.store = store
            await connected(store)
            first, generation = store.listener_pid, store.generation
            await admin.execute("SELECT pg_terminate_backend($1)", first)
            await recorder.until(lambda: recorder.unreliable == 1)
            assert recorder.seen == [False]  # cache_rows was already off when the cache was told
            assert store.generation > generation
            await connected(store)
            assert store.listener_pid not in (None, first)
            assert store.generation == generation + 2
            await put(admin, "acme", "reviewer", "after the reconnect")
            await recorder.until(lambda: recorder.changed == [("acme", "reviewer")])
    events = [getattr(record, "event", None) for record in caplog.records]
    assert events.count("listener_connected") == 2
    assert "listener_disconnected" in events


async def test_a_silently_dead_connection_is_noticed_within_the_heartbeat(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(20):
        async with listening(postgres_url, recorder, heartbeat=0.4) as store:
            async with frozen_listener(store) as frozen:
                with anyio.fail_after(3):  # generous: the heartbeat bound is 0.4 s
                    await recorder.until(lambda: recorder.unreliable == 1)
                assert not store.cache_rows
            await connected(store)
            assert store.listener_pid != frozen


async def test_rows_are_dropped_before_a_dead_connection_is_closed(
    admin: asyncpg.Connection, postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Closing a connection that died silently can take the whole close timeout: the cached
    rows must be dropped first, not after it."""
    caplog.set_level(logging.DEBUG, logger="harness.instruction_files.stores.postgres._listener")
    recorder = Recorder()
    with anyio.fail_after(20):
        async with listening(postgres_url, recorder, heartbeat=0.4) as store:

            def closed() -> bool:
                return any(getattr(r, "event", None) == "listener_closed" for r in caplog.records)

            async with frozen_listener(store):
                await until(closed)
    events = [getattr(record, "event", None) for record in caplog.records]
    assert events.index("listener_disconnected") < events.index("listener_closed")
    assert recorder.unreliable >= 1


async def test_the_server_stopped_and_restarted(private_server: PrivateServer) -> None:
    recorder = Recorder()
    with anyio.fail_after(60):
        async with listening(private_server.url, recorder, heartbeat=1.0) as store:
            await connected(store)
            await anyio.to_thread.run_sync(private_server.stop)
            await recorder.until(lambda: recorder.unreliable == 1)
            assert not store.cache_rows
            with pytest.raises(InstructionStoreError, match="connection was refused"):
                await store.read("acme", "reviewer")
            await anyio.to_thread.run_sync(private_server.start)
            await connected(store)
            writer = await asyncpg.connect(private_server.url)
            try:
                await put(writer, "acme", "reviewer", "back")
                await recorder.until(lambda: recorder.changed == [("acme", "reviewer")])
                read = await store.read("acme", "reviewer")
            finally:
                await writer.close()
    assert read.source is not None and read.source.content == "back"


async def test_entering_with_the_server_unreachable_succeeds_and_reads_fail_typed(
    tmp_path: Path,
) -> None:
    url = f"postgresql://app@/engine?host={tmp_path}&port=5432"
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(url, recorder) as store:
            for _ in range(3):
                with pytest.raises(InstructionStoreError, match="connection was refused"):
                    await store.read("acme", "reviewer")
            assert not store.cache_rows
        assert recorder.unreliable == 0  # it never had a connection to lose


async def test_leaving_leaves_no_connection_behind(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    recorder = Recorder()
    with anyio.fail_after(10):
        async with listening(postgres_url, recorder) as store:
            await connected(store)
            await store.read("acme", "reviewer")
            ours = await backends(admin, LISTENER, "harness")
            assert len(ours) >= 2
        while set(ours) & set(await backends(admin, LISTENER, "harness")):  # noqa: ASYNC110
            await anyio.sleep(0.01)


def test_backoff_starts_at_once_then_doubles_up_to_a_cap() -> None:
    assert _backoff(0) == 0.0
    assert 0.05 <= _backoff(1) <= 0.1
    assert 0.1 <= _backoff(2) <= 0.2
    assert all(2.5 <= _backoff(n) <= 5.0 for n in (10, 50, 10_000))


async def test_a_store_in_two_trees_caches_rows_only_while_both_listen(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    first, second = Recorder(), Recorder()
    store = PostgresInstructionStore(postgres_url, timeout=5)
    database = await admin.fetchval("SELECT current_database()")
    other = await asyncpg.connect(postgres_url, database="postgres")  # may ALTER that database
    try:
        with anyio.fail_after(20):
            async with Supervisor(list(store.child_specs(first))):
                await connected(store)
                # The second tree's listener cannot connect: its cache would miss notices.
                await other.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS false')
                try:
                    async with Supervisor(list(store.child_specs(second))):
                        for _ in range(20):
                            assert not store.cache_rows
                            await anyio.sleep(0.01)
                        await other.execute(
                            f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true'
                        )
                        await connected(store)
                        assert len(await backends(admin, LISTENER)) == 2
                finally:
                    await other.execute(f'ALTER DATABASE "{database}" WITH ALLOW_CONNECTIONS true')
                assert store.cache_rows  # the first tree still listens
    finally:
        await other.close()
        await store.aclose()
