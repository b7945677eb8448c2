"""Following a server's catalog: re-list and re-check on every tool-list announcement.

::

    listener = ToolCatalog.listener()
    async with ClientSession(read, write, message_handler=listener) as session:
        await session.initialize()
        async for check in ToolCatalog.watch(
            session, server="repo", pins=pins, policy=policy, listener=listener
        ):
            engine.offer(check)        # the run takes it at its next build, or not at all

A handshake-era session hears ``notifications/tools/list_changed`` through the listener it
was built with. A 2026-07-28 session (``mcp.Client`` in its default mode, or its
``ClientSession``) has no standing stream: without a listener, ``watch`` opens a
``subscriptions/listen`` stream for tool-list changes through the SDK's public
``mcp.client.subscriptions.listen``.

Each yielded check is a new value; the one a run already holds never changes. So a tool the
server announces reaches a run only when the engine hands the run the newer check, and even
then only if the policy allows it and its pins accept it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from typing import Any

from harness.tools._catalog import Catalog, HasSession, ToolSource, client_session
from harness.tools._check import CatalogCheck
from harness.tools._errors import ToolCatalogError
from harness.tools._listener import CatalogListener
from harness.tools._pins import PinStore
from harness.tools._policy import ToolPolicy

__all__ = ["watch"]


async def watch(
    session: ToolSource | HasSession,
    *,
    server: str,
    pins: PinStore,
    policy: ToolPolicy,
    listener: CatalogListener | None = None,
    kind: type[Catalog] = Catalog,
) -> AsyncIterator[CatalogCheck]:
    """The current check, then a fresh one after each tool-list announcement (each catalog
    listed as a ``kind``)."""
    source = client_session(session)

    async def fresh() -> CatalogCheck:
        return await pins.check(await kind.from_mcp(source, server=server), policy)

    if listener is None:
        async with _subscription(source, server) as events:
            _require_tool_changes(events, server)
            yield await fresh()
            async for _event in events:  # only the tool-list kind was asked for
                yield await fresh()
        return
    seen = listener.announcements  # announcements before the first listing are covered by it
    while True:
        yield await fresh()
        seen = await listener.wait_past(seen)


def _subscription(session: Any, server: str) -> AbstractAsyncContextManager[Any]:
    """A ``subscriptions/listen`` stream of tool-list changes (2026-07-28 sessions only)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    if getattr(session, "protocol_version", None) not in MODERN_PROTOCOL_VERSIONS:
        raise ToolCatalogError(
            f"watch({server!r}) cannot hear notifications/tools/list_changed on this "
            "handshake-era session: build it with listener = ToolCatalog.listener() as "
            "ClientSession(..., message_handler=listener) and pass watch(..., listener=listener)"
        )
    from mcp.client.subscriptions import listen

    return listen(session, tools_list_changed=True)


def _require_tool_changes(events: Any, server: str) -> None:
    if not events.honored.tools_list_changed:
        raise ToolCatalogError(
            f"server {server!r} declined to announce tool-list changes on subscriptions/listen; "
            "its catalog cannot be watched (re-list it with ToolCatalog.from_mcp instead)"
        )
