"""``ManifestStore``: recorded builds, read and written without blocking the event loop.

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
"""

from __future__ import annotations

import builtins
import os
from collections.abc import Awaitable, Callable, Generator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from harness._closing import AsyncClosing
from harness._tokenizer import Tokenizer, parse_tokenizer_spec
from harness.errors import ArgumentError
from harness.manifests._codec import (
    Batch,
    Encoded,
    Row,
    Written,
    batch,
    encode_one,
    expand,
    inflate,
    part_addresses,
)
from harness.manifests._codec import summary as row_summary
from harness.manifests._diff import ManifestDiff, diff_manifests
from harness.manifests._errors import ManifestNotFound, ManifestStoreError
from harness.manifests._prompt_codec import encode_prompt
from harness.manifests._record import ManifestRecord, PromptRecord
from harness.manifests._replay import Replay, replay_manifest
from harness.manifests._sqlite import SqliteBackend
from harness.stores import fits_text, register_store, store_factory, url_scheme

__all__ = ["Backend", "ManifestStore"]

_T = TypeVar("_T")

for _scheme in ("postgresql", "postgres"):
    # A manifest backend factory: ``await factory(url, create=bool, wait=seconds) -> Backend``.
    register_store(_scheme, "harness.manifests._postgres:PostgresBackend.open", kind="manifests")


class Backend(Protocol):
    """Where a store's rows live (SQLite or PostgreSQL); called one operation at a time."""

    where: str  # "manifest store '<path or redacted URL>'", for messages
    path: Path | None  # the file, for SQLite

    async def write(self, batch: Batch) -> None: ...
    async def row(self, manifest_id: str) -> bytes | None: ...
    async def parts(self, addresses: Sequence[str]) -> dict[str, bytes]: ...
    async def texts(self, addresses: Sequence[str]) -> dict[str, bytes]: ...
    async def rows(
        self, *, agent: str | None, project_id: str | None, limit: int
    ) -> builtins.list[Row]: ...
    async def aclose(self) -> None: ...


class _Opening:
    """What ``ManifestStore.open`` returns: await it, or use it with ``async with``."""

    def __init__(self, opener: Callable[[], Awaitable[Backend]]) -> None:
        self._opener = opener
        self._store: ManifestStore | None = None

    async def _open(self) -> ManifestStore:
        return ManifestStore(await self._opener())

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
            await self._store.aclose()


