"""A supervisor's child table: the children, and the starting and stopping of their runs.

Both supervisors own one (``Supervisor`` a fixed, ordered list; ``DynamicSupervisor`` children
that come and go). Each child runs in its own task, so no child's error ever reaches the host.
"""

# Each child runs in its own task, created unstructured (``loop.create_task``), with an anyio
# ``CancelScope`` around its start function. A structured task group could not honour the
# shutdown contract: a child that swallows cancellation would keep the group's ``__aexit__``
# waiting forever, whereas a supervisor abandons it after ``shutdown`` seconds. Each child's
# outcome is caught and classified inside its own wrapper and turned into an exit *reason*,
# reported through a memory stream to the supervisor's manager task.
# All stopping happens inside shielded scopes, each child bounded by its ``shutdown``, so a
# cancelled host still stops its children. A child stopped from inside its own task tree cannot
# be waited for there: it is cancelled and *detached*, and waited for before it starts again or
# when the supervisor stops.

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Coroutine
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.errors import describe_reason, single_cause
from harness.runtime._child import ChildSpec, Status
from harness.runtime._errors import UnknownChild
from harness.runtime._incarnation import (
    FATAL,
    LINEAGE,
    SERVING,
    Child,
    Exit,
    Lineage,
    ReadySignal,
    Reason,
    Run,
    own_runs,
    retrieved,
    will_restart,
)

__all__ = ["ChildTable"]

logger = logging.getLogger("harness.runtime._supervisor")


