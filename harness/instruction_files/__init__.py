"""Instruction files: discovery, the ``agent_instructions`` table, and a supervised cache.

``Harness`` runs all of this for you; embedding it directly::

    import anyio
    from harness.instruction_files import InstructionFiles, InstructionFilesSettings
    from harness.runtime import Supervisor

    async def main() -> None:
        files = InstructionFiles(InstructionFilesSettings(), database="examples/acme.db")
        async with Supervisor([files.child_spec()]):               # the cache task, permanent
            found = await files.load("examples/acme", agent="reviewer", project_id="acme")
            files.invalidate("examples/acme")                      # plain call, no await
        await files.aclose()

    anyio.run(main)

Design notes.

- ``InstructionFilesSettings`` is a frozen pydantic model; ``HarnessConfig`` embeds it as the
  ``[instruction_files]`` TOML table (``names``, ``vendored``, ``max_bytes``,
  ``cache_maxsize``, ``cache_ttl``, ``database_timeout``, ``walk_threads``).
- The row comes from an ``InstructionStore`` (package ``stores``: the protocol, ``open_store``
  and one module per backend; SQLite is ``stores/sqlite.py``). ``database=`` opens one from a
  path or URL, ``store=`` takes one you built.
- ``child_spec(id="instruction_files_cache")`` is the only thing a supervisor needs. The task
  owns the cache table and nothing else; if it dies the table dies with it, the supervisor
  restarts it empty, and ``load`` keeps answering (uncached) meanwhile. Without any cache task
  (e.g. a script that never starts one) ``load`` works, uncached.
- ``load`` raises ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a missing workspace
  and ``InstructionStoreError`` for an unreadable database; neither touches the cache task.
- With a ``project_id`` but no database the result has no database source and a warning
  says so; a ``project_id`` whose agent has no row simply has no database source (no warning:
  most agents have no row).
- ``SCHEMA_SQL`` / ``create_schema(path)`` create the table for tests and examples; this package
  never writes to it. ``POSTGRES_SCHEMA_SQL`` is PostgreSQL's (the table and the trigger that
  notifies every node of changes); ``create_schema(url)`` returns a coroutine to await.
  ``source_path(project_id, agent)`` is a database source's ``path``.
- ``discover(workspace, settings)`` is the blocking walk on its own (no database, no cache).
- ``targets=`` on ``load`` / ``discover`` scopes a load to the chains of directories from the
  root to each target (``harness.workspace.targets``); a target outside the workspace raises
  ``TargetOutsideWorkspace`` (a ``ValueError``). ``@path`` lines import other files
  (``harness.workspace.imports``, through ``harness.workspace.import_door``).
"""

from harness.instruction_files.discovery.reader import discover as discover
from harness.instruction_files.files import InstructionFiles as InstructionFiles
from harness.instruction_files.models import InstructionSet as InstructionSet
from harness.instruction_files.models import InstructionSource as InstructionSource
from harness.instruction_files.models import InstructionStoreError as InstructionStoreError
from harness.instruction_files.models import WorkspaceNotFoundError as WorkspaceNotFoundError
from harness.instruction_files.settings import (
    InstructionFilesSettings as InstructionFilesSettings,
)
from harness.instruction_files.stores import InstructionStore as InstructionStore
from harness.instruction_files.stores import StoreEvents as StoreEvents
from harness.instruction_files.stores import StoreRead as StoreRead
from harness.instruction_files.stores import create_schema as create_schema
from harness.instruction_files.stores import open_store as open_store
from harness.instruction_files.stores.postgres import POSTGRES_SCHEMA_SQL as POSTGRES_SCHEMA_SQL
from harness.instruction_files.stores.sqlite import SCHEMA_SQL as SCHEMA_SQL
from harness.instruction_files.stores.sqlite import (
    SqliteInstructionStore as SqliteInstructionStore,
)
from harness.instruction_files.stores.sqlite import source_path as source_path
from harness.workspace.targets import TargetOutsideWorkspace as TargetOutsideWorkspace

__all__ = [
    "POSTGRES_SCHEMA_SQL",
    "SCHEMA_SQL",
    "InstructionFiles",
    "InstructionFilesSettings",
    "InstructionSet",
    "InstructionSource",
    "InstructionStore",
    "InstructionStoreError",
    "SqliteInstructionStore",
    "StoreEvents",
    "StoreRead",
    "TargetOutsideWorkspace",
    "WorkspaceNotFoundError",
    "create_schema",
    "discover",
    "open_store",
    "source_path",
]
