"""Where the agent's ``agent_instructions`` row comes from: the ``InstructionStore`` seam.

``InstructionFiles`` and ``Harness`` read the database row of (project_id, agent) through one
``InstructionStore``; ``open_store`` turns the ``database=`` shortcut into one (a path is
SQLite, a ``postgresql://`` or ``postgres://`` URL is PostgreSQL)::

    from harness.instruction_files.stores import open_store

    store = open_store("examples/acme.db", timeout=5.0)
    read = await store.read("acme", "reviewer")
    print(read.source.content if read.source else "no row", read.warnings)
    await store.aclose()

A new backend is one module implementing ``InstructionStore`` (``base``) and one call,
``harness.stores.register_store(scheme, "module:Class", kind="instructions")``: the class is
called as ``Class(url, timeout=..., heartbeat=...)`` and, for ``create_schema(url)``, may
have an async ``create_schema(url)`` (a static method). Anything that is not a ``scheme://``
URL is a path, opened by the SQLite store.

``create_schema(path_or_url)`` creates the table where ``database=`` points: for a path it is
done when the call returns; for a URL it returns the coroutine that does it
(``await create_schema(url)``). ``await`` works on both.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Generator

from harness.instruction_files._models import InstructionStoreError
from harness.instruction_files.stores._base import InstructionStore as InstructionStore
from harness.instruction_files.stores._base import StoreEvents as StoreEvents
from harness.instruction_files.stores._base import StoreFactory as StoreFactory
from harness.instruction_files.stores._base import StoreRead as StoreRead
from harness.instruction_files.stores._sqlite import SqliteInstructionStore
from harness.instruction_files.stores._sqlite import create_schema as create_sqlite_schema
from harness.stores import register_store, store_factory, url_scheme

__all__ = [
    "InstructionStore",
    "StoreEvents",
    "StoreFactory",
    "StoreRead",
    "create_schema",
    "open_store",
]

for _scheme in ("postgresql", "postgres"):
    register_store(
        _scheme,
        "harness.instruction_files.stores.postgres._store:PostgresInstructionStore",
        kind="instructions",
    )


def open_store(
    database: str | os.PathLike[str], *, timeout: float, listener_heartbeat: float = 5.0
) -> InstructionStore:
    """The store for a ``database=`` value: a path is SQLite, a URL goes by its scheme.

    ``timeout`` is ``database_timeout``: SQLite's lock wait, a server's statement timeout.
    ``listener_heartbeat`` bounds how long a server store's lost notice connection may go
    unnoticed (SQLite has none). Opening connects to nothing (stores connect on first read).
    An unknown scheme, or a backend whose module or driver is not installed, raises
    ``InstructionStoreError``.
    """
    scheme = url_scheme(database)
    if scheme is None:
        return SqliteInstructionStore(database, timeout=timeout)
    factory = store_factory(scheme, kind="instructions", error=InstructionStoreError)
    store: InstructionStore = factory(database, timeout=timeout, heartbeat=listener_heartbeat)
    return store


def create_schema(database: str | os.PathLike[str]) -> Awaitable[None]:
    """Create ``agent_instructions`` (and, on a server, its notify trigger) at ``database``.

    For tests, examples and local setups; the package itself never writes to the table.
    Synchronous for an SQLite path (done on return; the result may be ignored or awaited);
    for a ``postgresql://`` URL it returns a coroutine: ``await create_schema(url)``.
    """
    scheme = url_scheme(database)
    if scheme is None:
        create_sqlite_schema(database)
        return _Done()
    factory = store_factory(scheme, kind="instructions", error=InstructionStoreError)
    create: Callable[[str], Awaitable[None]] | None = getattr(factory, "create_schema", None)
    if create is None:
        raise InstructionStoreError(
            f"{scheme}:// instruction stores cannot create their table from harness: run the "
            "migration that owns agent_instructions"
        )
    return create(os.fspath(database))


class _Done:
    """An awaitable that is already complete (``create_schema`` of a path)."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return
        yield
