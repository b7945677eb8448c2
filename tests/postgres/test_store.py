"""PostgresInstructionStore on a real server: reads, skipped rows, ids as data, typed errors."""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import anyio
import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.instruction_files._models import InstructionStoreError
from harness.instruction_files.stores import InstructionStore, StoreRead
from harness.instruction_files.stores.postgres import (
    POSTGRES_SCHEMA_SQL,
    PostgresInstructionStore,
    PostgresOptionError,
)
from harness.stores._secrets import passwords_of, redact
from tests.postgres.support import backends, put

SECRET = "Zebra-Secret-4711"


async def read_row(url: str, project: str, agent: str) -> StoreRead:
    """One read by a fresh store, closed afterwards."""
    store = PostgresInstructionStore(url, timeout=5)
    try:
        with anyio.fail_after(10):
            return await store.read(project, agent)
    finally:
        await store.aclose()


async def test_reads_the_row_as_the_sqlite_store_shapes_it(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await put(admin, "acme", "reviewer", "Review every diff.\n")
    assert isinstance(PostgresInstructionStore(postgres_url, timeout=5), InstructionStore)
    read = await read_row(postgres_url, "acme", "reviewer")
    assert read.source is not None
    assert read.source.kind == "database"
    assert read.source.path == "db:acme/reviewer"
    assert read.source.content == "Review every diff.\n"
    assert read.source.digest == hashlib.sha256(b"Review every diff.\n").hexdigest()
    assert read.source.depth == 0
    assert read.warnings == ()
    stored = await admin.fetchval("SELECT updated_at FROM agent_instructions")
    assert read.updated_at == stored


async def test_an_agent_without_a_row_has_no_source_and_no_warning(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await put(admin, "acme", "reviewer", "x")
    store = PostgresInstructionStore(postgres_url, timeout=5)
    try:
        with anyio.fail_after(10):
            assert await store.read("acme", "writer") == (await store.read("other", "reviewer"))
            read = await store.read("acme", "writer")
    finally:
        await store.aclose()
    assert read.source is None and read.warnings == () and read.updated_at is None


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "its content is NULL"), ("  \n\t ", "empty or whitespace-only"), ("", "empty")],
)
async def test_null_and_whitespace_rows_are_skipped_with_a_warning(
    admin: asyncpg.Connection, postgres_url: str, content: str | None, reason: str
) -> None:
    await admin.execute("ALTER TABLE agent_instructions ALTER COLUMN content DROP NOT NULL")
    await admin.execute(
        "INSERT INTO agent_instructions (project_id, agent_slug, content) VALUES ('p', 'a', $1)",
        content,
    )
    read = await read_row(postgres_url, "p", "a")
    assert read.source is None
    assert len(read.warnings) == 1
    assert read.warnings[0].startswith("db:p/a: skipped: ") and reason in read.warnings[0]


