"""One uncached read of a workspace's instruction sources: the walk and the database row.

``InstructionFiles`` calls ``read_sources`` for every cache miss; the walk (a full walk, a
reload from the last walk's snapshot, or a scoped walk of ``targets``' chains) runs in a worker
thread while the row is read from the store, concurrently::

    import anyio
    from harness.instruction_files import InstructionFilesSettings
    from harness.instruction_files.discovery._sources import read_sources
    from harness.workspace import resolve_workspace

    async def main() -> None:
        key = (resolve_workspace("examples/acme"), None, "reviewer", None)
        found, snapshot = await read_sources(key, InstructionFilesSettings(), None)
        print([source.path for source in found])

    anyio.run(main)

A store failure cancels the walk (its thread stops at its next directory) and is raised; a
cancelled caller abandons the thread, which the stop event ends soon after.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.to_thread

from harness.instruction_files._cache import CacheKey
from harness.instruction_files._models import InstructionSet
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._hints import files_above, other_formats
from harness.instruction_files.discovery._incremental import Base, Snapshot
from harness.instruction_files.discovery._incremental import walk as walk_from
from harness.instruction_files.discovery._scoping import scoped_walk
from harness.instruction_files.stores import InstructionStore, StoreRead
from harness.instruction_files.stores._sqlite import source_path
from harness.workspace._targets import Scope

__all__ = ["read_sources"]


@dataclass(slots=True)
class _Walked:
    result: tuple[InstructionSet, Snapshot | None] | None = None
    error: Exception | None = None


def _hinted(
    run: Callable[..., tuple[InstructionSet, Snapshot | None]],
    directories: tuple[str, ...],
    root: str,
    settings: InstructionFilesSettings,
    stop: threading.Event,
) -> tuple[InstructionSet, Snapshot | None]:
    """``run``, with the warnings about files it did not read (``hints``)."""
    files, snapshot = run(root, settings, stop)
    notes = [files_above(root, settings, settings.project_root_markers)]
    if not files.sources and not files.passed:
        notes.append(other_formats(root, settings, directories))
    more = tuple(note for note in notes if note is not None)
    if more:
        files = dataclasses.replace(files, warnings=(*files.warnings, *more))
    return files, snapshot


async def read_sources(
    key: CacheKey,
    settings: InstructionFilesSettings,
    store: InstructionStore | None,
    *,
    scope: Scope | None = None,
    base: Base | None = None,
) -> tuple[InstructionSet, Snapshot | None]:
    """Walk the tree (from ``base`` when there is one) or ``scope``'s chains, in a worker
    thread, and read the row concurrently: the set, and a full walk's snapshot."""
    root, project_id, agent, _ = key
    observed_at = datetime.now(UTC)
    run: Callable[..., tuple[InstructionSet, Snapshot | None]]
    if scope is None:
        run = functools.partial(walk_from, base=base)
    else:
        run = functools.partial(scoped_walk, scope=scope)
    run = functools.partial(_hinted, run, scope.directories if scope is not None else ("",))
    stop = threading.Event()
    walked = _Walked()

    async def walk() -> None:
        try:
            walked.result = await anyio.to_thread.run_sync(
                run, root, settings, stop, abandon_on_cancel=True
            )
        except Exception as exc:
            walked.error = exc

    try:
        row = await _walk_and_read(walk, stop, store, project_id, agent)
    finally:
        stop.set()  # an abandoned walk thread (cancelled load) stops soon after
    if walked.error is not None:
        raise walked.error
    assert walked.result is not None
    files, snapshot = walked.result
    sources = files.sources
    if row.source is not None:
        row_source = dataclasses.replace(row.source, version=row.updated_at, format="database")
        sources = (*sources, row_source)
    warnings = (*files.warnings, *row.warnings)
    return (
        dataclasses.replace(files, sources=sources, warnings=warnings, observed_at=observed_at),
        snapshot,
    )


async def _walk_and_read(
    walk: Callable[[], Coroutine[Any, Any, None]],
    stop: threading.Event,
    store: InstructionStore | None,
    project_id: str | None,
    agent: str,
) -> StoreRead:
    """Run ``walk`` and, concurrently, read the row; a store failure stops the walk."""
    if project_id is None:
        await walk()
        return StoreRead(None)
    if store is None:
        await walk()
        return StoreRead(
            None,
            (
                f"{source_path(project_id, agent)}: not loaded: no database is "
                "configured (pass database= to InstructionFiles or Harness)",
            ),
        )
    row = StoreRead(None)
    failure: Exception | None = None
    async with anyio.create_task_group() as group:
        group.start_soon(walk)
        try:
            row = await store.read(project_id, agent)
        except Exception as exc:  # raised below, unwrapped by the task group
            failure = exc
            stop.set()
            group.cancel_scope.cancel()
    if failure is not None:
        raise failure
    return row
