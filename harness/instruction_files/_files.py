"""``InstructionFiles``: load a workspace's instruction sources through a supervised cache.

What ``Harness`` runs for you; used on its own it needs a supervisor for its cache task::

    import anyio
    from harness.instruction_files import InstructionFiles
    from harness.runtime import Supervisor

    async def main() -> None:
        files = InstructionFiles(database="examples/acme.db")     # or store=<InstructionStore>
        async with Supervisor([files.child_spec()]):
            found = await files.load("examples/acme", agent="reviewer", project_id="acme")
            print([source.path for source in found])              # root first, the row last
            files.invalidate("examples/acme")                     # plain call, no await
        await files.aclose()                                      # the store it opened

    anyio.run(main)
"""

from __future__ import annotations

import copy
import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from harness.errors import ArgumentError, StateError
from harness.instruction_files._cache import CacheKey, CacheTable, CacheTask
from harness.instruction_files._explain import RulesExplanation, explain
from harness.instruction_files._git_places import GitPlaces
from harness.instruction_files._models import InstructionSet
from harness.instruction_files._settings import InstructionFilesSettings
from harness.instruction_files.discovery._incremental import (
    Base,
    Snapshot,
    add_dirt,
    located,
    reusable,
)
from harness.instruction_files.discovery._scoping import Targets, named, scope_for
from harness.instruction_files.discovery._sources import read_sources
from harness.instruction_files.discovery.formats import check_formats, formats_for
from harness.instruction_files.stores import InstructionStore, open_store
from harness.runtime import ChildSpec
from harness.workspace import resolve_workspace
from harness.workspace._targets import Scope

__all__ = ["InstructionFiles", "ResolvedWorkspace"]

logger = logging.getLogger(__name__)

DEFAULT_CHILD_ID = "instruction_files_cache"
_RULES_AGENT = "(rules_for)"  # the cache key's agent of a rules_for read (no row is read)


@dataclass(slots=True, eq=False)
class _Read:
    """One in-flight read of one key, shared by every concurrent ``load`` of that key.

    ``revoked`` is the read's generation check: ``invalidate`` sets it on every matching
    in-flight read (and unlinks the read, so later loads start a fresh one); a revoked read
    still answers the loads that were already waiting on it but is never written to the table.
    """

    key: CacheKey
    table: CacheTable | None
    revoked: bool
    generation: int = 0  # the store's generation when the read started
    cacheable: bool = True  # the store allowed caching rows when the read started
    done: anyio.Event = field(default_factory=anyio.Event)
    result: InstructionSet | None = None
    error: Exception | None = None
    abandoned: bool = False  # the leading load was cancelled: waiters start over
    scope: Scope | None = None  # a scoped read: the chains to walk
    base: Base | None = None  # the workspace's snapshot to reload from, and its dirt
    epoch: int = 0  # invalidate's epoch when the read started: its snapshot is kept if unchanged


@dataclass(frozen=True, slots=True)
class ResolvedWorkspace:
    """A workspace resolved by ``InstructionFiles.resolve``: its real path, and the
    invalidation epoch it was resolved in (so a load knows whether an ``invalidate`` raced
    the resolution). Lets a caller resolve once and use the result for several reads."""

    path: str
    epoch: int
    given: str | None = None  # the absolute path it was given by (for absolute targets)


def _is_within(path: str, directory: str) -> bool:
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return path.startswith(prefix)


def _for_waiter(error: Exception) -> Exception:
    """What a load waiting on a shared read raises: a copy whose cause is the original, since
    re-raising one object from several tasks would splice their frames into one traceback."""
    try:
        twin = copy.copy(error)
    except Exception:  # an exception class copy cannot rebuild: share the original
        return error
    twin.__cause__ = error
    return twin