async def test_a_leading_bom_is_removed_with_a_warning_and_the_digest_is_of_the_bytes(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await put(admin, "p", "a", "\ufeffhello")
    read = await read_row(postgres_url, "p", "a")
    assert read.source is not None and read.source.content == "hello"
    assert read.source.digest == hashlib.sha256("\ufeffhello".encode()).hexdigest()
    assert read.warnings == ("db:p/a: altered: leading UTF-8 byte order mark removed",)


INJECTIONS = [
    "x' OR '1'='1",
    "'; DROP TABLE agent_instructions; --",
    "$1",
    "a/b",
    "%2F",
    '"quoted"',
    "\\",
    "日本語",
]


@pytest.mark.parametrize("hostile", INJECTIONS)
async def test_ids_that_look_like_sql_are_data(
    admin: asyncpg.Connection, postgres_url: str, hostile: str
) -> None:
    await put(admin, "p", "a", "the only ordinary row")
    await put(admin, hostile, hostile, f"row of {hostile}")
    store = PostgresInstructionStore(postgres_url, timeout=5)
    try:
        with anyio.fail_after(10):
            own = await store.read(hostile, hostile)
            mixed = await store.read("p", hostile)
            ordinary = await store.read("p", "a")
    finally:
        await store.aclose()
    assert own.source is not None and own.source.content == f"row of {hostile}"
    assert mixed.source is None
    assert ordinary.source is not None and ordinary.source.content == "the only ordinary row"
    assert await admin.fetchval("SELECT count(*) FROM agent_instructions") == 2


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(project=st.text(max_size=12), agent=st.text(max_size=12))
async def test_any_ids_read_exactly_their_own_row(
    admin: asyncpg.Connection, postgres_url: str, project: str, agent: str
) -> None:
    storable = all(
        "\x00" not in s and s.encode("utf-8", "surrogatepass") == s.encode("utf-8", "replace")
        for s in (project, agent)
    )
    await admin.execute("DELETE FROM agent_instructions")
    await put(admin, "decoy", "decoy", "decoy")
    if storable:
        await put(admin, project, agent, "mine")
    read = await read_row(postgres_url, project, agent)
    if storable:
        assert read.source is not None and read.source.content == "mine"
    else:
        assert read.source is None and read.warnings == ()


async def _error_of(store: PostgresInstructionStore) -> InstructionStoreError:
    try:
        with anyio.fail_after(10):
            await store.read("acme", "reviewer")
    except InstructionStoreError as exc:
        return exc
    finally:
        await store.aclose()
    raise AssertionError("the read succeeded")


async def test_a_missing_table_is_a_typed_error_that_says_to_create_it(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await admin.execute("DROP TABLE agent_instructions")
    error = await _error_of(PostgresInstructionStore(postgres_url, timeout=5))
    assert "has no agent_instructions table" in str(error)
    assert "create_schema(url)" in str(error) and "POSTGRES_SCHEMA_SQL" in str(error)


async def test_a_missing_database_is_a_typed_error_naming_it(postgres_url: str) -> None:
    url = postgres_url.replace("/harness_test?", "/no_such_database?")
    assert url != postgres_url
    error = await _error_of(PostgresInstructionStore(url, timeout=5))
    assert "'no_such_database' does not exist" in str(error) and "createdb" in str(error)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("where", ["socket", "tcp"])
async def test_a_refused_connection_is_a_typed_error_without_the_password(
    tmp_path: Path, where: str
) -> None:
    if where == "socket":
        url = f"postgresql://app:{SECRET}@/engine?host={tmp_path}&port=5432"
    else:
        url = f"postgresql://app:{SECRET}@127.0.0.1:{_free_port()}/engine"
    error = await _error_of(PostgresInstructionStore(url, timeout=5))
    assert "connection was refused" in str(error) and "start PostgreSQL" in str(error)
    assert SECRET not in str(error) and "app:***@" in str(error)
    assert error.__cause__ is None or SECRET not in repr(error.__cause__)


async def test_a_wrong_password_is_a_typed_error_that_never_shows_it(password_url: str) -> None:
    [right] = passwords_of(password_url)
    url = password_url.replace(f":{right}@", f":{SECRET}@")
    error = await _error_of(PostgresInstructionStore(url, timeout=5))
    assert "refused the login" in str(error) and "check the user and password" in str(error)
    assert SECRET not in str(error) and right not in str(error)


async def test_the_right_password_without_a_grant_says_to_grant_and_then_reads(
    admin: asyncpg.Connection, password_url: str
) -> None:
    await put(admin, "p", "a", "granted")
    error = await _error_of(PostgresInstructionStore(password_url, timeout=5))
    assert "GRANT SELECT" in str(error)
    role = password_url.split("://", 1)[1].split(":", 1)[0]
    await admin.execute(f"GRANT SELECT ON agent_instructions TO {role}")
    store = PostgresInstructionStore(password_url, timeout=5)
    try:
        with anyio.fail_after(10):
            read = await store.read("p", "a")
    finally:
        await store.aclose()
    assert read.source is not None and read.source.content == "granted"


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://app:{SECRET}@db:notaport/engine",
        f"postgresql://app:{SECRET}@[::1/engine",
        f"postgres://app:{SECRET}@/engine?host=/nowhere&sslmode=bogus",
    ],
)
async def test_a_bad_url_is_a_typed_error_without_the_password(url: str) -> None:
    error = await _error_of(PostgresInstructionStore(url, timeout=5))
    assert SECRET not in str(error)
    assert error.__cause__ is None or SECRET not in repr(error.__cause__)


