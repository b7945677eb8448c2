"""A manifest store in PostgreSQL: many engine nodes record into one shared database.

``ManifestStore.open("postgresql://...")`` and ``Harness(manifests="postgresql://...")`` use it::

    from harness.manifests import ManifestStore

    async with ManifestStore.open("postgresql://engine@db/harness", create=True) as store:
        print(await store.list(limit=5))
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

from harness.manifests._codec import SCHEMA_VERSION, Batch, Row
from harness.manifests._errors import ManifestStoreError
from harness.stores._postgres import FAILURES, advice
from harness.stores._secrets import cause, passwords_of, redact, scrub

__all__ = ["POSTGRES_MANIFEST_SCHEMA_SQL", "PostgresBackend"]

POSTGRES_MANIFEST_SCHEMA_SQL = f"""
SELECT pg_advisory_xact_lock(7342190211);
CREATE TABLE IF NOT EXISTS harness_schema (component TEXT PRIMARY KEY, version INTEGER NOT NULL);
INSERT INTO harness_schema (component, version) VALUES ('manifests', {SCHEMA_VERSION})
    ON CONFLICT (component) DO NOTHING;
CREATE TABLE IF NOT EXISTS harness_manifest_texts (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS harness_manifest_parts (sha256 TEXT PRIMARY KEY, body BYTEA NOT NULL);
CREATE TABLE IF NOT EXISTS harness_manifests (
    manifest_id TEXT PRIMARY KEY,
    requested_at TEXT NOT NULL,
    agent TEXT NOT NULL,
    project_id TEXT,
    workspace TEXT NOT NULL,
    digest TEXT NOT NULL,
    manifest BYTEA NOT NULL
);
CREATE INDEX IF NOT EXISTS harness_manifests_by_agent ON harness_manifests (agent, manifest_id);
CREATE INDEX IF NOT EXISTS harness_manifests_by_project
    ON harness_manifests (project_id, manifest_id);
"""
"""What ``create=True`` runs (in one transaction): the tables of a PostgreSQL manifest store."""

_TABLES = ("harness_manifests", "harness_manifest_parts", "harness_manifest_texts")
_COLUMNS = "manifest_id, requested_at, agent, project_id, workspace, digest, manifest"


def _advice(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, asyncpg.InsufficientPrivilegeError):
        return f"refused ({exc}): GRANT the role SELECT and INSERT on the harness_manifest tables"
    return advice(exc, timeout=timeout, timeout_hint="the store's timeout")


class PostgresBackend:
    """One store in one PostgreSQL database (see docs/architecture/stores.md)."""

    path: Path | None = None

    def __init__(self, url: str, connection: Any, timeout: float) -> None:
        self._url = url
        self._secrets = passwords_of(url)
        self._connection = connection
        self._timeout = timeout
        self.where = f"manifest store {redact(url)!r}"

    def _error(self, exc: BaseException, doing: str) -> ManifestStoreError:
        message = scrub(f"{self.where}: {doing}: it {_advice(exc, self._timeout)}", self._secrets)
        error = ManifestStoreError(message)
        error.__cause__ = cause(exc, self._secrets)
        return error

    @staticmethod
    async def _connect(url: str, wait: float) -> Any:
        return await asyncpg.connect(
            url,
            timeout=wait,
            server_settings={
                "application_name": "harness-manifests",
                "statement_timeout": str(max(1, round(wait * 1000))),
            },
        )

    @classmethod
    async def open(cls, url: str, *, create: bool, wait: float) -> PostgresBackend:
        """Connect and check (or, with ``create``, create) the schema; ``wait`` bounds the
        connection and every statement."""
        secrets = passwords_of(url)
        where = f"manifest store {redact(url)!r}"
        try:
            connection = await cls._connect(url, wait)
        except Exception as exc:
            message = scrub(f"{where}: connecting: it {_advice(exc, wait)}", secrets)
            raise ManifestStoreError(message) from cause(exc, secrets)
        backend = cls(url, connection, wait)
        try:
            await backend._check_schema(create)
        except BaseException:
            await backend.aclose()
            raise
        return backend

    async def _check_schema(self, create: bool) -> None:
        try:
            if create:
                async with self._connection.transaction():
                    await self._connection.execute(POSTGRES_MANIFEST_SCHEMA_SQL)
            version = None
            if await self._connection.fetchval("SELECT to_regclass('harness_schema')"):
                version = await self._connection.fetchval(
                    "SELECT version FROM harness_schema WHERE component = $1", "manifests"
                )
            missing = [
                table
                for table in _TABLES
                if not await self._connection.fetchval("SELECT to_regclass($1)", table)
            ]
        except FAILURES as exc:
            raise self._error(exc, "opening") from None
        if version is None:
            raise ManifestStoreError(
                f"{self.where} holds no manifest store: record into it first (Harness("
                "manifests=URL) creates the tables), or run "
                "harness.manifests._postgres.POSTGRES_MANIFEST_SCHEMA_SQL"
            )
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise ManifestStoreError(
                f"{self.where} has schema version {version!r}, newer than this harness reads "
                f"({SCHEMA_VERSION}): upgrade harness to read it"
            )
        if missing:
            raise ManifestStoreError(
                f"{self.where} has a damaged schema (missing {', '.join(missing)}): restore "
                "it, or recreate it with create=True"
            )

    async def _live(self) -> Any:
        if self._connection is None or self._connection.is_closed():
            self._connection = await self._connect(self._url, self._timeout)
        return self._connection

    async def _fetch(self, doing: str, query: str, *args: Any) -> builtins.list[Any]:
        try:
            connection = await self._live()
            return list(await connection.fetch(query, *args))
        except FAILURES as exc:
            raise self._error(exc, doing) from None

    async def write(self, batch: Batch) -> None:
        try:
            connection = await self._live()
            async with connection.transaction():
                if batch.texts:
                    await connection.executemany(
                        "INSERT INTO harness_manifest_texts (sha256, body) VALUES ($1, $2) "
                        "ON CONFLICT (sha256) DO NOTHING",
                        list(batch.texts.items()),
                    )
                if batch.parts:
                    await connection.executemany(
                        "INSERT INTO harness_manifest_parts (sha256, body) VALUES ($1, $2) "
                        "ON CONFLICT (sha256) DO NOTHING",
                        list(batch.parts.items()),
                    )
                await connection.executemany(
                    f"INSERT INTO harness_manifests ({_COLUMNS}) "
                    "VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    batch.rows,
                )
        except FAILURES as exc:
            raise self._error(exc, f"recording {len(batch.rows)} build(s)") from None

    async def row(self, manifest_id: str) -> bytes | None:
        found = await self._fetch(
            f"reading manifest {manifest_id!r}",
            "SELECT manifest FROM harness_manifests WHERE manifest_id = $1",
            manifest_id,
        )
        return bytes(found[0][0]) if found else None

    async def _bodies(self, table: str, addresses: Sequence[str]) -> dict[str, bytes]:
        rows = await self._fetch(
            f"reading {table}",
            f"SELECT sha256, body FROM {table} WHERE sha256 = ANY($1::text[])",  # ours, not input
            list(dict.fromkeys(addresses)),
        )
        return {str(row[0]): bytes(row[1]) for row in rows}

    async def parts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        return await self._bodies("harness_manifest_parts", addresses)

    async def texts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        return await self._bodies("harness_manifest_texts", addresses)

    async def rows(self, *, agent: str | None, project_id: str | None, limit: int) -> list[Row]:
        found = await self._fetch(
            "listing manifests",
            f"SELECT {_COLUMNS} FROM harness_manifests "
            "WHERE ($1::text IS NULL OR agent = $1) AND ($2::text IS NULL OR project_id = $2) "
            "ORDER BY manifest_id DESC LIMIT $3",
            agent,
            project_id,
            limit,
        )
        return [(*row[:6], bytes(row[6])) for row in found]

    async def aclose(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None and not connection.is_closed():
            try:
                await asyncio.wait_for(connection.close(), self._timeout)
            except Exception:
                connection.terminate()
