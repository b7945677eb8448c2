"""The running life of a supervisor: entering, the exit manager, admin calls, giving up, leaving.

Both supervisors run one of these over their child table and restart policy; what differs
between them (a fixed child list stopped in reverse order, or dynamic children stopped
concurrently) is data passed in, not a subclass.
"""

# Exits reach one manager task through the table's memory stream; it handles them one at a
# time under a lock shared with the admin calls and the initial start, as the single supervisor
# process of OTP does with its mailbox. A child that has not signalled ready yet cannot get that
# lock (its supervisor holds it while waiting for that very readiness), so such a call fails at
# once with ``AdminCallBeforeReady`` instead of deadlocking. Each admin call runs in its own
# cancel scope, cancelled when the supervisor stops, so stopping never waits behind an admin
# call blocked on a child that will not become ready. Exits that happened before a call are
# handled first, so a crash is not erased by the call.
# Escalation cancels a cancel scope entered around the body of the ``async with`` before it
# stops the children; ``leave`` recognises its own cancellation and raises the bare error.
# ``KeyboardInterrupt`` and ``SystemExit`` in a child are not exit reasons to restart: they
# leave the child's task as they leave any asyncio task (the event loop re-raises them).

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, NoReturn

import anyio
from anyio.abc import TaskStatus

from harness.errors import StateError
from harness.runtime._child import ChildSpec
from harness.runtime._children import ChildTable
from harness.runtime._errors import AdminCallBeforeReady, FailedToStartChild, SupervisorNotRunning
from harness.runtime._incarnation import FATAL, Child, Run
from harness.runtime._restarts import RestartPolicy

__all__ = ["Lifecycle", "run_nested"]

logger = logging.getLogger("harness.runtime._supervisor")


