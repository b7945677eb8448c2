"""One incarnation of a child: a single run of its start function, from start to exit.

Every (re)start of a child is a new ``Run``; the ``task_status`` its start function receives is
a ``ReadySignal`` on that run::

    import anyio

    async def child(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        await anyio.sleep(0)         # set up first ...
        task_status.started()        # ... then signal ready: the next child may start
        await anyio.sleep_forever()  # returning is a normal exit, raising an abnormal one
"""

# An exit *reason* is either an exception (abnormal) or an ``Exit`` member: ``NORMAL`` (the
# start function returned) or ``SHUTDOWN`` (the supervisor cancelled it). The restart type
# decides from it alone whether the child is started again (``will_restart``).
# The lineage (a context variable) records the (supervisor, run) pairs whose task tree the
# current task belongs to, so a call from inside a child's own tree is recognised as such.

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from enum import Enum
from typing import Any, Final, TypeAlias

import anyio
from anyio.abc import TaskStatus

from harness.errors import StateError
from harness.runtime._child import ChildSpec, Status

__all__ = [
    "FATAL",
    "LINEAGE",
    "SERVING",
    "Child",
    "Exit",
    "Lineage",
    "ReadySignal",
    "Reason",
    "Run",
    "own_runs",
    "public_reason",
    "retrieved",
    "will_restart",
]

# Not exit reasons: they stop the program, so they leave the child's task (as from any asyncio
# task) and are never turned into a restart or a FailedToStartChild.
FATAL: Final = (KeyboardInterrupt, SystemExit)


class Exit(Enum):
    NORMAL = "normal"
    SHUTDOWN = "shutdown"


Reason: TypeAlias = BaseException | Exit


def public_reason(reason: Reason) -> object:
    """The reason as users see it: the exception, or the string ``"normal"``/``"shutdown"``."""
    return reason.value if isinstance(reason, Exit) else reason


def will_restart(spec: ChildSpec, reason: Reason) -> bool:
    """Whether an exit with ``reason`` restarts the child (its restart type decides)."""
    if isinstance(reason, FATAL) or spec.restart == "temporary":
        return False
    return not (spec.restart == "transient" and reason is Exit.NORMAL)


class Run:
    """One incarnation of a child: its task, cancel scope and outcome."""

    __slots__ = (
        "child",
        "child_id",
        "done",
        "on_ready",
        "ready",
        "reason",
        "scope",
        "settled",
        "task",
    )

    def __init__(self, child: Child) -> None:
        self.child = child
        self.child_id = child.spec.id
        self.scope = anyio.CancelScope()
        self.ready = False
        self.settled = anyio.Event()  # ready, or finished before becoming ready
        self.done = anyio.Event()
        self.reason: Reason = Exit.NORMAL
        self.task: asyncio.Task[None] | None = None
        self.on_ready: Callable[[], None] | None = None


class ReadySignal(TaskStatus[Any]):
    """The ``task_status`` handed to a child's start function."""

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    def started(self, value: Any = None) -> None:
        run = self._run
        if run.ready:
            raise StateError(f"child {run.child_id!r} called task_status.started() twice")
        if run.done.is_set():
            raise StateError(f"child {run.child_id!r} signalled ready after it exited")
        run.ready = True
        run.settled.set()
        if run.on_ready is not None:
            run.on_ready()  # the bookkeeping is current the moment the child is ready


class Child:
    """A supervisor's slot for one spec: its current incarnation, status and restart count."""

    __slots__ = ("detached", "restarts", "run", "spec", "status")

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.run: Run | None = None
        self.status: Status = "stopped"
        self.restarts = 0
        # An incarnation stopped from inside its own task tree (it cannot be waited for
        # there): cancelled, and waited for later, before a new one starts or at shutdown.
        self.detached: Run | None = None


Lineage: TypeAlias = tuple[tuple[object, Run], ...]
LINEAGE: contextvars.ContextVar[Lineage] = contextvars.ContextVar(
    "harness_runtime_lineage", default=()
)
"""The (supervisor, incarnation) pairs whose task tree the current task belongs to, outermost
first. Tasks a child spawns inherit it, so a call from anywhere inside a child's tree is
recognised as coming from that child (and from its ancestors, through nested supervisors)."""


SERVING: contextvars.ContextVar[object] = contextvars.ContextVar(
    "harness_runtime_actor", default=None
)
"""The actor whose task tree the current task belongs to (set by ``Actor.run``, see
``harness.runtime._actor``); a supervised child's task starts with none, whoever started it."""


def own_runs(sup: object) -> list[Run]:
    """The incarnations of ``sup``'s children whose task tree the calling task is in."""
    return [run for owner, run in LINEAGE.get() if owner is sup]


def retrieved(task: asyncio.Task[None]) -> None:
    """Mark a finished task's exception as seen.

    Only KeyboardInterrupt/SystemExit end a child's task with an exception; they already went
    out through the event loop, so asyncio must not report them a second time as "never
    retrieved" when the task is collected (a report that, made from a finaliser, can also
    trip CPython 3.11's re-entrancy bug in ``ast.parse`` used by traceback formatting).
    """
    if not task.cancelled():
        task.exception()
