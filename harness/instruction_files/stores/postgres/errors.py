"""What a PostgreSQL failure means for the user: ``InstructionStoreError`` messages, no password.

Every failure of a connection, an authentication or a query becomes one
``InstructionStoreError`` naming the database by its redacted URL and saying what to do::

    from harness.instruction_files.stores.postgres.errors import explain, redact

    redact("postgresql://app:s3cret@db:5432/engine")   # 'postgresql://app:***@db:5432/engine'
    print(explain(ConnectionRefusedError(111, "refused"), "postgresql://app:***@db/engine", 5.0))

Design notes: the password can reach a message from two places, the URL (which we print) and
the text of a driver exception (which we quote); ``redact`` covers the first and ``scrub`` the
second, so every message built here goes through both.
"""

from __future__ import annotations

import asyncio
import re
import socket
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import asyncpg  # type: ignore[import-untyped]  # no stubs or py.typed (asyncpg 0.32)

from harness.instruction_files.models import InstructionStoreError

__all__ = ["cause", "explain", "passwords_of", "redact", "scrub"]

_HIDDEN = "***"
_SECRET_PARAMS = frozenset({"password", "passfile", "sslpassword"})


def redact(url: str) -> str:
    """``url`` with the password of its user info and of its query replaced by ``***``.

    A URL without a password is returned as written. Never raises: text that does not even
    split as a URL is replaced whole (it might be nothing but a password in the wrong place).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return f"<unparsable PostgreSQL URL, {len(url)} characters>"
    userinfo, at, hosts = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.split(':', 1)[0]}:{_HIDDEN}@{hosts}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(key in _SECRET_PARAMS for key, _ in pairs):
        query = urlencode(
            [(key, _HIDDEN if key in _SECRET_PARAMS else value) for key, value in pairs],
            safe="/*",
        )
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    shown = f"{parts.scheme}://{netloc}{parts.path}"
    return shown + (f"?{query}" if query else "") + (f"#{parts.fragment}" if parts.fragment else "")


def passwords_of(url: str) -> tuple[str, ...]:
    """Every spelling of a password in ``url`` (as written and percent-decoded)."""
    found: list[str] = []
    try:
        parts = urlsplit(url)
        userinfo, at, _ = parts.netloc.rpartition("@")
        if at and ":" in userinfo:
            found.append(userinfo.split(":", 1)[1])
        found.extend(
            value
            for key, value in parse_qsl(parts.query, keep_blank_values=True)
            if key in _SECRET_PARAMS
        )
    except ValueError:
        found.append(url)
    spellings = {spelling for secret in found for spelling in (secret, unquote(secret))}
    return tuple(sorted((s for s in spellings if s), key=len, reverse=True))


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``."""
    for secret in secrets:
        text = text.replace(secret, _HIDDEN)
    return text


def cause(exc: BaseException, secrets: tuple[str, ...]) -> BaseException | None:
    """``exc`` to chain as the cause of the error raised for it, or ``None`` if its text holds
    a secret (a traceback prints the cause's message too)."""
    text = f"{exc!s} {exc!r}"
    return None if any(secret in text for secret in secrets) else exc


_DATABASE_NAME = re.compile(r'database "(?P<name>[^"]*)" does not exist')


def explain(
    exc: BaseException, name: str, timeout: float, secrets: tuple[str, ...] = ()
) -> InstructionStoreError:
    """The ``InstructionStoreError`` for ``exc`` raised while reading the database ``name``.

    ``name`` is already redacted; the driver's text is quoted where it helps, and the whole
    message is scrubbed of ``secrets`` (``passwords_of(url)``). The sentences live in two flat
    branch lists, most specific first (asyncpg's classes nest): what the server refused, then
    how the connection failed.
    """
    text = str(exc) or type(exc).__name__
    advice = _refusal_advice(exc, text)
    if advice is None:
        advice = _connection_advice(exc, text, timeout)
    return InstructionStoreError(scrub(f"instructions database {name!r} {advice}", secrets))


def _refusal_advice(exc: BaseException, text: str) -> str | None:
    """What to do when the server answered but refused (login, database, table, grant)."""
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


def _connection_advice(exc: BaseException, text: str, timeout: float) -> str:
    """What to do when the server was slow, unreachable, misaddressed or went away."""
    if isinstance(exc, asyncpg.QueryCanceledError | TimeoutError | asyncio.TimeoutError):
        return (
            f"did not answer within {timeout:g}s (database_timeout): retry once the server "
            "is less busy (or a lock on agent_instructions is released), or raise "
            "instruction_files.database_timeout"
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
    return f"could not be read ({type(exc).__name__}: {text}): check the server's log"
