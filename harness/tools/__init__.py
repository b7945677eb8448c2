"""Tool catalogs pinned by digest: what the model may call is decided by the host.

::

    from harness.tools import PinStore, ToolCatalog, ToolPolicy

    policy = ToolPolicy({"repo": ["read_file", "search"]})
    async with await PinStore.open("pins.db") as pins:
        catalog = await ToolCatalog.from_mcp(session, server="repo")   # every page
        check = await pins.check(catalog, policy)
        prompt = await h.build_prompt("/srv/acme", agent="reviewer", tools=check)

A server's catalog is discovered data: ``ToolCatalog`` digests every definition (RFC 8785
canonical JSON, sha256), ``ToolPolicy`` names the tools the host lets in, ``PinStore`` keeps
the definitions it accepted and tells what changed, and ``ToolCatalog.watch`` follows
``list_changed`` announcements, yielding a new check each time, which a run sees only when it
is handed it. The parts: ``digest``, ``catalog``, ``policy``, ``check``, ``pins`` (with its
``sqlite`` and ``postgres`` backends), ``listener``, ``watch`` and ``units`` (the ``tools`` layer).
"""

from __future__ import annotations

from harness.tools._catalog import ToolEntry
from harness.tools._check import BlockedTool, CatalogCheck, Pin, ToolChange
from harness.tools._errors import PinStoreError, ToolCatalogError
from harness.tools._listener import CatalogListener
from harness.tools._pins import PinStore
from harness.tools._policy import ToolPolicy
from harness.tools._tool_catalog import ToolCatalog
from harness.tools._units import tool_units, tools_record

__all__ = [
    "BlockedTool",
    "CatalogCheck",
    "CatalogListener",
    "Pin",
    "PinStore",
    "PinStoreError",
    "ToolCatalog",
    "ToolCatalogError",
    "ToolChange",
    "ToolEntry",
    "ToolPolicy",
    "tool_units",
    "tools_record",
]
