"""What every PostgreSQL store shares: what a driver failure means, and which ones a retry fixes.

The instruction store, the manifest store and the pin store each add the sentences about
their own tables; the login, the database name and the connection are worded once, here::

    from harness.stores._postgres import advice

    advice(ConnectionRefusedError(111, "refused"), timeout=5.0, timeout_hint="the timeout")
    # 'cannot be reached: the connection was refused (no server listening there): ...'

Imported only by PostgreSQL backends: it imports asyncpg, the ``harness[postgres]`` extra.
"""

from __future__ import annotations

import asyncio
import re
import socket

import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

__all__ = ["FAILURES", "STALE", "advice", "login_advice"]

FAILURES = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError)
"""What a statement on a live or dead connection can raise (besides programming errors)."""

STALE = (
    asyncpg.ConnectionDoesNotExistError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.InternalClientError,
)
"""A pooled connection that the server (or a restart) closed while it sat idle (asyncpg reports
a FATAL that arrived on an idle connection as an internal error at its next query)."""

_DATABASE_NAME = re.compile(r'database "(?P<name>[^"]*)" does not exist')


def login_advice(exc: BaseException, text: str) -> str | None:
    """What to do when the server refused the login or does not have the database."""
    if isinstance(exc, asyncpg.InvalidPasswordError):
        return (
            f"refused the login ({text}): check the user and password in the URL (or "
            "PGPASSWORD / ~/.pgpass), and that the server's pg_hba.conf lets this user in"
        )
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        return (
            f"refused the login ({text}): connect as a role that exists and may log in, "
            "or create it (CREATE ROLE ... LOGIN)"
        )
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        found = _DATABASE_NAME.search(text)
        database = f"database {found.group('name')!r}" if found else "the database"
        return (
            f"cannot be opened: {database} does not exist on that server: create it "
            "(createdb) or fix the database name in the URL"
        )
    return None


def advice(exc: BaseException, *, timeout: float, timeout_hint: str) -> str:
    """What to do when the login failed, or the server was slow, unreachable, misaddressed or
    went away; ``timeout_hint`` names the setting that raises the timeout."""
    text = str(exc) or type(exc).__name__
    refused = login_advice(exc, text)
    if refused is not None:
        return refused
    if isinstance(exc, asyncpg.QueryCanceledError | TimeoutError | asyncio.TimeoutError):
        return (
            f"did not answer within {timeout:g}s ({timeout_hint}): retry once the server "
            f"is less busy (or a lock is released), or raise {timeout_hint}"
        )
    if isinstance(exc, socket.gaierror):
        return (
            f"cannot be reached: its host name does not resolve ({text}): fix the host in the URL"
        )
    if isinstance(exc, ConnectionRefusedError | FileNotFoundError):
        return (
            "cannot be reached: the connection was refused (no server listening there): "
            "start PostgreSQL, or fix the host, port or socket directory in the URL"
        )
    if isinstance(exc, asyncpg.ClientConfigurationError | ValueError):
        return (
            f"is not a usable PostgreSQL URL ({text}): write it as "
            "postgresql://user:password@host:port/database"
        )
    if isinstance(exc, asyncpg.CannotConnectNowError | asyncpg.TooManyConnectionsError):
        return f"is not accepting connections now ({text}): retry shortly"
    if isinstance(exc, asyncpg.ConnectionDoesNotExistError | ConnectionError | OSError):
        return (
            f"lost the connection ({type(exc).__name__}: {text}): check that the server is "
            "up and reachable, then retry"
        )
    return f"failed ({type(exc).__name__}: {text}): check the server's log"
