"""Recorded builds: the manifest store, replay and diff.

A build is recorded as its manifest (every layer's decisions and the build's context) plus
the text of every input unit, content-addressed by sha256 and stored once. Later it can be
fetched, replayed (rebuilt from the stored inputs and checked byte for byte) and compared::

    import anyio
    from harness.manifests import ManifestStore

    async def main() -> None:
        async with ManifestStore.open("manifests.db") as store:
            [newest] = await store.list(limit=1)
            replay = await store.replay(newest["manifest_id"])
            print(replay.identical, [str(d) for d in replay.differences])

    anyio.run(main)

Parts: ``store`` (the async API), ``sqlite`` (the file format and durability), ``record``
(what one build is), ``replay`` and ``diff`` (pure), ``ids``,
``recorder`` (the actor), ``provenance`` (the Harness side), ``commands`` (the CLI's part).

The names below are imported on first use (PEP 562), so the command line can register its
subcommands without loading the store.
"""

import importlib as _importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.manifests._diff import FieldChange as FieldChange
    from harness.manifests._diff import LayerDiff as LayerDiff
    from harness.manifests._diff import ManifestDiff as ManifestDiff
    from harness.manifests._diff import UnitRef as UnitRef
    from harness.manifests._errors import ManifestNotFound as ManifestNotFound
    from harness.manifests._errors import ManifestStoreError as ManifestStoreError
    from harness.manifests._ids import new_manifest_id as new_manifest_id
    from harness.manifests._record import ManifestRecord as ManifestRecord
    from harness.manifests._replay import Difference as Difference
    from harness.manifests._replay import Replay as Replay
    from harness.manifests._replay import ReplayError as ReplayError
    from harness.manifests._store import ManifestStore as ManifestStore

_EXPORTS: dict[str, str] = {
    "Difference": "harness.manifests._replay",
    "FieldChange": "harness.manifests._diff",
    "LayerDiff": "harness.manifests._diff",
    "ManifestDiff": "harness.manifests._diff",
    "ManifestNotFound": "harness.manifests._errors",
    "ManifestRecord": "harness.manifests._record",
    "ManifestStore": "harness.manifests._store",
    "ManifestStoreError": "harness.manifests._errors",
    "Replay": "harness.manifests._replay",
    "ReplayError": "harness.manifests._replay",
    "UnitRef": "harness.manifests._diff",
    "new_manifest_id": "harness.manifests._ids",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """Import a public name's module on first access and cache the name here."""
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