class Lifecycle:
    """Enter, serve exits and admin calls, give up or leave: one supervisor's running state."""

    def __init__(
        self, table: ChildTable, policy: RestartPolicy, *, concurrent_stop: bool = False
    ) -> None:
        self.table = table
        self.policy = policy
        self.concurrent_stop = concurrent_stop
        self.active = False
        self.escalation: BaseException | None = None
        self._lock: anyio.Lock | None = None
        self._pending: Run | None = None  # received by the manager, waiting for the lock
        self._manager_scope: anyio.CancelScope | None = None
        self._manager_done: anyio.Event | None = None
        # Entered around the body of the `async with`: escalation cancels it.
        self._host_scope: anyio.CancelScope | None = None
        self._host_task: asyncio.Task[Any] | None = None
        self._admin_scopes: set[anyio.CancelScope] = set()

    @property
    def closing(self) -> bool:
        return self.table.closing

    # ------------------------------------------------------------------ entering

    async def enter(self, owner: object, specs: tuple[ChildSpec, ...]) -> None:
        """Start ``specs`` in order, then the manager; entered around the caller's body."""
        if self.active:
            raise StateError(f"{owner!r} is already running; it can be entered once at a time")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise StateError(
                "harness.runtime runs on anyio's asyncio backend; no asyncio loop is running"
            ) from None
        self.table.open(specs)
        self.policy.window.clear()
        self.escalation = None
        self._lock = anyio.Lock()
        self.active = True
        await self._start_initial_children()
        self._manager_scope = anyio.CancelScope()
        self._manager_done = anyio.Event()
        self.table.spawn(self._manage(), "manager")
        self._host_scope = anyio.CancelScope()
        self._host_scope.__enter__()
        self._host_task = asyncio.current_task()

    async def _start_initial_children(self) -> None:
        """Start the child list in order; on any failure stop those started, and re-raise."""
        # Under the lock: an admin call from a child that is already ready waits until the
        # whole initial list is up (it cannot reorder or double-start it).
        lock = self._lock
        assert lock is not None
        lock.acquire_nowait()  # a brand-new lock: never contended
        try:
            for child in self.table.children:
                await self.start_or_raise(child)
        except BaseException:
            self.table.closing = True
            self._cancel_admin_calls()
            with anyio.CancelScope(shield=True):
                await self.table.stop_all(concurrently=self.concurrent_stop)
            self.table.close_streams()
            self.active = False
            raise
        finally:
            lock.release()

    async def start_or_raise(self, child: Child, *, again: bool = False) -> None:
        """Start ``child``; ``FailedToStartChild`` if it fails (KeyboardInterrupt and
        SystemExit propagate as they are)."""
        cause = await self.table.start(child, again=again)
        if cause is not None:
            _raise_start_failure(child.spec.id, cause)

    # ------------------------------------------------------------------ exits

    async def _manage(self) -> None:
        """React to exits, one at a time, under the lock shared with the admin calls."""
        assert self._manager_scope is not None and self._manager_done is not None
        assert self.table.exits_recv is not None and self._lock is not None
        try:
            with self._manager_scope:
                async for run in self.table.exits_recv:
                    self._pending = run
                    async with self._lock:
                        if self.closing:
                            return
                        if self._pending is run:
                            self._pending = None
                            await self._handle(run)
        except Exception as exc:  # a bug in the supervisor itself: fail loudly, stop cleanly
            logger.exception("supervisor %s: internal error", self.table.name)
            await self.give_up(exc)
        finally:
            self._manager_done.set()

    async def _handle(self, run: Run) -> None:
        error = await self.policy.handle_exit(self.table, run)
        if error is not None:
            await self.give_up(error)

    async def settle_exits(self) -> None:
        """Handle the exits that happened but wait in the queue (called under the lock)."""
        receive = self.table.exits_recv
        while not self.closing:
            run, self._pending = self._pending, None
            if run is None:
                if receive is None:
                    return
                try:
                    run = receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream, anyio.ClosedResourceError):
                    return
            await self._handle(run)

    async def give_up(self, error: BaseException) -> None:
        """Stop for good with ``error``, which then leaves the ``async with``."""
        self.table.closing = True
        self.escalation = error
        # Cancel the body FIRST: stopping the children first would fail a body awaiting one
        # of them (e.g. an Actor.call gets ActorExited), and that error would mask this one.
        if self._host_scope is not None:
            self._host_scope.cancel()
        await self.table.stop_all(concurrently=self.concurrent_stop)

    # ------------------------------------------------------------------ admin calls

    @contextlib.asynccontextmanager
    async def admin(self, action: str) -> AsyncIterator[None]:
        """Serialise an admin call with the manager, in a scope cancelled on stopping.

        Cancelled that way, the call has cleaned up what it started (a half-started child is
        stopped) and raises ``SupervisorNotRunning``: the supervisor is stopping.
        """
        lock = self._lock
        if not self.active or self.closing or lock is None:
            raise SupervisorNotRunning(action)
        own = self.table.own_runs()
        for run in own:
            if not run.ready:  # we hold the lock until that very readiness: it would deadlock
                raise AdminCallBeforeReady(action, run.child_id)
        scope = anyio.CancelScope()
        self._admin_scopes.add(scope)
        try:
            with scope:
                async with lock:
                    # Not from inside a child's own tree: a restart there could stop the
                    # caller itself (its exits stay with the manager).
                    if not own:
                        await self.settle_exits()
                    if not self.active or self.closing:
                        raise SupervisorNotRunning(action)
                    yield
        finally:
            self._admin_scopes.discard(scope)
        if scope.cancelled_caught:
            raise SupervisorNotRunning(action)

    def _cancel_admin_calls(self) -> None:
        for scope in self._admin_scopes:
            scope.cancel()

    # ------------------------------------------------------------------ leaving

    async def leave(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop everything (shielded, bounded) and raise the escalation, if there was one."""
        try:
            with anyio.CancelScope(shield=True):
                await self._shutdown()
        finally:
            self.active = False
            host_scope, self._host_scope = self._host_scope, None
            assert host_scope is not None
            if asyncio.current_task() is self._host_task:
                swallowed = host_scope.__exit__(exc_type, exc, tb)
            else:
                # Entered in another task (e.g. an async pytest fixture's setup, torn down
                # in a new task): that scope stays with its own, finished, task.
                swallowed = False
        escalation = self.escalation
        if escalation is not None and (exc is None or swallowed or isinstance(exc, Exception)):
            _raise_escalation(escalation, exc)

    async def _shutdown(self) -> None:
        self.table.closing = True
        # Admin calls in flight first: one blocked on a child that never becomes ready
        # would otherwise hold the lock, and stopping, forever.
        self._cancel_admin_calls()
        if self._manager_scope is not None and self._manager_done is not None:
            self._manager_scope.cancel()
            await self._manager_done.wait()
        assert self._lock is not None
        async with self._lock:
            await self.table.stop_all(concurrently=self.concurrent_stop)
        self.table.close_streams()


async def run_nested(
    supervisor: contextlib.AbstractAsyncContextManager[object], task_status: TaskStatus[None]
) -> None:
    """Run a supervisor as another one's child: enter it, signal ready, run until stopped."""
    async with supervisor:
        task_status.started()
        await anyio.sleep_forever()


def _raise_escalation(escalation: BaseException, exc: BaseException | None) -> NoReturn:
    """Raise the escalation unwrapped, with the body's error (if any) as its context.

    Called for our own cancellation of the body, a body that had already finished, or one that
    failed meanwhile (e.g. on the stopped children); a foreign cancellation or
    KeyboardInterrupt propagates as it is instead.
    """
    reason = getattr(escalation, "reason", None)
    if isinstance(exc, Exception):
        escalation.__context__ = exc
    if isinstance(reason, BaseException):
        raise escalation from reason
    if isinstance(exc, Exception):
        raise escalation
    raise escalation from None


def _raise_start_failure(id: str, cause: BaseException) -> NoReturn:
    """``FailedToStartChild``, except for KeyboardInterrupt/SystemExit, which propagate."""
    if isinstance(cause, FATAL):
        raise cause
    raise FailedToStartChild(id, cause) from cause
