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
"""

from harness.instruction_files._explain import RuleCandidate as RuleCandidate
from harness.instruction_files._explain import RulesExplanation as RulesExplanation
from harness.instruction_files._files import InstructionFiles as InstructionFiles
from harness.instruction_files._models import InstructionSet as InstructionSet
from harness.instruction_files._models import InstructionSource as InstructionSource
from harness.instruction_files._models import InstructionStoreError as InstructionStoreError
from harness.instruction_files._models import PassedRule as PassedRule
from harness.instruction_files._models import WorkspaceNotFoundError as WorkspaceNotFoundError
from harness.instruction_files._settings import (
    InstructionFilesSettings as InstructionFilesSettings,
)
from harness.instruction_files.discovery._reader import discover as discover
from harness.instruction_files.stores import InstructionStore as InstructionStore
from harness.instruction_files.stores import StoreEvents as StoreEvents
from harness.instruction_files.stores import StoreRead as StoreRead
from harness.instruction_files.stores import create_schema as create_schema
from harness.instruction_files.stores import open_store as open_store
from harness.instruction_files.stores._sqlite import SCHEMA_SQL as SCHEMA_SQL
from harness.instruction_files.stores._sqlite import (
    SqliteInstructionStore as SqliteInstructionStore,
)
from harness.instruction_files.stores._sqlite import source_path as source_path
from harness.instruction_files.stores.postgres import POSTGRES_SCHEMA_SQL as POSTGRES_SCHEMA_SQL
from harness.workspace._targets import TargetOutsideWorkspace as TargetOutsideWorkspace

__all__ = [
    "POSTGRES_SCHEMA_SQL",
    "SCHEMA_SQL",
    "InstructionFiles",
    "InstructionFilesSettings",
    "InstructionSet",
    "InstructionSource",
    "InstructionStore",
    "InstructionStoreError",
    "PassedRule",
    "RuleCandidate",
    "RulesExplanation",
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
