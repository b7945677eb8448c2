"""A real MCP session for the tests: the fixture server of ``server.py`` as a subprocess over
stdio, with a ``ToolCatalog.listener`` as the session's message handler."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from mcp import ClientSession, StdioServerParameters, stdio_client

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


def children() -> set[int]:
    """The live child processes of this process (Linux)."""
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        text = (task / "children").read_text()
        found.update(int(pid) for pid in text.split())
    return found
