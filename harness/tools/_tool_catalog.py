"""``ToolCatalog``: a server's catalog (``harness.tools._catalog``) plus following it live.

::

    from harness.tools import ToolCatalog

    listener = ToolCatalog.listener()   # ClientSession(..., message_handler=listener)
    # async for check in ToolCatalog.watch(session, server="repo", pins=pins, policy=policy,
    #                                      listener=listener): ...

The data and its digests live one module down (``Catalog``), so that checks, pins and the
watcher can name a catalog without importing this module, which imports them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from harness.tools._catalog import Catalog, HasSession, ToolSource
from harness.tools._check import CatalogCheck
from harness.tools._listener import CatalogListener, MessageHandler
from harness.tools._pins import PinStore
from harness.tools._policy import ToolPolicy
from harness.tools._watch import watch

__all__ = ["ToolCatalog"]


class ToolCatalog(Catalog):
    """The tools one server offers (``from_tools``, ``from_mcp``), with ``listener`` and
    ``watch`` to follow its ``list_changed`` announcements."""

    __slots__ = ()

    @staticmethod
    def listener(inner: MessageHandler | None = None) -> CatalogListener:
        """A ``message_handler`` for ``ClientSession(..., message_handler=...)`` that hears
        ``notifications/tools/list_changed`` for ``watch`` and forwards every message to
        ``inner``."""
        return CatalogListener(inner)

    @staticmethod
    def watch(
        session: ToolSource | HasSession,
        *,
        server: str,
        pins: PinStore,
        policy: ToolPolicy,
        listener: CatalogListener | None = None,
    ) -> AsyncIterator[CatalogCheck]:
        """Yield the current ``CatalogCheck``, then a new one after each ``list_changed``
        (every page re-listed, re-checked against ``pins`` and ``policy``).

        A handshake-era session needs ``listener`` (``ToolCatalog.listener()`` given to it as
        its ``message_handler``); on a 2026-07-28 session ``watch`` opens its own
        ``subscriptions/listen`` stream when no listener is given. A run keeps the check it
        holds until it is handed a newer one: nothing reaches a run because the server
        announced it.
        """
        return watch(
            session, server=server, pins=pins, policy=policy, listener=listener, kind=ToolCatalog
        )
