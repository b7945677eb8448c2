"""Following a server's catalog: re-list and re-check on every ``list_changed``.

::

    listener = ToolCatalog.listener()
    async with ClientSession(read, write, message_handler=listener) as session:
        await session.initialize()
        async for check in ToolCatalog.watch(
            session, server="repo", pins=pins, policy=policy, listener=listener
        ):
            engine.offer(check)        # the run takes it at its next build, or not at all

Each yielded check is a new value; the one a run already holds never changes. So a tool the
server announces reaches a run only when the engine hands the run the newer check, and even
then only if the policy allows it and its pins accept it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from harness.tools.catalog import ToolCatalog, ToolSource
from harness.tools.check import CatalogCheck
from harness.tools.errors import ToolCatalogError
from harness.tools.listener import CatalogListener
from harness.tools.pins import PinStore
from harness.tools.policy import ToolPolicy

__all__ = ["watch"]


async def watch(
    session: ToolSource,
    *,
    server: str,
    pins: PinStore,
    policy: ToolPolicy,
    listener: CatalogListener | None = None,
) -> AsyncIterator[CatalogCheck]:
    """The current check, then a fresh one after each tool-list announcement."""
    if listener is None:
        raise ToolCatalogError(
            f"watch({server!r}) cannot hear notifications/tools/list_changed on this session: "
            "build it with listener = ToolCatalog.listener() as ClientSession(..., "
            "message_handler=listener) and pass watch(..., listener=listener)"
        )
    seen = listener.announcements  # announcements before the first listing are covered by it
    while True:
        catalog = await ToolCatalog.from_mcp(session, server=server)
        yield await pins.check(catalog, policy)
        seen = await listener.wait_past(seen)