def _check_name(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ArgumentError(f"{what} must be a non-empty string, got {value!r}")


class InstructionFiles:
    """Discovers, reads and caches the instruction sources of (workspace, project, agent).

    ``await load(workspace, agent=..., project_id=...)`` returns an ``InstructionSet`` in
    ascending precedence: the workspace root's file, every subdirectory's (shallow to deep,
    ties by path), then the agent's row of ``agent_instructions`` when ``project_id`` is given
    and a ``database`` is configured. ``invalidate(...)`` is a plain synchronous call.

    All I/O (the walk, in a worker thread, and the database read) happens in the task that
    called ``load``. The cache table belongs to a separate, supervised task that does nothing
    else (``child_spec()``); without that task, or while it is being restarted, ``load``
    simply answers uncached. Concurrent loads of one key share one read. Once ``invalidate``
    returns, no later ``load`` returns anything read before it.
    """

    def __init__(
        self,
        settings: InstructionFilesSettings | None = None,
        *,
        database: str | os.PathLike[str] | None = None,
        store: InstructionStore | None = None,
    ) -> None:
        self._settings = settings if settings is not None else InstructionFilesSettings()
        check_formats(self._settings.formats)  # an unknown format fails here, not at a load
        if database is not None and store is not None:
            raise ArgumentError(
                "pass either database= (a path or URL: the store is opened for you) or store= "
                "(an InstructionStore you built), not both"
            )
        self._owns_store = store is None and database is not None
        if store is None and database is not None:
            store = open_store(
                database,
                timeout=self._settings.database_timeout,
                listener_heartbeat=self._settings.listener_heartbeat,
            )
        self._store = store
        self._lock = threading.Lock()
        self._table: CacheTable | None = None
        self._inflight: dict[CacheKey, _Read] = {}
        self._epoch = 0  # bumped by every invalidate; guards a load's workspace resolution
        self._git = GitPlaces()  # git files outside a workspace that its rules read
        self._generation = store.generation if store is not None else 0  # last one seen
        self._task = CacheTask(
            maxsize=self._settings.cache_maxsize,
            ttl=self._settings.cache_ttl,
            publish=self._publish,
            retract=self._retract,
        )

    def __repr__(self) -> str:
        state = "cached" if self._table is not None else "uncached"
        return f"InstructionFiles(store={self._store!r}, {state})"

    @property
    def settings(self) -> InstructionFilesSettings:
        return self._settings

    @property
    def store(self) -> InstructionStore | None:
        """Where the agents' rows come from (``None``: no database configured)."""
        return self._store

    @property
    def database(self) -> Path | None:
        """The SQLite file of the store, if it has one (kept from the first release)."""
        path = getattr(self._store, "path", None)
        return path if isinstance(path, Path) else None

    async def aclose(self) -> None:
        """Close the store if this object opened it (``database=``); a given store is the
        caller's to close. Idempotent."""
        if self._owns_store and self._store is not None:
            await self._store.aclose()

    @property
    def cache_running(self) -> bool:
        """Whether the cache task is up (its table exists)."""
        return self._table is not None

    # -- the cache task ----------------------------------------------------------------------

    def child_spec(self, id: str = DEFAULT_CHILD_ID, *, shutdown: float = 1.0) -> ChildSpec:
        """The supervised cache task, for a ``harness.runtime.Supervisor`` (permanent)."""
        return ChildSpec(id, self.run_cache, restart="permanent", shutdown=shutdown)

    async def run_cache(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """The cache task's body: create the table, signal ready, hold it until stopped.

        Use it through ``child_spec()`` or ``await task_group.start(files.run_cache)``. Only
        one may run per ``InstructionFiles``.
        """
        await self._task.run(task_status)

    def _publish(self, table: CacheTable) -> None:
        with self._lock:
            if self._table is not None:
                raise StateError(
                    "this InstructionFiles already has a running cache task: start its "
                    "child_spec() under one supervisor only"
                )
            self._table = table

    def _retract(self, table: CacheTable) -> None:
        with self._lock:
            if self._table is table:
                self._table = None

    def _crash_cache(self) -> bool:
        """Crash the cache task (an abnormal exit its supervisor sees); for tests and drills."""
        return self._task.crash()

    # -- load ---------------------------------------------------------------------------------

    async def load(
        self,
        workspace: str | os.PathLike[str],
        *,
        agent: str,
        project_id: str | None = None,
        targets: Targets = (),
    ) -> InstructionSet:
        """The instruction sources for ``agent`` in ``workspace`` (and ``project_id``'s row);
        with ``targets`` (paths the run will touch: workspace-relative, or absolute inside it;
        they need not exist) only those on the chains from the root to each.

        Raises ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a missing workspace,
        ``TargetOutsideWorkspace`` (a ``ValueError``) for a target outside it, and
        ``InstructionStoreError`` when the database cannot be read. A cache hit reads no file,
        but the workspace path (and each target's chain) is resolved on every call: a
        symlinked workspace that is retargeted, as in an atomic deploy, is the new target at
        once.
        """
        return await self._scoped(self.resolve(workspace), agent, project_id, targets)

    def resolve(self, workspace: str | os.PathLike[str]) -> ResolvedWorkspace:
        """Resolve ``workspace`` (``WorkspaceNotFoundError`` if it is not a directory) for
        ``load_resolved``: a caller that reads more than the instruction files of one
        workspace (``Harness.build``) resolves it once."""
        with self._lock:
            epoch = self._epoch  # before resolving: an invalidate meanwhile must be seen
        # A few lstat calls, on the loop: a worker-thread hop would cost ten times more than
        # the calls themselves, on the path every cache hit takes.
        given = os.fspath(workspace)
        return ResolvedWorkspace(resolve_workspace(given), epoch, os.path.abspath(given))

    async def load_resolved(
        self,
        workspace: ResolvedWorkspace,
        *,
        agent: str,
        project_id: str | None = None,
        targets: Targets = (),
    ) -> InstructionSet:
        """``load`` for a workspace ``resolve`` returned (same guarantees)."""
        return await self._scoped(workspace, agent, project_id, targets)

    async def _scoped(
        self, workspace: ResolvedWorkspace, agent: str, project_id: str | None, targets: Targets
    ) -> InstructionSet:
        """``_load`` scoped to ``targets`` if any (``scoping``: their chains are in the key)."""
        _check_name("agent", agent)
        if project_id is not None:
            _check_name("project_id", project_id)
        prune, deny = self._settings.vendored, self._settings.deny_read
        scope = await scope_for(
            workspace.path, workspace.given, targets, prune=prune, deny_read=deny
        )
        return named(await self._load(workspace, agent, project_id, scope), scope)

    async def _load(
        self, workspace: ResolvedWorkspace, agent: str, project_id: str | None, scope: Scope | None
    ) -> InstructionSet:
        chain = scope.directories if scope is not None else None
        key: CacheKey = (workspace.path, project_id, agent, chain)
        epoch = workspace.epoch
        store = self._store
        self._git.remember(workspace.path)  # before the read: no invalidate is missed
        while True:
            with self._lock:
                if store is not None and store.generation != self._generation:
                    self._generation = store.generation  # rows read before are stale
                    self._drop_rows()
                table = self._table
                if table is not None:
                    hit = table.entries.get(key)
                    # After an invalidate that raced our path resolution, only a fresh read
                    # may answer: the resolution itself may predate the invalidate.
                    if hit is not None and epoch == self._epoch:
                        return hit
                read = self._inflight.get(key)
                if read is None:
                    read = _Read(
                        key, table, revoked=epoch != self._epoch, scope=scope, epoch=self._epoch
                    )
                    if table is not None and scope is None:  # scoped reads walk chains only
                        read.base = reusable(table.snapshots.get(key[0]), self._settings)
                    if project_id is not None and store is not None:
                        read.generation = self._generation
                        read.cacheable = store.cache_rows
                    self._inflight[key] = read
                    leader = True
                else:
                    leader = False
            if leader:
                return await self._lead(read)
            await read.done.wait()
            if read.abandoned:
                continue
            if read.error is not None:
                raise _for_waiter(read.error)
            assert read.result is not None
            return read.result

    def _may_cache(self, read: _Read) -> bool:
        """Whether a finished read may enter the table (call under the lock)."""
        table = self._table
        if read.revoked or table is None or table is not read.table:
            return False
        store = self._store
        if read.key[1] is None or store is None:
            return True  # no database row in it
        return read.cacheable and store.cache_rows and store.generation == read.generation

    async def _lead(self, read: _Read) -> InstructionSet:
        try:
            result, snapshot = await self._read_sources(read.key, read.scope, read.base)
        except BaseException as exc:
            with self._lock:
                if self._inflight.get(read.key) is read:
                    del self._inflight[read.key]
            if isinstance(exc, Exception):
                read.error = exc
            else:
                read.abandoned = True
            read.done.set()
            raise
        with self._lock:
            if self._inflight.get(read.key) is read:
                del self._inflight[read.key]
            if self._may_cache(read):
                assert self._table is not None
                self._table.entries[read.key] = result
            table = self._table
            fresh = not read.revoked and self._epoch == read.epoch
            if snapshot is not None and table is not None and table is read.table and fresh:
                # No invalidate since the read began: the snapshot is as fresh as the result.
                table.snapshots[read.key[0]] = (snapshot, frozenset())
        read.result = result
        read.done.set()
        return result

    async def _read_sources(
        self, key: CacheKey, scope: Scope | None, base: Base | None
    ) -> tuple[InstructionSet, Snapshot | None]:
        return await read_sources(key, self._settings, self._store, scope=scope, base=base)

    async def rules_for(
        self, workspace: str | os.PathLike[str], *, targets: Targets = ()
    ) -> RulesExplanation:
        """Every candidate rule file of the configured formats for ``targets`` (on their
        chains; the whole workspace without targets), each applied or not and why
        (``harness.instruction_files._explain``). Reads what ``load`` reads, through the
        same cache; the database row is not a rule file and is not looked at."""
        resolved = self.resolve(workspace)
        scope = await scope_for(
            resolved.path,
            resolved.given,
            targets,
            prune=self._settings.vendored,
            deny_read=self._settings.deny_read,
        )
        found = await self._load(resolved, _RULES_AGENT, None, scope)
        if scope is not None and found.targets != scope.targets:
            found = dataclasses.replace(found, targets=scope.targets)
        return explain(found, resolved.path, self._settings, formats_for(self._settings))

    # -- StoreEvents: what the store's companions report -----------------------------------

    def row_changed(self, project_id: str, agent: str) -> None:
        """The row of (project_id, agent) changed: drop the entries (and in-flight reads)
        holding it. Never raises for odd ids: a notice is data, not a call to validate."""
        self._drop(lambda key: key[1] == project_id and key[2] == agent)

    def rows_unreliable(self) -> None:
        """Change notices may have been missed: drop every entry that holds a database row
        (every entry loaded with a project_id, row or no row), and revoke such reads."""
        self._drop(lambda key: key[1] is not None)

    def _drop_rows(self) -> None:
        """``rows_unreliable`` for a caller that already holds the lock."""
        self._drop_locked(lambda key: key[1] is not None)

    def _drop(self, matches: Callable[[CacheKey], bool]) -> None:
        with self._lock:
            self._drop_locked(matches)

    def _drop_locked(self, matches: Callable[[CacheKey], bool], *, forget: bool = True) -> None:
        """Drop matching entries and revoke matching in-flight reads (under the lock). The
        epoch is ``invalidate``'s business (it guards path resolution; rows do not need it).
        ``forget``: their workspaces' snapshots too (``invalidate(path)`` keeps them, dirty)."""
        dropped = [key for key in self._inflight if matches(key)]
        table = self._table
        if table is not None:
            keys = [key for key in list(table.entries.keys()) if matches(key)]
            for key in keys:
                table.entries.pop(key, None)
            if forget:
                for key in (*keys, *dropped):
                    table.snapshots.pop(key[0], None)
        for key in dropped:
            self._inflight.pop(key).revoked = True

    # -- invalidate ---------------------------------------------------------------------------

    def invalidate(
        self,
        workspace: str | os.PathLike[str] | None = None,
        *,
        project_id: str | None = None,
        agent: str | None = None,
    ) -> None:
        """Drop the cached sets matching every given filter (no filter: everything).

        ``workspace`` matches the entries of that workspace and also of any cached workspace
        that contains it or lies inside it, so a path a file watcher reports (an edited
        ``pkg/AGENTS.md``, its directory) reaches every set it can be part of; the next load
        re-reads only what that path can change
        (``harness.instruction_files.discovery._incremental``).

        Synchronous and safe from any thread. In-flight reads of matching keys are revoked:
        they still answer the loads already waiting on them, but are not cached, and later
        loads read afresh. A filter ``load`` would refuse (an empty or non-string ``agent`` or
        ``project_id``) raises ``ValueError`` rather than silently matching nothing.
        """
        if project_id is not None:
            _check_name("project_id", project_id)
        if agent is not None:
            _check_name("agent", agent)
        real: str | None = None
        places: set[str] = set()
        if workspace is not None:
            real = os.path.realpath(os.fspath(workspace))  # keys are resolved workspaces
            places = {real, located(os.fspath(workspace))}  # the path itself, if a symlink

        def related(resolved: str) -> bool:
            # The workspace itself, one that contains the path (a file or directory inside it,
            # as a file watcher reports), or one inside it: dropping more is always safe.
            assert real is not None
            return resolved == real or _is_within(real, resolved) or _is_within(resolved, real)

        def matches(key: CacheKey) -> bool:
            resolved, key_project, key_agent, _ = key
            return (
                (real is None or related(resolved))
                and (project_id is None or key_project == project_id)
                and (agent is None or key_agent == agent)
            )

        with self._lock:
            self._epoch += 1
            if workspace is None and project_id is None and agent is None:
                if self._table is not None:
                    self._table.entries.clear()
                    self._table.snapshots.clear()
                for read in self._inflight.values():
                    read.revoked = True
                self._inflight.clear()
            elif not places:
                self._drop_locked(matches)
            else:
                self._drop_locked(matches, forget=False)
                owners = self._git.owners(places)
                if owners:  # their ignore rules may have changed: cold walks
                    self._drop_locked(lambda key: key[0] in owners)
                    if self._table is not None:
                        for root in owners:
                            self._table.snapshots.pop(root, None)
                if self._table is not None:
                    add_dirt(self._table.snapshots, places)
