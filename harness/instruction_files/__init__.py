"""Instruction files: discovery, the ``agent_instructions`` table, and a supervised cache.

Embedding (what ``Harness`` does)::

    files = InstructionFiles(settings, database="app.db")      # settings: InstructionFilesSettings
    async with Supervisor([files.child_spec()]) as sup:        # the cache task, permanent
        found = await files.load(workspace, agent="reviewer", project_id="acme")
        files.invalidate(workspace)                            # plain call, no await

- ``InstructionFilesSettings`` is a frozen pydantic model; ``HarnessConfig`` embeds it as the
  ``[instruction_files]`` TOML table (``names``, ``vendored``, ``max_bytes``,
  ``cache_maxsize``, ``cache_ttl``, ``database_timeout``, ``walk_threads``).
- ``child_spec(id="instruction_files_cache")`` is the only thing a supervisor needs. The task
  owns the cache table and nothing else; if it dies the table dies with it, the supervisor
  restarts it empty, and ``load`` keeps answering (uncached) meanwhile. Without any cache task
  (e.g. a script that never starts one) ``load`` works, uncached.
- ``load`` raises ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a missing workspace
  and ``InstructionStoreError`` for an unreadable database; neither touches the cache task.
- With a ``project_id`` but no ``database`` the result has no database source and a warning
  says so; a ``project_id`` whose agent has no row simply has no database source (no warning:
  most agents have no row).
- ``SCHEMA_SQL`` / ``create_schema(path)`` create the table for tests and examples; this package
  never writes to it.
- ``discover(workspace, settings)`` is the blocking walk on its own (no database, no cache).
"""

from harness.instruction_files.discovery import discover as discover
from harness.instruction_files.files import InstructionFiles as InstructionFiles
from harness.instruction_files.models import InstructionSet as InstructionSet
from harness.instruction_files.models import InstructionSource as InstructionSource
from harness.instruction_files.models import InstructionStoreError as InstructionStoreError
from harness.instruction_files.models import WorkspaceNotFoundError as WorkspaceNotFoundError
from harness.instruction_files.settings import (
    InstructionFilesSettings as InstructionFilesSettings,
)
from harness.instruction_files.store import SCHEMA_SQL as SCHEMA_SQL
from harness.instruction_files.store import create_schema as create_schema

__all__ = [
    "SCHEMA_SQL",
    "InstructionFiles",
    "InstructionFilesSettings",
    "InstructionSet",
    "InstructionSource",
    "InstructionStoreError",
    "WorkspaceNotFoundError",
    "create_schema",
    "discover",
]