class ChildTable:
    """The children of one supervisor and the runs (incarnations) of each."""

    def __init__(self, name: str = "supervisor") -> None:
        self.name = name
        self._children: dict[Child, None] = {}  # in start order; O(1) removal
        self.tasks: set[asyncio.Task[None]] = set()
        self.closing = False
        self.exits_send: MemoryObjectSendStream[Run] | None = None
        self.exits_recv: MemoryObjectReceiveStream[Run] | None = None
        # Where this supervisor runs in a supervision tree (set on opening): its children's
        # lineage extends it, whatever task happens to start them.
        self.lineage: Lineage = ()

    def reset(self, specs: tuple[ChildSpec, ...] = ()) -> None:
        """The given children, all stopped (before the supervisor is entered, too)."""
        self._children = dict.fromkeys(Child(spec) for spec in specs)

    def open(self, specs: tuple[ChildSpec, ...] = ()) -> None:
        """Start afresh (entering the supervisor): the given children, and the exit stream."""
        self.reset(specs)
        self.closing = False
        self.exits_send, self.exits_recv = anyio.create_memory_object_stream[Run](math.inf)
        self.lineage = LINEAGE.get()

    @property
    def children(self) -> list[Child]:
        """The children, in start order."""
        return list(self._children)

    def __len__(self) -> int:
        return len(self._children)

    def __contains__(self, child: object) -> bool:
        return child in self._children

    def add(self, child: Child) -> None:
        self._children[child] = None

    def remove(self, child: Child) -> None:
        self._children.pop(child, None)

    def own_runs(self) -> list[Run]:
        """The runs of this table whose task tree the calling task is in."""
        return own_runs(self)

    # ------------------------------------------------------------------ lookup

    def status(self, child: Child) -> Status:
        """The child's status, counting an ended incarnation whose exit is not processed yet."""
        run = child.run
        if child.status == "running" and run is not None and run.done.is_set():
            if not self.closing and will_restart(child.spec, run.reason):
                return "restarting"
            return "stopped"
        return child.status

    def find(self, id: str) -> Child | None:
        for child in self._children:
            if child.spec.id == id:
                return child
        return None

    def get(self, id: str) -> Child:
        child = self.find(id)
        if child is None:
            raise UnknownChild(id, [c.spec.id for c in self.children])
        return child

    # ------------------------------------------------------------------ tasks and logs

    def spawn(self, coro: Coroutine[Any, Any, None], label: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            coro, name=f"harness.runtime:{self.name}/{label}"
        )
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        task.add_done_callback(retrieved)
        return task

    def close_streams(self) -> None:
        if self.exits_send is not None:
            self.exits_send.close()
        if self.exits_recv is not None:
            self.exits_recv.close()

    def log(self, level: int, event: str, child_id: str, detail: str = "") -> None:
        logger.log(
            level,
            "%s supervisor=%s child=%s%s",
            event,
            self.name,
            child_id,
            f" {detail}" if detail else "",
            extra={"event": event, "supervisor": self.name, "child_id": child_id},
        )

    def log_ended(self, spec: ChildSpec, run: Run) -> None:
        reason = run.reason
        if isinstance(reason, BaseException):
            self.log(
                logging.ERROR, "child_terminated", spec.id, f"reason={describe_reason(reason)}"
            )
        else:
            self.log(logging.DEBUG, "child_terminated", spec.id, f"reason={reason.value}")

    # ------------------------------------------------------------------ starting

    async def _child_main(
        self, spec: ChildSpec, run: Run, exits: MemoryObjectSendStream[Run]
    ) -> None:
        """Run one incarnation and classify its outcome.

        No error escapes, except KeyboardInterrupt/SystemExit (recorded as the exit first).
        """
        reason: Reason = Exit.NORMAL
        # This task's tree is this incarnation's, whichever task started it.
        LINEAGE.set((*self.lineage, (self, run)))
        SERVING.set(None)  # started from an actor's callback or not, it is not that actor
        try:
            with run.scope:
                await spec.start(ReadySignal(run))
            if run.scope.cancelled_caught:
                reason = Exit.SHUTDOWN
        except asyncio.CancelledError as exc:
            # Cancelled from outside our scope (e.g. the event loop is closing): an abnormal
            # exit for the supervisor, and the task still ends as cancelled.
            reason = exc
            raise
        except BaseException as exc:
            reason = single_cause(exc)  # a child's own task groups wrap its error
            if isinstance(reason, FATAL):
                # Recorded as the exit (never restarted), then re-raised so that asyncio
                # propagates it out of the event loop, as from any task.
                if reason is exc:
                    raise
                raise reason  # noqa: B904 -- the leaf, so asyncio recognises it
        finally:
            run.reason = reason
            run.done.set()
            run.settled.set()
            # If the supervisor is gone, nobody needs this exit any more.
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                exits.send_nowait(run)

    async def start(self, child: Child, *, again: bool = False) -> BaseException | None:
        """Start one child and wait for its readiness; the cause if it failed to start.

        ``again``: this is a restart, counted in the child's ``restarts``.
        """
        spec = child.spec
        run = Run(child)

        def on_ready() -> None:
            child.run = run
            child.status = "running"
            if again:
                child.restarts += 1
            self.log(logging.INFO, "child_started", spec.id, f"restart={spec.restart}")

        run.on_ready = on_ready
        await self.wait_detached(child)
        assert self.exits_send is not None
        run.task = self.spawn(self._child_main(spec, run, self.exits_send), spec.id)
        try:
            await run.settled.wait()
        except BaseException:
            # Cancelled while waiting: do not leave a half-started child behind.
            if child.run is run:
                child.run = None
                child.status = "stopped"
            await self.stop_run(spec, run)
            raise
        if run.ready:
            return None
        cause = run.reason
        if not isinstance(cause, BaseException):
            cause = RuntimeError(
                f"child {spec.id!r}: start returned before calling task_status.started()"
            )
        self.log(logging.ERROR, "start_error", spec.id, f"reason={describe_reason(cause)}")
        return cause

    # ------------------------------------------------------------------ stopping

    async def stop_run(self, spec: ChildSpec, run: Run) -> None:
        """Stop one incarnation, bounded by its shutdown; abandon it if it will not stop."""
        with anyio.CancelScope(shield=True):
            if run.done.is_set():
                # Ended on its own meanwhile; its queued exit will be dropped as stale, so
                # its outcome is reported here.
                self.log_ended(spec, run)
                return
            run.scope.cancel()
            if spec.shutdown == "brutal":
                self.log(logging.DEBUG, "child_terminated", spec.id, "reason=brutal_kill")
                return
            timeout = None if spec.shutdown is None else float(spec.shutdown)
            with anyio.move_on_after(timeout):
                await run.done.wait()
            if not run.done.is_set():
                self.log(
                    logging.ERROR,
                    "shutdown_error",
                    spec.id,
                    f"reason=timeout: it did not stop within {timeout} s of cancellation "
                    "and was abandoned (does it swallow cancellation?)",
                )
            elif isinstance(run.reason, BaseException):
                self.log(
                    logging.ERROR,
                    "shutdown_error",
                    spec.id,
                    f"reason={describe_reason(run.reason)} raised while shutting down",
                )
            else:
                self.log(logging.DEBUG, "child_terminated", spec.id, "reason=shutdown")

    async def stop_child(self, child: Child) -> None:
        run, child.run = child.run, None
        child.status = "stopped"
        if run is None:
            return
        if run in self.own_runs():
            # Called from inside this incarnation's own task tree: waiting would wait for
            # ourselves. Cancel it now; it is waited for later (see _wait_detached).
            run.scope.cancel()
            child.detached = run
            self.log(logging.DEBUG, "child_terminated", child.spec.id, "reason=shutdown (itself)")
            return
        await self.stop_run(child.spec, run)

    async def wait_detached(self, child: Child) -> None:
        """Wait (bounded by its shutdown) for an incarnation stopped from its own tree, unless
        the caller is still inside that tree (then the new one starts alongside its exit)."""
        run = child.detached
        if run is None or run in self.own_runs():
            return
        child.detached = None
        await self.stop_run(child.spec, run)

    async def stop_all(self, *, concurrently: bool = False) -> None:
        """Stop every child: in reverse start order, one at a time, or all at once.

        Either way each child is bounded by its own ``shutdown``.
        """
        with anyio.CancelScope(shield=True):
            if not concurrently:
                for child in reversed(list(self.children)):
                    await self.stop_child(child)
                    await self.wait_detached(child)
                return
            children = list(self.children)
            for child in children:  # every cancellation first, then the bounded waits
                if child.run is not None and child.run not in self.own_runs():
                    child.run.scope.cancel()
            async with anyio.create_task_group() as group:
                for child in children:
                    group.start_soon(self._stop_for_good, child)

    async def _stop_for_good(self, child: Child) -> None:
        await self.stop_child(child)
        await self.wait_detached(child)
