"""``PostgresInstructionStore``: ``agent_instructions`` read through an asyncpg pool.

``database="postgresql://..."`` (or ``postgres://``) selects this store; on its own::

    from harness.instruction_files.stores.postgres import PostgresInstructionStore

    store = PostgresInstructionStore("postgresql://app@db/engine", timeout=5.0)
    read = await store.read("acme", "reviewer")      # StoreRead(source, warnings, updated_at)
    await store.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

from harness.errors import HarnessError
from harness.instruction_files.stores._base import StoreEvents, StoreRead
from harness.instruction_files.stores._rows import row_read
from harness.instruction_files.stores.postgres._errors import explain
from harness.instruction_files.stores.postgres._listener import Listener, ListenState
from harness.instruction_files.stores.postgres._schema import create_schema_postgres
from harness.stores import fits_text
from harness.stores._postgres import STALE
from harness.stores._secrets import cause, passwords_of, redact

if TYPE_CHECKING:
    from harness.runtime import ChildSpec

__all__ = ["PostgresInstructionStore", "PostgresOptionError"]

SCHEMES = ("postgresql", "postgres")

_QUERY = (
    "SELECT convert_to(content, 'UTF8') AS content, updated_at::text AS updated_at "
    "FROM agent_instructions WHERE project_id = $1 AND agent_slug = $2 "
    "ORDER BY updated_at DESC LIMIT 1"
)
_POOL_SIZE = 10
_CLIENT_SLACK = 1.0
"""Seconds the client waits beyond ``statement_timeout`` before abandoning a query itself."""


class PostgresOptionError(HarnessError, ValueError):
    """A ``PostgresInstructionStore`` option is out of range; the message says which."""


class PostgresInstructionStore:
    """The ``InstructionStore`` of a PostgreSQL database (see docs/architecture/stores.md)."""

    create_schema = staticmethod(create_schema_postgres)  # what create_schema(url) runs

    def __init__(self, url: str, *, timeout: float, heartbeat: float = 5.0) -> None:
        if not isinstance(url, str) or url.partition("://")[0].lower() not in SCHEMES:
            raise PostgresOptionError(
                f"{redact(str(url))!r} is not a PostgreSQL URL: write "
                "postgresql://user:password@host:port/database"
            )
        for option, value in (("timeout", timeout), ("heartbeat", heartbeat)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise PostgresOptionError(f"{option} must be seconds, got {value!r}")
            if not math.isfinite(value) or value < 0 or (option == "heartbeat" and value == 0):
                raise PostgresOptionError(
                    f"{option} must be a finite number of seconds"
                    f"{' above 0' if option == 'heartbeat' else ' >= 0'}, got {value!r}"
                )
        self._url = url
        self._name = redact(url)
        self._secrets = passwords_of(url)
        self._timeout = float(timeout)
        self._heartbeat = float(heartbeat)
        self._state = ListenState()
        self._pool: asyncpg.Pool | None = None
        self._pool_loop: asyncio.AbstractEventLoop | None = None
        self._pool_lock: asyncio.Lock | None = None

    def __repr__(self) -> str:
        return f"PostgresInstructionStore({self._name!r}, timeout={self._timeout:g})"

    @property
    def name(self) -> str:
        """The URL with its password replaced by ``***``."""
        return self._name

    @property
    def timeout(self) -> float:
        """``database_timeout``: the statement timeout (and, at least 1 s, the connect one)."""
        return self._timeout

    @property
    def heartbeat(self) -> float:
        """``listener_heartbeat``: a lost listener connection is noticed within this."""
        return self._heartbeat

    @property
    def cache_rows(self) -> bool:
        """True only while the listener holds LISTEN on this database."""
        return self._state.cache_rows

    @property
    def generation(self) -> int:
        """Bumped when the listener connects and when it loses its connection."""
        return self._state.generation

    @property
    def listener_pid(self) -> int | None:
        """The server process id of the most recently connected listener (None once it is
        disconnected)."""
        return self._state.backend_pid

    def child_specs(self, events: StoreEvents) -> Sequence[ChildSpec]:
        """The listener child, permanent (one per store: one Harness tree per store)."""
        listener = Listener(
            self._url,
            events,
            self._state,
            name=self._name,
            secrets=self._secrets,
            heartbeat=self._heartbeat,
            connect_timeout=self._connect_timeout,
        )
        return [listener.child_spec()]

    @property
    def _connect_timeout(self) -> float:
        return max(self._timeout, 1.0)

    async def read(self, project_id: str, agent: str) -> StoreRead:
        """The row of (project_id, agent): ``InstructionStoreError`` when it cannot be read.

        An id that PostgreSQL text cannot hold (a NUL, a lone surrogate) names no row.
        """
        if not (_storable(project_id) and _storable(agent)):
            return StoreRead(None)
        try:
            row = await self._fetch(project_id, agent)
        except Exception as exc:
            await anyio.lowlevel.checkpoint_if_cancelled()
            raise explain(exc, self._name, self._timeout, self._secrets) from cause(
                exc, self._secrets
            )
        if row is None:
            return StoreRead(None)
        raw = row["content"]
        return row_read(project_id, agent, None if raw is None else bytes(raw), row["updated_at"])

    async def _fetch(self, project_id: str, agent: str) -> Any:
        pool = await self._pool_here()
        for attempt in (1, 2):
            try:
                async with (
                    pool.acquire(timeout=self._connect_timeout) as connection,
                    connection.transaction(readonly=True),
                ):
                    return await connection.fetchrow(
                        _QUERY, project_id, agent, timeout=self._timeout + _CLIENT_SLACK
                    )
            except STALE:
                if attempt == 2:
                    raise
                await pool.expire_connections()  # a restart left every idle one dead
        raise AssertionError("unreachable")  # pragma: no cover

    async def _pool_here(self) -> asyncpg.Pool:
        """This loop's pool, made on first use (no connection is opened yet: ``min_size=0``)."""
        loop = asyncio.get_running_loop()
        if self._pool is not None and self._pool_loop is loop:
            return self._pool
        if self._pool_lock is None or self._pool_loop is not loop:
            self._pool_lock, self._pool_loop = asyncio.Lock(), loop
            self._drop_pool()
        async with self._pool_lock:
            if self._pool is None:
                pool = asyncpg.create_pool(
                    self._url,
                    min_size=0,
                    max_size=_POOL_SIZE,
                    timeout=self._connect_timeout,
                    max_inactive_connection_lifetime=60.0,
                    server_settings={
                        "application_name": "harness",
                        "statement_timeout": str(max(1, round(self._timeout * 1000))),
                        "default_transaction_read_only": "on",
                    },
                )
                await pool
                self._pool = pool
            return self._pool

    def _drop_pool(self) -> None:
        """Forget a pool of another (ended) loop; its sockets are closed without a goodbye."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):  # its loop is gone; nothing more to release
                pool.terminate()

    async def aclose(self) -> None:
        """Close the pool's connections (gracefully within ``timeout``, else abruptly)."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if self._pool_loop is not asyncio.get_running_loop():
            pool.terminate()
            return
        with anyio.CancelScope(shield=True), anyio.move_on_after(self._connect_timeout) as scope:
            await pool.close()
        if scope.cancelled_caught:
            pool.terminate()


def _storable(text: str) -> bool:
    return "\x00" not in text and fits_text(text)
