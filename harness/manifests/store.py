"""``ManifestStore``: recorded builds, on SQLite, read and written without blocking the loop.

::

    import anyio
    from harness.manifests import ManifestStore

    async def main() -> None:
        async with ManifestStore.open("manifests.db") as store:   # or: store = await ...open(...)
            for row in await store.list(agent="reviewer", limit=5):   # newest first
                print(row["manifest_id"], row["requested_at"], row["digest"][:12])
                replay = await store.replay(row["manifest_id"])
                print("identical" if replay.identical else replay.differences)

    anyio.run(main)

Design notes: one SQLite connection per store (``harness.manifests.sqlite`` holds the file
format and the durability promise). Every operation runs in a worker thread, one at a time
(an ``anyio.Lock``), so the event loop never waits on the disk; a worker thread is never
abandoned by a cancelled caller (the operation is short and finishes, then the cancellation is
delivered), so a write is never left half done by cancellation. ``record`` takes many builds
and commits them in one transaction: the recorder's group commit. ``open`` of a missing file
raises; ``open(path, create=True)`` (what ``Harness(manifests=path)`` uses) creates it when its
directory exists.
"""

from __future__ import annotations

import builtins
import os
import sqlite3
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import anyio
import anyio.to_thread

from harness.manifests import sqlite as backend
from harness.manifests.diff import ManifestDiff, diff_manifests
from harness.manifests.errors import ManifestNotFound, ManifestStoreError
from harness.manifests.record import ManifestRecord
from harness.manifests.replay import Replay, replay_manifest
from harness.tokenizer import Tokenizer

__all__ = ["ManifestStore"]

_T = TypeVar("_T")


class _Opening:
    """What ``ManifestStore.open`` returns: await it, or use it with ``async with``."""

    def __init__(self, path: Path, create: bool, timeout: float) -> None:
        self._args = (path, create, timeout)
        self._store: ManifestStore | None = None

    async def _open(self) -> ManifestStore:
        path, create, timeout = self._args
        connection, identity = await anyio.to_thread.run_sync(
            lambda: backend.open_database(path, create=create, timeout=timeout)
        )
        return ManifestStore(connection, identity)

    def __await__(self) -> Generator[Any, None, ManifestStore]:
        return self._open().__await__()

    async def __aenter__(self) -> ManifestStore:
        self._store = await self._open()
        return self._store

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._store is not None:
            await self._store.close()


class ManifestStore:
    """Recorded builds: ``record``, ``get``, ``list``, ``replay``, ``diff`` (module notes)."""

    def __init__(self, connection: sqlite3.Connection, identity: backend.Identity) -> None:
        """Use :meth:`open`; this wraps an already opened and checked connection."""
        self._connection: sqlite3.Connection | None = connection
        self._identity = identity
        self._lock = anyio.Lock()
        self._written = backend.Written()

    @classmethod
    def open(
        cls, location: str | os.PathLike[str], *, create: bool = False, timeout: float = 5.0
    ) -> _Opening:
        """Open the store at ``location`` (an SQLite file); ``await`` it or ``async with`` it.

        A missing file raises ``ManifestStoreError`` unless ``create`` (then its directory must
        exist); so do a foreign or corrupt file and a newer schema. ``timeout`` bounds lock
        waits on the file.
        """
        text = os.fspath(location)
        if text.startswith(("postgresql://", "postgres://")):
            raise ManifestStoreError(
                "PostgreSQL manifest stores are not supported yet: record to an SQLite file path"
            )
        return _Opening(Path(text).absolute(), create, timeout)

    @property
    def path(self) -> Path:
        """The store's file."""
        return self._identity.path

    @property
    def closed(self) -> bool:
        return self._connection is None

    def __repr__(self) -> str:
        return f"<ManifestStore {str(self.path)!r}{' closed' if self.closed else ''}>"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the file (after any operation in flight); idempotent."""
        async with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                await anyio.to_thread.run_sync(connection.close)

    async def _run(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        async with self._lock:
            connection = self._connection
            if connection is None:
                raise ManifestStoreError(
                    f"manifest store {str(self.path)!r} is closed: open it again "
                    "(ManifestStore.open) or use it inside its `async with`"
                )
            return await anyio.to_thread.run_sync(operation, connection)

    async def record(self, *records: ManifestRecord) -> None:
        """Store ``records`` durably, all in ONE transaction: all of them land, or none."""
        if records:
            identity, written = self._identity, self._written
            await self._run(lambda c: backend.write_records(c, identity, records, written))

    async def get(self, manifest_id: str) -> dict[str, Any]:
        """The manifest of ``manifest_id`` as recorded; ``ManifestNotFound`` if unknown."""
        path = self.path
        found = await self._run(lambda c: backend.read_manifest(c, path, manifest_id))
        if found is None:
            raise ManifestNotFound(manifest_id, f"manifest store {str(path)!r}")
        return found

    async def list(
        self, *, agent: str | None = None, project_id: str | None = None, limit: int = 100
    ) -> builtins.list[dict[str, Any]]:
        """Summaries of recorded builds, newest first, filtered by agent and/or project."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a whole number >= 0, got {limit!r}")
        path = self.path
        return await self._run(
            lambda c: backend.list_rows(c, path, agent=agent, project_id=project_id, limit=limit)
        )

    async def texts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes at each address that has any (others are left out)."""
        path = self.path
        return dict(await self._run(lambda c: backend.read_texts(c, path, addresses)))

    async def replay(self, manifest_id: str, *, tokenizer: Tokenizer | None = None) -> Replay:
        """Rebuild ``manifest_id`` from its stored inputs and compare it with the record.

        Tampered or missing texts are reported in ``differences``, never raised. The recorded
        tokenizer is rebuilt from its spec unless ``tokenizer`` is given.
        """
        manifest = await self.get(manifest_id)
        addresses = [
            str(entry["sha256"])
            for layer in manifest["layers"]
            for entry in layer.get("inputs", ())
        ]
        texts = await self.texts(addresses)
        if tokenizer is None and str(manifest.get("tokenizer_spec", "")).startswith("tiktoken:"):
            return await anyio.to_thread.run_sync(lambda: replay_manifest(manifest, texts))
        return replay_manifest(manifest, texts, tokenizer=tokenizer)

    async def diff(self, id_a: str, id_b: str) -> ManifestDiff:
        """What changed from build ``id_a`` to build ``id_b``, per layer."""
        return diff_manifests(await self.get(id_a), await self.get(id_b))
