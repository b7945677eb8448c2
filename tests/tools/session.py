"""Real MCP sessions for the tests: the fixture server of ``server.py`` as a subprocess over
stdio, in the handshake era (a ``ToolCatalog.listener`` as the session's message handler) or
the 2026-07-28 era (an SDK ``Client``, which negotiates it)."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import Client, ClientSession, StdioServerParameters, stdio_client

from harness.tools import CatalogListener, ToolCatalog

SERVER = Path(__file__).with_name("server.py")


@asynccontextmanager
async def connected(page_size: int = 2) -> AsyncIterator[tuple[ClientSession, CatalogListener]]:
    """An initialized session to a fresh fixture server serving ``page_size`` tools a page."""
    listener = ToolCatalog.listener()
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(page_size)])
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=listener) as session,
    ):
        await session.initialize()
        yield session, listener


@asynccontextmanager
async def modern(page_size: int = 2) -> AsyncIterator[Client]:
    """An entered SDK ``Client`` on the 2026-07-28 era to a fresh fixture server."""
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), str(page_size)])
    async with Client(params) as client:
        assert client.protocol_version == "2026-07-28"
        yield client


def children() -> set[int]:
    """The live child processes of this process (Linux)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        text = (task / "children").read_text()
        found.update(int(pid) for pid in text.split())
    return found
