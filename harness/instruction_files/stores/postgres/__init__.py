"""PostgreSQL for many engine nodes: the ``agent_instructions`` store and its change notices.

``database="postgresql://..."`` (or ``postgres://``) selects this store; on its own::

    from harness.instruction_files.stores.postgres import (
        PostgresInstructionStore, create_schema_postgres,
    )

    await create_schema_postgres("postgresql://app@db/engine")   # table + notify trigger
    store = PostgresInstructionStore("postgresql://app@db/engine", timeout=5.0)
    read = await store.read("acme", "reviewer")      # StoreRead(source, warnings, updated_at)
    await store.aclose()

The parts: ``store`` (the pool and its reads), ``listener`` (the supervised LISTEN child that
makes rows cacheable and invalidates them), ``schema`` (the table and its trigger), ``errors``
(what a failure means, without the password).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from harness.instruction_files.stores.postgres._schema import CHANNEL as CHANNEL
from harness.instruction_files.stores.postgres._schema import (
    POSTGRES_SCHEMA_SQL as POSTGRES_SCHEMA_SQL,
)
from harness.instruction_files.stores.postgres._schema import (
    create_schema_postgres as create_schema_postgres,
)

if TYPE_CHECKING:
    from harness.instruction_files.stores.postgres._store import (
        PostgresInstructionStore as PostgresInstructionStore,
    )
    from harness.instruction_files.stores.postgres._store import (
        PostgresOptionError as PostgresOptionError,
    )

__all__ = [
    "CHANNEL",
    "POSTGRES_SCHEMA_SQL",
    "PostgresInstructionStore",
    "PostgresOptionError",
    "create_schema_postgres",
]

_LAZY = {
    "PostgresInstructionStore": "harness.instruction_files.stores.postgres._store",
    "PostgresOptionError": "harness.instruction_files.stores.postgres._store",
}


def __getattr__(name: str) -> object:
    """Import the store module (and asyncpg) on first use of its names."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
