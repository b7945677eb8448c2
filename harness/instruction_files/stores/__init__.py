"""Where the agent's ``agent_instructions`` row comes from: the ``InstructionStore`` seam.

``InstructionFiles`` and ``Harness`` read the database row of (project_id, agent) through one
``InstructionStore``; ``open_store`` turns the ``database=`` shortcut into one (a path is
SQLite, a ``postgresql://`` or ``postgres://`` URL is PostgreSQL)::

    from harness.instruction_files.stores import open_store

    store = open_store("examples/acme.db", timeout=5.0)
    read = await store.read("acme", "reviewer")
    print(read.source.content if read.source else "no row", read.warnings)
    await store.aclose()

A new backend is one new module in this package implementing ``InstructionStore``, plus one
line in ``_BACKENDS`` (URL scheme -> ``"module:Class"``, imported only when a URL of that
scheme is opened; the class is called as ``Class(url, timeout=..., heartbeat=...)``), and one in
``_SCHEMAS`` for ``create_schema``. Anything that is not a ``scheme://`` URL is a path, opened
by the SQLite store.

``create_schema(path_or_url)`` creates the table where ``database=`` points: for a path it is
done when the call returns (a plain call, as in the first release); for a URL it returns the
coroutine that does it (``await create_schema(url)``). ``await`` works on both.

A store may need supervised companions (PostgreSQL's LISTEN connection): ``child_specs(events)``
returns them, and ``Harness`` adds them to its tree. Through ``StoreEvents`` a companion tells
the cache that a row changed (``row_changed``) or that change notices may have been missed
(``rows_unreliable``); ``cache_rows`` says whether a row read now may be cached at all.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, runtime_checkable

from harness.instruction_files.models import InstructionStoreError

if TYPE_CHECKING:
    from harness.instruction_files.models import InstructionSource
    from harness.runtime import ChildSpec

__all__ = [
    "InstructionStore",
    "StoreEvents",
    "StoreRead",
    "create_schema",
    "open_store",
    "url_scheme",
]


@dataclass(frozen=True, slots=True)
class StoreRead:
    """One read of one agent's row: the source (``None`` when there is no usable row), the
    warnings about it (``"db:<project>/<agent>: ..."``), and the row's ``updated_at`` as stored
    (its version, for provenance; ``None`` without a row)."""

    source: InstructionSource | None
    warnings: tuple[str, ...] = ()
    updated_at: str | None = None


class StoreEvents(Protocol):
    """What a store's companions may tell the instruction-files cache (plain sync calls)."""

    def row_changed(self, project_id: str, agent: str) -> None:
        """The row of (project_id, agent) changed: drop cache entries holding it."""

    def rows_unreliable(self) -> None:
        """Change notices may have been lost: drop every cache entry holding a database row."""


@runtime_checkable
class InstructionStore(Protocol):
    """Reads one agent's row for a project. Implementations never write the table."""

    @property
    def name(self) -> str:
        """A display name for messages and manifests (never a password)."""

    @property
    def cache_rows(self) -> bool:
        """Whether a row read now may be cached (False while change notices could be missed)."""

    @property
    def generation(self) -> int:
        """Bumped whenever rows read earlier may be stale (a lost or restored notice channel):
        a read that started in another generation is not cached."""

    async def read(self, project_id: str, agent: str) -> StoreRead:
        """The row of (project_id, agent); ``InstructionStoreError`` when it cannot be read."""

    def child_specs(self, events: StoreEvents) -> Sequence[ChildSpec]:
        """Supervised companions for the Harness tree (none for a plain file)."""

    async def aclose(self) -> None:
        """Release connections; idempotent. Not final: a ``Harness`` that is entered again
        reads through the same store, so a store connects (again) lazily on its next read."""


StoreFactory: TypeAlias = Callable[..., InstructionStore]
"""A backend: called as ``factory(url, timeout=seconds, heartbeat=seconds)`` (``heartbeat`` is
``listener_heartbeat``: how soon a lost change-notice connection must be noticed)."""

_BACKENDS: dict[str, str | StoreFactory] = {
    # scheme -> "module:Class" (imported on first use) or a factory. Add a backend here.
    "postgresql": "harness.instruction_files.stores.postgres:PostgresInstructionStore",
    "postgres": "harness.instruction_files.stores.postgres:PostgresInstructionStore",
}
_SCHEMAS: dict[str, str] = {
    # scheme -> "module:function" creating the schema at a URL (a coroutine function).
    "postgresql": "harness.instruction_files.stores.postgres:create_schema_postgres",
    "postgres": "harness.instruction_files.stores.postgres:create_schema_postgres",
}
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")


def url_scheme(database: str | os.PathLike[str]) -> str | None:
    """The lower-cased scheme of a ``scheme://`` URL, or ``None`` for a path."""
    if not isinstance(database, str):
        return None
    found = _SCHEME.match(database)
    return found.group(1).lower() if found else None


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
        from harness.instruction_files.stores.sqlite import SqliteInstructionStore

        return SqliteInstructionStore(database, timeout=timeout)
    backend = _BACKENDS.get(scheme)
    if backend is None:
        raise _unsupported(scheme)
    factory = backend if callable(backend) else _import_backend(scheme, backend)
    return factory(database, timeout=timeout, heartbeat=listener_heartbeat)


def create_schema(database: str | os.PathLike[str]) -> Awaitable[None]:
    """Create ``agent_instructions`` (and, on a server, its notify trigger) at ``database``.

    For tests, examples and local setups; the package itself never writes to the table.
    Synchronous for an SQLite path (done on return; the result may be ignored or awaited);
    for a ``postgresql://`` URL it returns a coroutine: ``await create_schema(url)``.
    """
    scheme = url_scheme(database)
    if scheme is None:
        from harness.instruction_files.stores.sqlite import create_schema as create_sqlite

        create_sqlite(database)
        return _Done()
    reference = _SCHEMAS.get(scheme)
    if reference is None:
        raise _unsupported(scheme)
    create: Callable[[str], Awaitable[None]] = _import_backend(scheme, reference)
    return create(os.fspath(database))


class _Done:
    """An awaitable that is already complete (``create_schema`` of a path)."""

    __slots__ = ()

    def __await__(self) -> Generator[None, None, None]:
        return
        yield


def _unsupported(scheme: str) -> InstructionStoreError:
    known = ", ".join(f"{name}://" for name in sorted(_BACKENDS))
    return InstructionStoreError(
        f"database URL scheme {scheme!r} is not supported: give the path of an SQLite file "
        f"or a URL starting with one of {known}"
    )


def _import_backend(scheme: str, reference: str) -> Any:
    module_name, _, attribute = reference.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or module_name
        what = (
            f"its module {module_name} is missing from this installation"
            if missing == module_name
            else f"the {missing!r} package it needs is not installed (pip install {missing})"
        )
        raise InstructionStoreError(
            f"{scheme}:// databases are not available: {what}; use an SQLite path instead, "
            "or install a harness release with PostgreSQL support"
        ) from exc
    return getattr(module, attribute)
