"""Starting and stopping a supervisor's children: the machinery under ``Supervisor``.

``Supervisor`` builds on the ``Children`` base class here, which owns the child list and runs
each incarnation in its own task. What it guarantees is what a user sees of a supervisor::

    import anyio
    from harness.runtime import ChildSpec, Supervisor

    async def stubborn(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        with anyio.CancelScope(shield=True):  # ignores cancellation ...
            await anyio.sleep(3600)

    async def main() -> None:
        async with Supervisor([ChildSpec("stubborn", stubborn, shutdown=0.1)]):
            pass  # ... so it is abandoned (and logged) 0.1 s after being cancelled

    anyio.run(main)

Design notes:

- Each child runs in its own task, created unstructured (``loop.create_task``), with an anyio
  ``CancelScope`` around its start function. A structured task group could not honour OTP's
  shutdown contract: a child that swallows cancellation would keep the group's ``__aexit__``
  waiting forever, whereas OTP abandons (kills) it after ``shutdown`` seconds. Being
  unstructured, the supervisor owns the children's whole life cycle explicitly: it starts them in
  order, stops them in reverse, and never lets a child's exception propagate anywhere. That is
  also why one child's error can never reach the host as an ``ExceptionGroup``: each child's
  outcome is caught and classified inside its own wrapper and turned into an exit *reason*.
- Exits are reported through a memory stream to the manager (see ``restarts``).
- All stopping happens inside shielded scopes, each child bounded by its ``shutdown``, so a
  cancelled host still stops its children in reverse order.
- A child stopped from inside its own task tree cannot be waited for there: it is cancelled
  and *detached*, and waited for before it starts again or when the supervisor stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.errors import single_cause
from harness.runtime.child import ChildSpec, Status
from harness.runtime.errors import UnknownChild, describe
from harness.runtime.incarnation import (
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

__all__ = ["Children"]

logger = logging.getLogger("harness.runtime.supervisor")


class Children:
    """The child list of a supervisor and the starting and stopping of its incarnations."""

    def __init__(self, specs: tuple[ChildSpec, ...]) -> None:
        self._specs = specs
        self._name = "supervisor"
        self._children: list[Child] = [Child(spec) for spec in specs]
        self._tasks: set[asyncio.Task[None]] = set()
        self._active = False
        self._closing = False
        # Serialises the manager, the admin calls and the initial start, like the single OTP
        # supervisor process does with its mailbox.
        self._lock: anyio.Lock | None = None
        self._exits_send: MemoryObjectSendStream[Run] | None = None
        self._exits_recv: MemoryObjectReceiveStream[Run] | None = None
        # Where this supervisor runs in a supervision tree (set on entering): its children's
        # lineage extends it, whatever task happens to start them.
        self._lineage: Lineage = ()
        # One scope per admin call in flight, cancelled when the supervisor stops (see admin).
        self._admin_scopes: set[anyio.CancelScope] = set()

    # ------------------------------------------------------------------ lookup

    def _status(self, child: Child) -> Status:
        """The child's status, counting an ended incarnation whose exit is not processed yet."""
        run = child.run
        if child.status == "running" and run is not None and run.done.is_set():
            if not self._closing and will_restart(child.spec, run.reason):
                return "restarting"
            return "stopped"
        return child.status

    def _find(self, id: str) -> Child | None:
        for child in self._children:
            if child.spec.id == id:
                return child
        return None

    def _get(self, id: str) -> Child:
        child = self._find(id)
        if child is None:
            raise UnknownChild(id, [c.spec.id for c in self._children])
        return child

    # ------------------------------------------------------------------ tasks and logs

    def _spawn(self, coro: Coroutine[Any, Any, None], label: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            coro, name=f"harness.runtime:{self._name}/{label}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(retrieved)
        return task

    def _close_streams(self) -> None:
        if self._exits_send is not None:
            self._exits_send.close()
        if self._exits_recv is not None:
            self._exits_recv.close()

    def _log(self, level: int, event: str, child_id: str, detail: str = "") -> None:
        logger.log(
            level,
            "%s supervisor=%s child=%s%s",
            event,
            self._name,
            child_id,
            f" {detail}" if detail else "",
            extra={"event": event, "supervisor": self._name, "child_id": child_id},
        )

    def _log_ended(self, spec: ChildSpec, run: Run) -> None:
        reason = run.reason
        if isinstance(reason, BaseException):
            self._log(logging.ERROR, "child_terminated", spec.id, f"reason={describe(reason)}")
        else:
            self._log(logging.DEBUG, "child_terminated", spec.id, f"reason={reason.value}")

    # ------------------------------------------------------------------ starting

    async def _child_main(
        self, spec: ChildSpec, run: Run, exits: MemoryObjectSendStream[Run]
    ) -> None:
        """Run one incarnation and classify its outcome.

        No error escapes, except KeyboardInterrupt/SystemExit (recorded as the exit first).
        """
        reason: Reason = Exit.NORMAL
        # This task's tree is this incarnation's, whichever task started it.
        LINEAGE.set((*self._lineage, (self, run)))
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

    async def _start(self, child: Child, *, again: bool = False) -> BaseException | None:
        """Start one child and wait for its readiness; the cause if it failed to start.

        ``again``: this is a restart, counted in the child's ``restarts``.
        """
        spec = child.spec
        run = Run(spec.id)

        def on_ready() -> None:
            child.run = run
            child.status = "running"
            if again:
                child.restarts += 1
            self._log(logging.INFO, "child_started", spec.id, f"restart={spec.restart}")

        run.on_ready = on_ready
        await self._wait_detached(child)
        assert self._exits_send is not None
        run.task = self._spawn(self._child_main(spec, run, self._exits_send), spec.id)
        try:
            await run.settled.wait()
        except BaseException:
            # Cancelled while waiting: do not leave a half-started child behind.
            if child.run is run:
                child.run = None
                child.status = "stopped"
            await self._stop_run(spec, run)
            raise
        if run.ready:
            return None
        cause = run.reason
        if not isinstance(cause, BaseException):
            cause = RuntimeError(
                f"child {spec.id!r}: start returned before calling task_status.started()"
            )
        self._log(logging.ERROR, "start_error", spec.id, f"reason={describe(cause)}")
        return cause

    # ------------------------------------------------------------------ stopping

    async def _stop_run(self, spec: ChildSpec, run: Run) -> None:
        """Stop one incarnation, bounded by its shutdown; abandon it if it will not stop."""
        with anyio.CancelScope(shield=True):
            if run.done.is_set():
                # Ended on its own meanwhile; its queued exit will be dropped as stale, so
                # its outcome is reported here.
                self._log_ended(spec, run)
                return
            run.scope.cancel()
            if spec.shutdown == "brutal":
                self._log(logging.DEBUG, "child_terminated", spec.id, "reason=brutal_kill")
                return
            timeout = None if spec.shutdown is None else float(spec.shutdown)
            with anyio.move_on_after(timeout):
                await run.done.wait()
            if not run.done.is_set():
                self._log(
                    logging.ERROR,
                    "shutdown_error",
                    spec.id,
                    f"reason=timeout: it did not stop within {timeout} s of cancellation "
                    "and was abandoned (does it swallow cancellation?)",
                )
            elif isinstance(run.reason, BaseException):
                self._log(
                    logging.ERROR,
                    "shutdown_error",
                    spec.id,
                    f"reason={describe(run.reason)} raised while shutting down",
                )
            else:
                self._log(logging.DEBUG, "child_terminated", spec.id, "reason=shutdown")

    async def _stop_child(self, child: Child) -> None:
        run, child.run = child.run, None
        child.status = "stopped"
        if run is None:
            return
        if run in own_runs(self):
            # Called from inside this incarnation's own task tree: waiting would wait for
            # ourselves. Cancel it now; it is waited for later (see _wait_detached).
            run.scope.cancel()
            child.detached = run
            self._log(logging.DEBUG, "child_terminated", child.spec.id, "reason=shutdown (itself)")
            return
        await self._stop_run(child.spec, run)

    async def _wait_detached(self, child: Child) -> None:
        """Wait (bounded by its shutdown) for an incarnation stopped from its own tree, unless
        the caller is still inside that tree (then the new one starts alongside its exit)."""
        run = child.detached
        if run is None or run in own_runs(self):
            return
        child.detached = None
        await self._stop_run(child.spec, run)

    async def _stop_all(self) -> None:
        """Stop every child, in reverse start order, one at a time."""
        with anyio.CancelScope(shield=True):
            for child in reversed(list(self._children)):
                await self._stop_child(child)
                await self._wait_detached(child)
