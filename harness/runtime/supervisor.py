"""Supervisor: OTP supervision rebuilt on anyio (asyncio backend).

Run tasks that must stay up; a crashed child is restarted by its ``restart`` type and the
supervisor's ``strategy`` (a ``RestartStrategy``)::

    import anyio
    from harness.runtime import ChildSpec, Supervisor

    async def ticker(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()              # ready: the next child may start
        while True:
            await anyio.sleep(1)

    async def main() -> None:
        async with Supervisor([ChildSpec("ticker", ticker)], strategy="one_for_one") as sup:
            print(sup.which_children())    # [ChildInfo(id='ticker', status='running', ...)]

    anyio.run(main)

The parts, one module each: ``child`` (``ChildSpec``, ``ChildInfo``), ``incarnation`` (one run
of a child and its exit reason), ``children`` (starting and stopping them), ``restarts``
(restart types, strategies, escalation), ``restart_window`` (the restart intensity),
``admin`` (``start_child`` and the other admin calls) and this module, which puts them behind
the ``async with``. Every public name stays importable from here and from
``harness.runtime``.

Design notes (the WHY behind the shape):

- The supervisor owns its children's whole life cycle (see ``children``): each runs in its own
  unstructured task, so no child's error ever reaches the host as an ``ExceptionGroup``.
- Escalation cancels a cancel scope entered around the body of the ``async with`` before it
  stops the children (see ``restarts``); ``__aexit__`` recognises its own cancellation and
  raises the bare error.
- ``KeyboardInterrupt`` and ``SystemExit`` in a child are not exit reasons to restart: they
  leave the child's task as they leave any asyncio task (the event loop re-raises them).
- All stopping happens inside shielded scopes, each child bounded by its ``shutdown``, so a
  cancelled host still stops its children in reverse order, and the host's cancellation then
  propagates (nothing is restarted once stopping began).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable
from types import TracebackType
from typing import Any, Self

import anyio
from anyio.abc import TaskStatus

from harness.errors import ArgumentError, ArgumentTypeError, StateError
from harness.runtime.admin import AdminCalls
from harness.runtime.child import (
    STRATEGIES,
    ChildInfo,
    ChildSpec,
    Restart,
    RestartStrategy,
    Shutdown,
    Status,
)
from harness.runtime.errors import DuplicateChild
from harness.runtime.incarnation import LINEAGE, SERVING, Child, Run
from harness.runtime.restart_window import RestartWindow

__all__ = [
    "SERVING",
    "ChildInfo",
    "ChildSpec",
    "Restart",
    "RestartStrategy",
    "RestartWindow",
    "Shutdown",
    "Status",
    "Supervisor",
]


class Supervisor(AdminCalls):
    """An OTP-style supervisor, used as an async context manager.

    Children start in list order, each after the previous one signalled ready, and stop in
    reverse order. Inside the ``async with`` the supervisor restarts exited children according
    to their restart type and the strategy. Exceeding the restart intensity stops everything
    and raises ``MaxRestartsExceeded`` out of the ``async with``.

    A Supervisor is also a valid child of another one: ``parent_children=[sup.child_spec("x")]``.
    Re-entering a Supervisor (e.g. when its parent restarts it) starts again from the initial
    child list, as OTP does; children added with ``start_child`` are not kept.
    Runs on anyio's asyncio backend. Entering and exiting in different tasks (as async pytest
    fixtures do) works, but then escalation cannot cancel the body: ``MaxRestartsExceeded``
    is raised when the ``async with`` exits.
    """

    def __init__(
        self,
        children: Iterable[ChildSpec] = (),
        *,
        strategy: RestartStrategy = "one_for_one",
        max_restarts: int = 3,
        max_seconds: float = 5.0,
    ) -> None:
        specs = tuple(children)
        seen: set[str] = set()
        for spec in specs:
            if not isinstance(spec, ChildSpec):
                raise ArgumentTypeError(f"children must be ChildSpec instances, got {spec!r}")
            if spec.id in seen:
                raise DuplicateChild(spec.id, "stopped", in_child_list=True)
            seen.add(spec.id)
        if strategy not in STRATEGIES:
            raise ArgumentError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
        if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
            raise ArgumentError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
        if not isinstance(max_seconds, int | float) or not max_seconds > 0:
            raise ArgumentError(f"max_seconds must be > 0, got {max_seconds!r}")
        super().__init__(
            specs, strategy=strategy, max_restarts=max_restarts, max_seconds=float(max_seconds)
        )
        self._host_task: asyncio.Task[Any] | None = None

    def __repr__(self) -> str:
        return (
            f"<Supervisor {self._name!r} {self._strategy} children="
            f"{[c.spec.id for c in self._children]} active={self._active}>"
        )

    # ------------------------------------------------------------------ introspection

    def which_children(self) -> list[ChildInfo]:
        """The children in start order, with their status and restart count.

        A child whose incarnation already ended, but whose exit the supervisor has not
        processed yet (it is busy, e.g. stopping a slow sibling), shows as ``"restarting"`` if
        it will be restarted and ``"stopped"`` if not, never as ``"running"``.
        """
        return [ChildInfo(c.spec.id, self._status(c), c.restarts) for c in self._children]

    def count_children(self) -> dict[str, int]:
        """OTP's counts: ``specs``, ``active`` (running), ``supervisors``, ``workers``."""
        supervisors = sum(1 for c in self._children if _is_supervisor(c.spec))
        return {
            "specs": len(self._children),
            "active": sum(1 for c in self._children if self._status(c) == "running"),
            "supervisors": supervisors,
            "workers": len(self._children) - supervisors,
        }

    # ------------------------------------------------------------------ nesting

    def child_spec(
        self, id: str, *, restart: Restart = "permanent", shutdown: Shutdown = None
    ) -> ChildSpec:
        """A spec that runs this supervisor as a child of another one.

        ``shutdown`` defaults to ``None`` (as OTP's ``infinity`` for supervisors): stopping a
        nested supervisor is already bounded by its own children's shutdowns. If this
        supervisor reaches its restart intensity, the parent sees an abnormal exit.
        """
        self._name = id
        return ChildSpec(id, self.run, restart=restart, shutdown=shutdown)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled; the start function used by :meth:`child_spec`."""
        async with self:
            task_status.started()
            await anyio.sleep_forever()

    # ------------------------------------------------------------------ context manager

    async def __aenter__(self) -> Self:
        if self._active:
            raise StateError(f"{self!r} is already running; it can be entered once at a time")
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise StateError(
                "harness.runtime runs on anyio's asyncio backend; no asyncio loop is running"
            ) from None
        self._children = [Child(spec) for spec in self._specs]
        self._history.clear()
        self._closing = False
        self._escalation = None
        self._lock = anyio.Lock()
        self._exits_send, self._exits_recv = anyio.create_memory_object_stream[Run](math.inf)
        self._active = True
        self._lineage = LINEAGE.get()
        await self._start_initial_children()
        self._manager_scope = anyio.CancelScope()
        self._manager_done = anyio.Event()
        self._spawn(self._manage(), "manager")
        # Entered last, exited in __aexit__: escalation cancels the body of the `async with`.
        self._host_scope = anyio.CancelScope()
        self._host_scope.__enter__()
        self._host_task = asyncio.current_task()
        return self

    async def _start_initial_children(self) -> None:
        """Start the child list in order; on any failure stop those started, and re-raise."""
        # Start under the lock: an admin call from a child that is already ready waits until
        # the whole initial list is up (it cannot reorder or double-start it).
        lock = self._lock
        assert lock is not None
        lock.acquire_nowait()  # a brand-new lock: never contended
        try:
            for child in list(self._children):
                await self._start_or_raise(child)
        except BaseException:
            self._closing = True
            self._cancel_admin_calls()
            with anyio.CancelScope(shield=True):
                await self._stop_all()
            self._close_streams()
            self._active = False
            raise
        finally:
            lock.release()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            with anyio.CancelScope(shield=True):
                await self._shutdown()
        finally:
            self._active = False
            host_scope, self._host_scope = self._host_scope, None
            assert host_scope is not None
            if asyncio.current_task() is self._host_task:
                swallowed = host_scope.__exit__(exc_type, exc, tb)
            else:
                # Entered in another task (e.g. an async pytest fixture's setup, torn down
                # in a new task): that scope stays with its own, finished, task.
                swallowed = False
        escalation = self._escalation
        if escalation is not None and (exc is None or swallowed or isinstance(exc, Exception)):
            # Our own cancellation of the body (or a body that had already finished, or one
            # that failed meanwhile, e.g. on the stopped children): the escalation is what
            # leaves the `async with`, unwrapped, with the body's error as its __context__.
            # (Only an escalation cancels the host scope, so a swallowed cancellation always
            # ends up here.) A foreign cancellation or KeyboardInterrupt propagates as is.
            reason = getattr(escalation, "reason", None)
            if isinstance(exc, Exception):
                escalation.__context__ = exc
            if isinstance(reason, BaseException):
                raise escalation from reason
            if isinstance(exc, Exception):
                raise escalation
            raise escalation from None

    async def _shutdown(self) -> None:
        self._closing = True
        # Admin calls in flight first: one blocked on a child that never becomes ready
        # would otherwise hold the lock, and stopping, forever.
        self._cancel_admin_calls()
        if self._manager_scope is not None and self._manager_done is not None:
            self._manager_scope.cancel()
            await self._manager_done.wait()
        assert self._lock is not None
        async with self._lock:
            await self._stop_all()
        self._close_streams()


def _is_supervisor(spec: ChildSpec) -> bool:
    return isinstance(getattr(spec.start, "__self__", None), Supervisor)
