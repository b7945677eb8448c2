"""What a PostgreSQL failure means for a read of ``agent_instructions``, without the password.

Every failure of a connection, an authentication or a query becomes one
``InstructionStoreError`` naming the database by its redacted URL and saying what to do::

    from harness.instruction_files.stores.postgres._errors import explain

    print(explain(ConnectionRefusedError(111, "refused"), "postgresql://app:***@db/engine", 5.0))
"""

from __future__ import annotations

import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

from harness.instruction_files._models import InstructionStoreError
from harness.stores._postgres import advice
from harness.stores._secrets import scrub

__all__ = ["explain"]


def explain(
    exc: BaseException, name: str, timeout: float, secrets: tuple[str, ...] = ()
) -> InstructionStoreError:
    """The ``InstructionStoreError`` for ``exc`` raised while reading the database ``name``.

    ``name`` is already redacted; the driver's text is quoted where it helps, and the whole
    message is scrubbed of ``secrets`` (``passwords_of(url)``). The table's own refusals come
    first (asyncpg's classes nest), then what every PostgreSQL store says.
    """
    text = str(exc) or type(exc).__name__
    said = _table_advice(exc, text)
    if said is None:
        said = advice(exc, timeout=timeout, timeout_hint="instruction_files.database_timeout")
    return InstructionStoreError(scrub(f"instructions database {name!r} {said}", secrets))


def _table_advice(exc: BaseException, text: str) -> str | None:
    """What to do when the server answered but refused the table (missing, columns, grant)."""
    if isinstance(exc, asyncpg.UndefinedTableError):
        return (
            "has no agent_instructions table: create it with await "
            "harness.instruction_files.create_schema(url) (the SQL is "
            "harness.instruction_files.POSTGRES_SCHEMA_SQL) or run the migration that owns it"
        )
    if isinstance(exc, asyncpg.UndefinedColumnError):
        return (
            f"has an agent_instructions table without the expected columns ({text}): it "
            "needs project_id, agent_slug, content and updated_at (see "
            "harness.instruction_files.POSTGRES_SCHEMA_SQL)"
        )
    if isinstance(exc, asyncpg.InsufficientPrivilegeError):
        return (
            f"refused the read ({text}): GRANT SELECT ON agent_instructions to the role in the URL"
        )
    return None