async def test_a_statement_held_up_past_the_timeout_is_a_typed_error(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    async with admin.transaction():
        await admin.execute("LOCK TABLE agent_instructions IN ACCESS EXCLUSIVE MODE")
        error = await _error_of(PostgresInstructionStore(postgres_url, timeout=0.2))
    assert "did not answer within 0.2s" in str(error) and "database_timeout" in str(error)


async def test_reads_are_read_only_transactions(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    store = PostgresInstructionStore(postgres_url, timeout=5)
    try:
        with anyio.fail_after(10):
            await store.read("p", "a")
            pool = await store._pool_here()
            async with pool.acquire() as connection:
                assert await connection.fetchval("SHOW default_transaction_read_only") == "on"
                assert await connection.fetchval("SHOW statement_timeout") == "5s"
    finally:
        await store.aclose()


async def test_a_pooled_connection_killed_by_the_server_is_replaced(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    await put(admin, "p", "a", "still here")
    store = PostgresInstructionStore(postgres_url, timeout=5)
    try:
        with anyio.fail_after(10):
            await store.read("p", "a")
            for pid in await backends(admin, "harness"):
                await admin.execute("SELECT pg_terminate_backend($1)", pid)
            read = await store.read("p", "a")
    finally:
        await store.aclose()
    assert read.source is not None and read.source.content == "still here"


async def test_aclose_leaves_no_connection_and_is_idempotent(
    admin: asyncpg.Connection, postgres_url: str
) -> None:
    store = PostgresInstructionStore(postgres_url, timeout=5)
    with anyio.fail_after(10):
        await store.read("p", "a")
        assert await backends(admin, "harness")
        await store.aclose()
        await store.aclose()
        while await backends(admin, "harness"):  # noqa: ASYNC110 (no event: the server's view)
            await anyio.sleep(0.01)


def test_the_name_is_the_url_without_its_password() -> None:
    store = PostgresInstructionStore(f"postgresql://app:{SECRET}@db:5432/engine", timeout=1)
    assert store.name == "postgresql://app:***@db:5432/engine"
    assert SECRET not in repr(store)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://db/engine", "postgresql://db/engine"),
        ("postgres://app@db/engine", "postgres://app@db/engine"),
        (f"postgresql://app:{SECRET}@db/engine", "postgresql://app:***@db/engine"),
        (f"postgresql://app:a%40b{SECRET}@db/e", "postgresql://app:***@db/e"),
        (f"postgresql:///e?host=/s&password={SECRET}", "postgresql:///e?host=/s&password=***"),
    ],
)
def test_redact_hides_every_password(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert all(secret not in redact(url) for secret in passwords_of(url))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"url": "/srv/app.db", "timeout": 1},
        {"url": "postgresql://db/e", "timeout": -1},
        {"url": "postgresql://db/e", "timeout": float("nan")},
        {"url": "postgresql://db/e", "timeout": True},
        {"url": "postgresql://db/e", "timeout": 1, "heartbeat": 0},
    ],
)
def test_bad_options_are_typed_errors(kwargs: dict[str, object]) -> None:
    with pytest.raises(PostgresOptionError) as caught:
        PostgresInstructionStore(**kwargs)  # type: ignore[arg-type]
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, HarnessError)


def test_the_schema_sql_creates_the_table_and_the_notify_trigger() -> None:
    assert "CREATE TABLE IF NOT EXISTS agent_instructions" in POSTGRES_SCHEMA_SQL
    assert "pg_notify('harness_agent_instructions'" in POSTGRES_SCHEMA_SQL
