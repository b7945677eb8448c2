"""The errors of the manifest store: what went wrong with a recorded build, and what to do.

::

    from harness.manifests import ManifestNotFound, ManifestStoreError

    try:
        manifest = await store.get(manifest_id)
    except ManifestNotFound:          # also a KeyError
        print("no such build: list them with `harness manifests PATH`")
    except ManifestStoreError as exc: # also an OSError: the file could not be read or written
        print(exc)

Both derive from ``harness.errors.HarnessError``. ``ManifestStoreError`` is an ``OSError``
(the store's file, or its server, could not be used as a store); ``ManifestNotFound`` is
also a ``KeyError`` (an id looked up and not there) whose ``str`` is its message, unquoted.
"""

from __future__ import annotations

from harness.errors import HarnessError

__all__ = ["ManifestNotFound", "ManifestStoreError"]


class ManifestStoreError(HarnessError, OSError):
    """The manifest store could not be opened, read or written; the message says what to do."""


class ManifestNotFound(ManifestStoreError, KeyError):
    """No manifest with this id in the store (a ``KeyError`` too)."""

    def __init__(self, manifest_id: str, where: str) -> None:
        super().__init__(
            f"no manifest {manifest_id!r} in {where}: list the recorded builds with "
            f"`harness manifests PATH` (or `await store.list()`)"
        )
        self.manifest_id = manifest_id

    def __str__(self) -> str:
        return str(self.args[0])
