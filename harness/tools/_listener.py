"""Hearing ``notifications/tools/list_changed`` on an SDK ``ClientSession``.

::

    from mcp import ClientSession
    from harness.tools import ToolCatalog

    listener = ToolCatalog.listener(inner=my_handler)         # my_handler: optional
    async with ClientSession(read, write, message_handler=listener) as session:
        ...                                                   # watch(..., listener=listener)

A handshake-era session passes server notifications only to the handler it was built with,
so this handler stands in that place: it forwards every message to ``inner`` and counts the
tool-list announcements. It never awaits anything itself (the SDK calls it from its read
loop, which must not wait on a re-listing), and any number of watchers can follow one
listener: each waits for the count to move past what it last saw, so announcements that
arrive while it re-lists are coalesced into one more re-listing, never lost.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["LIST_CHANGED", "CatalogListener", "MessageHandler"]

LIST_CHANGED = "notifications/tools/list_changed"

MessageHandler = Callable[[Any], Awaitable[None]]


class CatalogListener:
    """A ``message_handler`` that notes ``list_changed`` and forwards everything to ``inner``."""

    def __init__(self, inner: MessageHandler | None = None) -> None:
        self._inner = inner
        self.announcements = 0
        """How many ``list_changed`` notifications were heard so far."""
        self._event: anyio.Event | None = None

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == LIST_CHANGED:
            self.announcements += 1
            event, self._event = self._event, None
            if event is not None:
                event.set()
        if self._inner is not None:
            await self._inner(message)

    async def wait_past(self, seen: int) -> int:
        """Wait until more than ``seen`` announcements were heard; return the count."""
        while self.announcements <= seen:
            if self._event is None:
                self._event = anyio.Event()
            await self._event.wait()
        return self.announcements
