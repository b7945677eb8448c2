"""PostgreSQL behind ``PinStore`` (through asyncpg): one row per (server, tool name).

::

    from harness.tools._postgres import PostgresPins

    backend = await PostgresPins.open("postgresql://engine@db/engine")   # creates its table
    print(await backend.load("repo"))                                   # {name: Pin}
    await backend.close()

The table ``harness_tool_pins`` is created if missing. Every failure becomes a
``PinStoreError`` naming the database by its redacted URL (never its password). Only bound
parameters reach SQL; each ``save`` is one transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed

from harness.stores._secrets import cause, passwords_of, redact, scrub
from harness.tools._check import Pin, pin_rows
from harness.tools._errors import PinStoreError

__all__ = ["PostgresPins"]

_TIMEOUT = 10.0
_SCHEMA = """
CREATE TABLE IF NOT EXISTS harness_tool_pins (
    server TEXT NOT NULL,
    name TEXT NOT NULL,
    digest TEXT NOT NULL,
    definition TEXT NOT NULL,
    pinned_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (server, name)
)
"""
_UPSERT = (
    "INSERT INTO harness_tool_pins (server, name, digest, definition) VALUES ($1, $2, $3, $4) "
    "ON CONFLICT (server, name) DO UPDATE SET digest = EXCLUDED.digest, "
    "definition = EXCLUDED.definition, pinned_at = now()"
)


class PostgresPins:
    """Pins in one PostgreSQL database; the ``PinStore`` serialises the calls."""

    def __init__(self, connection: asyncpg.Connection, url: str) -> None:
        self._db = connection
        self._url = url

    @classmethod
    async def open(cls, url: str) -> PostgresPins:
        try:
            connection = await asyncpg.connect(url, timeout=_TIMEOUT)
        except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
            raise _failed(url, "connect to", exc) from cause(exc, passwords_of(url))
        try:
            await connection.execute(_SCHEMA)
        except asyncpg.PostgresError as exc:
            await connection.close()
            raise _failed(url, "create the pins table in", exc) from exc
        return cls(connection, url)

    async def load(self, server: str) -> dict[str, Pin]:
        """Every pin of ``server``, by tool name."""
        try:
            rows = await self._db.fetch(
                "SELECT name, digest, definition FROM harness_tool_pins WHERE server = $1",
                server,
            )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise _failed(self._url, "read the pins from", exc) from exc
        return {row["name"]: Pin(row["digest"], json.loads(row["definition"])) for row in rows}

    async def save(self, server: str, pins: Mapping[str, Pin], forget: Iterable[str] = ()) -> None:
        """Write ``pins`` and drop ``forget``, in one transaction."""
        rows = pin_rows(server, pins)
        try:
            async with self._db.transaction():
                if rows:
                    await self._db.executemany(_UPSERT, rows)
                names = list(forget)
                if names:
                    await self._db.execute(
                        "DELETE FROM harness_tool_pins WHERE server = $1 "
                        "AND name = ANY($2::text[])",
                        server,
                        names,
                    )
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise _failed(self._url, "write the pins to", exc) from exc

    async def close(self) -> None:
        await self._db.close()


def _failed(url: str, action: str, exc: BaseException) -> PinStoreError:
    text = scrub(f"{type(exc).__name__}: {exc}", passwords_of(url))
    return PinStoreError(
        f"pin store {redact(url)}: could not {action} the database ({text}); check the URL, "
        "that the server is up and that the role may create and write harness_tool_pins"
    )
