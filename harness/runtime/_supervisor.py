"""Supervisor: run children that must stay up, restarting them when they exit.

A crashed child is restarted by its ``restart`` type and the supervisor's ``strategy``;
children start in list order, each after the previous one signalled ready, and stop in
reverse order::

    import anyio
    from harness.runtime import ChildSpec, Supervisor

    async def ticker(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()              # ready: the next child may start
        while True:
            await anyio.sleep(1)

    async def main() -> None:
        async with Supervisor([ChildSpec("ticker", ticker)], strategy="one_for_one") as sup:
            print(sup.which_children())    # [ChildInfo(id='ticker', status='running', ...)]
            await sup.terminate_child("ticker")  # stopped; its spec stays
            await sup.restart_child("ticker")    # running again, restarts=1

    anyio.run(main)
"""

# One class over parts: a ChildTable (the children and their runs), a RestartPolicy (restart
# types, strategy, intensity) and a Lifecycle (entering, the exit manager, admin calls,
# escalation, leaving), the same parts DynamicSupervisor runs on.

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskStatus

from harness.errors import ArgumentError, ArgumentTypeError
from harness.runtime._child import (
    STRATEGIES,
    ChildInfo,
    ChildSpec,
    Restart,
    RestartStrategy,
    Shutdown,
    Status,
)
from harness.runtime._children import ChildTable
from harness.runtime._errors import ChildRunning, DuplicateChild
from harness.runtime._incarnation import SERVING, Child
from harness.runtime._lifecycle import Lifecycle, run_nested
from harness.runtime._restart_window import RestartWindow
from harness.runtime._restarts import RestartPolicy

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
    "check_intensity",
]


def check_intensity(max_restarts: int, max_seconds: float) -> None:
    """Refuse a restart intensity that cannot work, where the supervisor is built."""
    if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
        raise ArgumentError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
    if not isinstance(max_seconds, int | float) or not max_seconds > 0:
        raise ArgumentError(f"max_seconds must be > 0, got {max_seconds!r}")


class Supervisor:
    """A supervisor over a child list, used as an async context manager.

    Inside the ``async with`` it restarts exited children according to their restart type and
    the strategy. Exceeding the restart intensity stops everything and raises
    ``MaxRestartsExceeded`` out of the ``async with``.

    A Supervisor is also a valid child of another one: ``parent_children=[sup.child_spec("x")]``.
    Re-entering a Supervisor (e.g. when its parent restarts it) starts again from the initial
    child list; children added with ``start_child`` are not kept. Runs on anyio's asyncio
    backend. Entering and exiting in different tasks (as async pytest fixtures do) works, but
    then escalation cannot cancel the body: ``MaxRestartsExceeded`` is raised when the
    ``async with`` exits.
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
        check_intensity(max_restarts, max_seconds)
        self._specs = specs
        self._table = ChildTable()
        self._table.reset(specs)
        self._policy = RestartPolicy(strategy, max_restarts, float(max_seconds))
        self._life = Lifecycle(self._table, self._policy)

    def __repr__(self) -> str:
        return (
            f"<Supervisor {self._table.name!r} {self._policy.strategy} children="
            f"{[c.spec.id for c in self._table.children]} active={self._life.active}>"
        )

    # ------------------------------------------------------------------ introspection

    def which_children(self) -> list[ChildInfo]:
        """The children in start order, with their status and restart count.

        A child whose incarnation already ended, but whose exit the supervisor has not
        processed yet (it is busy, e.g. stopping a slow sibling), shows as ``"restarting"`` if
        it will be restarted and ``"stopped"`` if not, never as ``"running"``.
        """
        table = self._table
        return [ChildInfo(c.spec.id, table.status(c), c.restarts) for c in table.children]

    def count_children(self) -> dict[str, int]:
        """OTP's counts: ``specs``, ``active`` (running), ``supervisors``, ``workers``."""
        return count_children(self._table)

    # ------------------------------------------------------------------ admin calls

    async def start_child(self, spec: ChildSpec) -> None:
        """Add ``spec`` at the end of the child list and start it (waiting for readiness).

        Raises ``DuplicateChild`` if the id exists, ``FailedToStartChild`` if it fails to
        start (it is then not added).
        """
        if not isinstance(spec, ChildSpec):
            raise ArgumentTypeError(f"start_child expects a ChildSpec, got {spec!r}")
        async with self._life.admin("start_child"):
            existing = self._table.find(spec.id)
            if existing is not None:
                raise DuplicateChild(spec.id, existing.status)
            child = Child(spec)
            await self._life.start_or_raise(child)
            self._table.add(child)

    async def terminate_child(self, id: str) -> None:
        """Stop a child (bounded by its shutdown); its spec stays unless it is temporary.

        A child terminating itself (from its own task or any task it spawned) is not waited for
        here, since it would wait for its own exit: its cancellation lands at its next
        ``await``. It is waited for (bounded by its shutdown) before it is started again and
        when the supervisor stops.
        """
        async with self._life.admin("terminate_child"):
            child = self._table.get(id)
            await self._table.stop_child(child)
            if child.spec.restart == "temporary":
                self._table.remove(child)

    async def restart_child(self, id: str) -> None:
        """Start a stopped child again; a running one must be terminated first."""
        async with self._life.admin("restart_child"):
            child = self._stopped("restart", id)
            await self._life.start_or_raise(child, again=True)

    async def delete_child(self, id: str) -> None:
        """Forget a stopped child's spec; a running one must be terminated first."""
        async with self._life.admin("delete_child"):
            self._table.remove(self._stopped("delete", id))

    def _stopped(self, action: str, id: str) -> Child:
        """The child ``id``, which must be stopped for ``action``."""
        child = self._table.get(id)
        if child.status != "stopped":
            raise ChildRunning(id, child.status, action)
        return child

    # ------------------------------------------------------------------ nesting

    def child_spec(
        self, id: str, *, restart: Restart = "permanent", shutdown: Shutdown = None
    ) -> ChildSpec:
        """A spec that runs this supervisor as a child of another one.

        ``shutdown`` defaults to ``None`` (wait forever): stopping a nested supervisor is
        already bounded by its own children's shutdowns. If this supervisor reaches its
        restart intensity, the parent sees an abnormal exit.
        """
        self._table.name = id
        return ChildSpec(id, self.run, restart=restart, shutdown=shutdown)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled; the start function used by :meth:`child_spec`."""
        await run_nested(self, task_status)

    # ------------------------------------------------------------------ context manager

    async def __aenter__(self) -> Self:
        await self._life.enter(self, self._specs)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._life.leave(exc_type, exc, tb)


def count_children(table: ChildTable) -> dict[str, int]:
    """OTP's counts of a child table: ``specs``, ``active``, ``supervisors``, ``workers``."""
    children = table.children
    supervisors = sum(1 for c in children if is_supervisor(c.spec))
    return {
        "specs": len(children),
        "active": sum(1 for c in children if table.status(c) == "running"),
        "supervisors": supervisors,
        "workers": len(children) - supervisors,
    }


def is_supervisor(spec: ChildSpec) -> bool:
    """Whether the spec runs a supervisor (of either kind) rather than a worker."""
    return hasattr(getattr(spec.start, "__self__", None), "which_children")
