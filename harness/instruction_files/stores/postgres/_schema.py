"""The PostgreSQL schema harness ships: ``agent_instructions`` plus its change-notice trigger.

For tests, examples and local setups (production databases get the table from the migrations
of the service that owns it; they need the trigger too, or nodes never hear of changes)::

    from harness.instruction_files.stores.postgres._schema import create_schema_postgres

    await create_schema_postgres("postgresql://app@localhost/engine")

The trigger notifies channel ``CHANNEL`` with ``{"project_id": ..., "agent_slug": ...}`` on
every insert, update and delete (``null`` ids when no single row can be named: TRUNCATE, or
ids too long for a NOTIFY payload). Applying the schema is idempotent.
"""

from __future__ import annotations

import importlib.resources

__all__ = ["CHANNEL", "POSTGRES_SCHEMA_SQL", "create_schema_postgres"]

CHANNEL = "harness_agent_instructions"
"""The NOTIFY channel of ``agent_instructions`` changes."""

POSTGRES_SCHEMA_SQL: str = (
    importlib.resources.files(__package__ or __name__.rpartition(".")[0])
    .joinpath("schema.sql")
    .read_text("utf-8")
)
"""The table, the notify trigger function and its triggers (idempotent SQL)."""


async def create_schema_postgres(url: str, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Create ``agent_instructions`` and its notify trigger in the database at ``url``.

    One transaction; connecting and applying are each bounded by ``timeout`` seconds.
    Failures raise ``InstructionStoreError`` (the same wording as reads; never the password).
    """
    import asyncpg  # type: ignore[import-untyped]  # here, not at the top: see the package notes

    from harness.instruction_files.stores.postgres._errors import explain
    from harness.stores._secrets import cause, passwords_of, redact

    secrets = passwords_of(url)
    try:
        connection = await asyncpg.connect(url, timeout=timeout)
    except Exception as exc:
        raise explain(exc, redact(url), timeout, secrets) from cause(exc, secrets)
    try:
        async with connection.transaction():
            await connection.execute(POSTGRES_SCHEMA_SQL, timeout=timeout)
    except Exception as exc:
        raise explain(exc, redact(url), timeout, secrets) from cause(exc, secrets)
    finally:
        await connection.close(timeout=timeout)