class ManifestStore(AsyncClosing):
    """Recorded builds: ``record``, ``get``, ``list``, ``replay``, ``diff``
    (see docs/architecture/stores.md)."""

    def __init__(self, backend: Backend) -> None:
        """Use :meth:`open`; this wraps an opened and checked backend."""
        self._backend: Backend | None = backend
        self._where = backend.where
        self._path = backend.path
        self._lock = anyio.Lock(fast_acquire=True)  # a write is handed to its thread at once
        self._written = Written()

    @classmethod
    def open(
        cls, location: str | os.PathLike[str], *, create: bool = False, timeout: float = 5.0
    ) -> _Opening:
        """Open the store at ``location`` (an SQLite path or a ``postgresql://`` URL); ``await``
        it or ``async with`` it.

        A missing store raises ``ManifestStoreError`` unless ``create`` (then a file's directory
        must exist); so do a foreign or corrupt file and a newer schema. ``timeout`` bounds lock
        waits (SQLite) or connecting and each statement (PostgreSQL).
        """
        text = os.fspath(location)
        scheme = url_scheme(text)
        if scheme is None:
            path = Path(text).absolute()
            return _Opening(lambda: SqliteBackend.open(path, create=create, wait=timeout))

        async def open_backend() -> Backend:
            factory = store_factory(scheme, kind="manifests", error=ManifestStoreError)
            backend: Backend = await factory(text, create=create, wait=timeout)
            return backend

        return _Opening(open_backend)

    @property
    def path(self) -> Path | None:
        """The store's file (None for a PostgreSQL store)."""
        return self._path

    @property
    def location(self) -> str:
        """Where the store is, as messages name it (a PostgreSQL password never shows)."""
        return self._where

    @property
    def closed(self) -> bool:
        return self._backend is None

    def __repr__(self) -> str:
        return f"<ManifestStore {self._where}{' closed' if self.closed else ''}>"

    async def aclose(self) -> None:
        """Close the store (after any operation in flight); idempotent."""
        async with self._lock:
            backend, self._backend = self._backend, None
            self._written.shared = None  # the last build's texts: not kept past the store
            if backend is not None:
                await backend.aclose()

    async def _run(self, operation: Callable[[Backend], Awaitable[_T]]) -> _T:
        async with self._lock:
            backend = self._backend
            if backend is None:
                raise ManifestStoreError(
                    f"{self._where} is closed: open it again (ManifestStore.open) or use it "
                    "inside its `async with`"
                )
            return await operation(backend)

    def prepare(self, record: ManifestRecord | PromptRecord) -> Encoded:
        """``record`` encoded for a later ``record`` call, on the caller's thread (a recorder
        encodes each build as it comes, not its whole batch once the last build is in);
        ``ManifestStoreError`` for a record no store can hold. A ``PromptRecord`` is encoded
        from the layers it shares with the builds before it (the same bytes)."""
        if isinstance(record, PromptRecord):
            return encode_prompt(record, self._written)
        return encode_one(record, self._written)

    async def record(self, *records: ManifestRecord | PromptRecord | Encoded) -> None:
        """Store ``records`` durably, all in ONE transaction: all of them land, or none."""
        if not records:
            return
        written = self._written
        made = batch(
            [item if isinstance(item, Encoded) else self.prepare(item) for item in records],
            written,
        )
        try:
            await self._run(lambda backend: backend.write(made))
        except ManifestStoreError:
            # The store may not hold what it held (restored, rolled back, edited): from now on
            # every text and part is sent again until committed again.
            written.clear()
            raise
        written.add(made.texts)  # committed: later builds need not send these again
        written.add(made.parts)

    async def get(self, manifest_id: str) -> dict[str, Any]:
        """The manifest of ``manifest_id`` as recorded; ``ManifestNotFound`` if unknown."""
        blob = None
        if fits_text(manifest_id):  # an id that is not text (bytes on a CLI) names no build
            blob = await self._run(lambda backend: backend.row(manifest_id))
        if blob is None:
            raise ManifestNotFound(manifest_id, self._where)
        header = inflate(self._where, blob, f"manifest {manifest_id!r}")
        addresses = part_addresses(header)
        parts = await self._run(lambda backend: backend.parts(addresses))
        return expand(self._where, header, parts)

    async def list(
        self, *, agent: str | None = None, project_id: str | None = None, limit: int = 100
    ) -> builtins.list[dict[str, Any]]:
        """Summaries of recorded builds, newest first, filtered by agent and/or project."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ArgumentError(f"limit must be a whole number >= 0, got {limit!r}")
        if not all(fits_text(value) for value in (agent, project_id) if value is not None):
            return []  # no build was recorded for an agent or project that is not text
        rows = await self._run(
            lambda backend: backend.rows(agent=agent, project_id=project_id, limit=limit)
        )
        return [row_summary(self._where, row) for row in rows]

    async def texts(self, addresses: Sequence[str]) -> dict[str, bytes]:
        """The stored bytes at each address that has any (others are left out)."""
        wanted = [address for address in addresses if fits_text(address)]
        return await self._run(lambda backend: backend.texts(wanted))

    async def replay(self, manifest_id: str, *, tokenizer: Tokenizer | None = None) -> Replay:
        """Rebuild ``manifest_id`` from its stored inputs and compare it with the record.

        Tampered or missing texts are reported in ``differences``, never raised. The recorded
        tokenizer is rebuilt from its spec unless ``tokenizer`` is given.
        """
        manifest = await self.get(manifest_id)
        addresses = [
            str(entry["sha256"])
            for layer in manifest["layers"]
            for entry in (*layer.get("units", ()), *layer.get("dropped_units", ()))
        ]
        texts = await self.texts(addresses)
        if tokenizer is None and _exact(manifest.get("tokenizer_spec")):
            return await anyio.to_thread.run_sync(lambda: replay_manifest(manifest, texts))
        return replay_manifest(manifest, texts, tokenizer=tokenizer)

    async def diff(self, id_a: str, id_b: str) -> ManifestDiff:
        """What changed from build ``id_a`` to build ``id_b``, per layer."""
        return diff_manifests(await self.get(id_a), await self.get(id_b))


def _exact(spec: object) -> bool:
    """Whether a recorded spec names an exact tokenizer (rebuilt off the event loop)."""
    try:
        return isinstance(spec, str) and parse_tokenizer_spec(spec).kind == "tiktoken"
    except ValueError:
        return False
