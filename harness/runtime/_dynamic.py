"""DynamicSupervisor: children started and stopped while it runs, one per session, say.

Children come and go (``start_child`` returns a ``ChildRef`` once the child is ready); a
crashed child is restarted alone by its restart type; ``max_children`` bounds how many there
are at once::

    import anyio
    from harness.runtime import Actor, DynamicSupervisor, MaxChildrenReached

    class Session(Actor):
        async def handle_call(self, msg):
            return msg * 2

    async def main() -> None:
        async with DynamicSupervisor(max_children=2) as sessions:
            first, second = Session(), Session()
            ref = await sessions.start_child(first.child_spec(id="s1"))
            await sessions.start_child(second.child_spec(id="s2"))
            print(await first.call(21))             # 42
            try:
                await sessions.start_child(Session().child_spec(id="s3"))
            except MaxChildrenReached:
                print("full")                       # nothing was started
            await sessions.terminate_child(ref)     # stopped; its slot is free again
            print(sessions.count_children()["active"])  # 1

    anyio.run(main)

On leaving the ``async with``, the children stop concurrently, each bounded by its
``shutdown``. The restart intensity (``max_restarts`` in ``max_seconds``) works as a
``Supervisor``'s: exceeding it stops everything and raises ``MaxRestartsExceeded``.
"""

# The same parts as Supervisor (ChildTable, RestartPolicy with one_for_one, Lifecycle), with
# concurrent stopping; a child's identity is its ChildRef, not its id, which may repeat.

from __future__ import annotations

import logging
from types import TracebackType
from typing import Self

import anyio
from anyio.abc import TaskStatus

from harness.errors import ArgumentError, ArgumentTypeError
from harness.runtime._child import ChildInfo, ChildSpec, Restart, Shutdown, Status
from harness.runtime._children import ChildTable
from harness.runtime._errors import MaxChildrenReached, UnknownChild
from harness.runtime._incarnation import Child
from harness.runtime._lifecycle import Lifecycle, run_nested
from harness.runtime._restarts import RestartPolicy
from harness.runtime._supervisor import check_intensity, count_children

__all__ = ["ChildRef", "DynamicSupervisor"]


class ChildRef:
    """One child of a DynamicSupervisor, as ``start_child`` returns it."""

    __slots__ = ("_child", "_table")

    def __init__(self, child: Child, table: ChildTable) -> None:
        self._child = child
        self._table = table

    def __repr__(self) -> str:
        return f"<ChildRef {self.id!r} {self.status}>"

    @property
    def id(self) -> str:
        return self._child.spec.id

    @property
    def status(self) -> Status:
        """``running``, ``restarting``, or ``stopped`` (also once it left the supervisor)."""
        if self._child not in self._table:
            return "stopped"
        return self._table.status(self._child)

    @property
    def restarts(self) -> int:
        return self._child.restarts


class DynamicSupervisor:
    """A supervisor whose children are started on demand; an async context manager."""

    def __init__(
        self,
        *,
        max_children: int | None = None,
        max_restarts: int = 3,
        max_seconds: float = 5.0,
    ) -> None:
        if max_children is not None and (
            isinstance(max_children, bool) or not isinstance(max_children, int) or max_children < 0
        ):
            raise ArgumentError(f"max_children must be an int >= 0 or None, got {max_children!r}")
        check_intensity(max_restarts, max_seconds)
        self.max_children = max_children
        self._table = ChildTable("dynamic_supervisor")
        self._policy = RestartPolicy("one_for_one", max_restarts, float(max_seconds))
        self._life = Lifecycle(self._table, self._policy, concurrent_stop=True)

    def __repr__(self) -> str:
        return (
            f"<DynamicSupervisor {self._table.name!r} children={len(self._table)} "
            f"max_children={self.max_children} active={self._life.active}>"
        )

    # ------------------------------------------------------------------ introspection

    def which_children(self) -> list[ChildInfo]:
        """The children in start order, with their status and restart count."""
        table = self._table
        return [ChildInfo(c.spec.id, table.status(c), c.restarts) for c in table.children]

    def count_children(self) -> dict[str, int]:
        """``specs``, ``active`` (running), ``supervisors``, ``workers``."""
        return count_children(self._table)

    # ------------------------------------------------------------------ admin calls

    async def start_child(self, spec: ChildSpec) -> ChildRef:
        """Start a child and return once it is ready (an actor: ``init`` returned).

        ``MaxChildrenReached`` when ``max_children`` children (running or restarting) exist;
        ``FailedToStartChild`` if it fails to start. Either way nothing of it keeps running.
        """
        if not isinstance(spec, ChildSpec):
            raise ArgumentTypeError(f"start_child expects a ChildSpec, got {spec!r}")
        async with self._life.admin("start_child"):
            limit = self.max_children
            if limit is not None and len(self._table) >= limit:
                self._table.log(logging.WARNING, "max_children_reached", spec.id, f"max={limit}")
                raise MaxChildrenReached(self._table.name, limit)
            child = Child(spec)
            await self._life.start_or_raise(child)
            self._table.add(child)
            return ChildRef(child, self._table)

    async def terminate_child(self, ref: ChildRef) -> None:
        """Stop the child (bounded by its shutdown) and free its slot."""
        if not isinstance(ref, ChildRef):
            raise ArgumentTypeError(f"terminate_child expects a ChildRef, got {ref!r}")
        async with self._life.admin("terminate_child"):
            child = ref._child
            if child not in self._table:
                raise UnknownChild(ref.id, [c.spec.id for c in self._table.children])
            await self._table.stop_child(child)
            self._table.remove(child)

    # ------------------------------------------------------------------ nesting

    def child_spec(
        self, id: str, *, restart: Restart = "permanent", shutdown: Shutdown = None
    ) -> ChildSpec:
        """A spec that runs this supervisor as a child of another one (see Supervisor's)."""
        self._table.name = id
        return ChildSpec(id, self.run, restart=restart, shutdown=shutdown)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run until cancelled; the start function used by :meth:`child_spec`."""
        await run_nested(self, task_status)

    # ------------------------------------------------------------------ context manager

    async def __aenter__(self) -> Self:
        await self._life.enter(self, ())
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._life.leave(exc_type, exc, tb)
