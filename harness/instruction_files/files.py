"""``InstructionFiles``: load a workspace's instruction sources through a supervised cache."""

from __future__ import annotations

import copy
import logging
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import TaskStatus

from harness.instruction_files.cache import CacheKey, CacheTable, CacheTask
from harness.instruction_files.discovery import walk_workspace
from harness.instruction_files.models import InstructionSet, InstructionSource
from harness.instruction_files.settings import InstructionFilesSettings
from harness.instruction_files.store import read_agent_row, source_path
from harness.runtime import ChildSpec
from harness.workspace import resolve_workspace

__all__ = ["InstructionFiles"]

logger = logging.getLogger(__name__)

DEFAULT_CHILD_ID = "instruction_files_cache"


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
    done: anyio.Event = field(default_factory=anyio.Event)
    result: InstructionSet | None = None
    error: Exception | None = None
    abandoned: bool = False  # the leading load was cancelled: waiters start over


@dataclass(slots=True)
class _Walked:
    result: InstructionSet | None = None
    error: Exception | None = None


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
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")


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
    ) -> None:
        self._settings = settings if settings is not None else InstructionFilesSettings()
        self._database = Path(database).absolute() if database is not None else None
        self._lock = threading.Lock()
        self._table: CacheTable | None = None
        self._inflight: dict[CacheKey, _Read] = {}
        self._epoch = 0  # bumped by every invalidate; guards a load's workspace resolution
        self._task = CacheTask(
            maxsize=self._settings.cache_maxsize,
            ttl=self._settings.cache_ttl,
            publish=self._publish,
            retract=self._retract,
        )

    def __repr__(self) -> str:
        state = "cached" if self._table is not None else "uncached"
        return f"InstructionFiles(database={self._database!r}, {state})"

    @property
    def settings(self) -> InstructionFilesSettings:
        return self._settings

    @property
    def database(self) -> Path | None:
        return self._database

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
                raise RuntimeError(
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
    ) -> InstructionSet:
        """The instruction sources for ``agent`` in ``workspace`` (and ``project_id``'s row).

        Raises ``WorkspaceNotFoundError`` (a ``FileNotFoundError``) for a missing workspace and
        ``InstructionStoreError`` when the database cannot be read. A cache hit reads no file,
        but the workspace path is resolved on every call: a symlinked workspace that is
        retargeted, as in an atomic deploy, is the new target at once.
        """
        _check_name("agent", agent)
        if project_id is not None:
            _check_name("project_id", project_id)
        given = os.fspath(workspace)
        with self._lock:
            epoch = self._epoch
        # A few lstat calls, on the loop: a worker-thread hop would cost ten times more than
        # the calls themselves, on the path every cache hit takes.
        resolved = resolve_workspace(given)
        key: CacheKey = (resolved, project_id, agent)
        while True:
            with self._lock:
                table = self._table
                if table is not None:
                    hit = table.entries.get(key)
                    # After an invalidate that raced our path resolution, only a fresh read
                    # may answer: the resolution itself may predate the invalidate.
                    if hit is not None and epoch == self._epoch:
                        return hit
                read = self._inflight.get(key)
                if read is None:
                    read = _Read(key, table, revoked=epoch != self._epoch)
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

    async def _lead(self, read: _Read) -> InstructionSet:
        try:
            result = await self._read_sources(read.key)
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
            table = self._table
            if not read.revoked and table is not None and table is read.table:
                table.entries[read.key] = result
        read.result = result
        read.done.set()
        return result

    async def _read_sources(self, key: CacheKey) -> InstructionSet:
        """Walk the tree (worker thread) and read the database row (aiosqlite) concurrently."""
        root, project_id, agent = key
        stop = threading.Event()
        walked = _Walked()

        async def walk() -> None:
            try:
                walked.result = await anyio.to_thread.run_sync(
                    walk_workspace, root, self._settings, stop, abandon_on_cancel=True
                )
            except Exception as exc:
                walked.error = exc

        row: InstructionSource | None = None
        row_warnings: list[str] = []
        try:
            if project_id is None:
                await walk()
            elif self._database is None:
                await walk()
                row_warnings.append(
                    f"{source_path(project_id, agent)}: not loaded: no database is configured "
                    "(pass database= to InstructionFiles or Harness)"
                )
            else:
                failure: Exception | None = None
                async with anyio.create_task_group() as group:
                    group.start_soon(walk)
                    try:
                        row, row_warnings = await read_agent_row(
                            self._database,
                            project_id,
                            agent,
                            busy_timeout=self._settings.database_timeout,
                        )
                    except Exception as exc:  # raised below, unwrapped by the task group
                        failure = exc
                        stop.set()
                        group.cancel_scope.cancel()
                if failure is not None:
                    raise failure
        finally:
            stop.set()  # an abandoned walk thread (cancelled load) stops soon after
        if walked.error is not None:
            raise walked.error
        assert walked.result is not None
        files = walked.result
        sources = files.sources if row is None else (*files.sources, row)
        return InstructionSet(sources=sources, warnings=(*files.warnings, *row_warnings))

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
        ``pkg/AGENTS.md``, its directory) reaches every set it can be part of.

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
        if workspace is not None:
            real = os.path.realpath(os.fspath(workspace))  # keys are resolved workspaces

        def related(resolved: str) -> bool:
            # The workspace itself, one that contains the path (a file or directory inside it,
            # as a file watcher reports), or one inside it: dropping more is always safe.
            assert real is not None
            return resolved == real or _is_within(real, resolved) or _is_within(resolved, real)

        def matches(key: CacheKey) -> bool:
            resolved, key_project, key_agent = key
            return (
                (real is None or related(resolved))
                and (project_id is None or key_project == project_id)
                and (agent is None or key_agent == agent)
            )

        with self._lock:
            self._epoch += 1
            table = self._table
            if table is not None:
                if workspace is None and project_id is None and agent is None:
                    table.entries.clear()
                else:
                    for key in [key for key in list(table.entries.keys()) if matches(key)]:
                        table.entries.pop(key, None)
            for key, read in list(self._inflight.items()):
                if matches(key):
                    read.revoked = True
                    del self._inflight[key]
