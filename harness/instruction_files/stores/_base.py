"""What an instruction store is: the ``InstructionStore`` protocol and what one read returns.

A backend implements ``InstructionStore``; ``InstructionFiles`` reads one agent's row through
it and caches it as the store allows::

    from harness.instruction_files.stores._base import InstructionStore
    from harness.instruction_files.stores._sqlite import SqliteInstructionStore

    store = SqliteInstructionStore("examples/acme.db", timeout=5.0)
    assert isinstance(store, InstructionStore)     # name, cache_rows, generation, read, ...

A store may need supervised companions (PostgreSQL's LISTEN connection): ``child_specs(events)``
returns them, and ``Harness`` adds them to its tree. Through ``StoreEvents`` a companion tells
the cache that a row changed (``row_changed``) or that change notices may have been missed
(``rows_unreliable``); ``cache_rows`` says whether a row read now may be cached at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from harness.instruction_files._models import InstructionSource
    from harness.runtime import ChildSpec

__all__ = ["InstructionStore", "StoreEvents", "StoreFactory", "StoreRead"]


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
