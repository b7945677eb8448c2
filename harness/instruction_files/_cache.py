"""The cache table and the supervised task that owns it.

Internal to ``InstructionFiles``, which is the way to use it::

    async with Supervisor([files.child_spec()]):   # runs CacheTask.run: the table's owner
        await files.load(workspace, agent="reviewer")
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskStatus
from cachetools import Cache, LRUCache, TTLCache

from harness.errors import HarnessError
from harness.instruction_files._models import InstructionSet
from harness.instruction_files.discovery._incremental import Base

__all__ = ["CacheKey", "CacheTable", "CacheTask", "CacheTaskCrashed"]

logger = logging.getLogger(__name__)

CacheKey = tuple[str, str | None, str, tuple[str, ...] | None]
"""(resolved workspace, project_id, agent, the directories on the targets' chains or None for
the full walk)."""

SNAPSHOTS = 16  # workspaces whose last walk is kept for incremental reloads


class CacheTaskCrashed(HarnessError, RuntimeError):
    """The cache task was told to crash (used to exercise the supervisor's restart)."""


@dataclass(slots=True)
class CacheTable:
    """What one life of the cache task owns.

    ``entries`` maps (resolved workspace, project_id, agent, chain directories or None for a
    full walk) to the loaded set; ``snapshots`` maps a resolved workspace to the snapshot of
    its last full walk and the paths invalidated since
    (``harness.instruction_files.discovery._incremental``): at most ``SNAPSHOTS`` workspaces
    (a snapshot of a big tree weighs a few megabytes), least recently stored out.
    """

    entries: Cache[CacheKey, InstructionSet]
    snapshots: Cache[str, Base]

    @classmethod
    def create(cls, maxsize: int, ttl: float | None) -> CacheTable:
        entries: Cache[CacheKey, InstructionSet] = (
            LRUCache(maxsize=maxsize) if ttl is None else TTLCache(maxsize=maxsize, ttl=ttl)
        )
        kept = min(maxsize, SNAPSHOTS)
        snapshots: Cache[str, Base] = (
            LRUCache(maxsize=kept) if ttl is None else TTLCache(maxsize=kept, ttl=ttl)
        )
        return cls(entries=entries, snapshots=snapshots)


@dataclass(slots=True)
class CacheTask:
    """The body of the supervised cache child: publish a fresh table, then wait.

    ``publish(table)`` / ``retract(table)`` are callbacks into ``InstructionFiles`` (they run
    synchronously in this task, under the owner's lock).
    """

    maxsize: int
    ttl: float | None
    publish: Callable[[CacheTable], None]
    retract: Callable[[CacheTable], None]
    _crash: anyio.Event | None = field(default=None)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        table = CacheTable.create(self.maxsize, self.ttl)
        crash = anyio.Event()
        self.publish(table)
        self._crash = crash
        try:
            logger.debug("instruction-files cache table created")
            task_status.started()
            await crash.wait()
            raise CacheTaskCrashed("the instruction-files cache task was told to crash")
        finally:
            self._crash = None
            self.retract(table)
            logger.debug("instruction-files cache table dropped with its task")

    def crash(self) -> bool:
        """Make the running task raise (an abnormal exit); False if it is not running."""
        if self._crash is None:
            return False
        self._crash.set()
        return True
