"""The errors of tool catalogs and their pins.

::

    from harness import HarnessError
    from harness.tools import ToolCatalog, ToolCatalogError

    try:
        ToolCatalog.from_tools("repo", [{"description": "no name"}])
    except ToolCatalogError as exc:   # also a HarnessError and a ValueError
        print(exc)
"""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["PinStoreError", "ToolCatalogError"]


class ToolCatalogError(HarnessError, ValueError):
    """A catalog that cannot be pinned or watched: a tool without a name, a non-object
    ``inputSchema``, two tools with one name on one server, a value JSON cannot hold, or a
    ``watch`` that cannot hear ``list_changed``. The message names the tool and what to do."""


class PinStoreError(HarnessError, OSError):
    """The pin store could not be opened, read or written; the message says what to do."""
