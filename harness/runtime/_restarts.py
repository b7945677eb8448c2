"""A supervisor's restart policy: restart types, the strategy and the restart intensity.

When a child exits, its restart type decides whether it comes back, the strategy which siblings
come back with it, and the intensity (at most ``max_restarts`` in any ``max_seconds``) when to
give up. Both supervisors hand their exits to one of these.
"""

# ``permanent`` always restarts, ``transient`` only after an abnormal exit, ``temporary`` never
# (its spec is dropped). ``one_for_one`` restarts the child alone, ``one_for_all`` every child,
# ``rest_for_one`` the child and those started after it; siblings stop in reverse order and
# start again in order. A refused restart is returned as the error to give up with: the caller
# cancels the body of the ``async with`` first, then stops the children (stopping first would
# fail a body awaiting a child, e.g. an ``Actor.call``, with that child's exit, masking it).

from __future__ import annotations

import logging

import anyio

from harness.errors import describe_reason
from harness.runtime._child import RestartStrategy
from harness.runtime._children import ChildTable
from harness.runtime._errors import MaxRestartsExceeded
from harness.runtime._incarnation import (
    FATAL,
    Child,
    Exit,
    Reason,
    Run,
    public_reason,
    will_restart,
)
from harness.runtime._restart_window import RestartWindow

__all__ = ["RestartPolicy"]


class RestartPolicy:
    """What a supervisor does with an exit: restart whom, or give up."""

    def __init__(self, strategy: RestartStrategy, max_restarts: int, max_seconds: float) -> None:
        self.strategy: RestartStrategy = strategy
        self.max_restarts = max_restarts
        self.max_seconds = max_seconds
        self.window = RestartWindow(max_restarts, max_seconds)

    async def handle_exit(self, table: ChildTable, run: Run) -> MaxRestartsExceeded | None:
        """React to one ended run; the error to give up with if the intensity is exceeded."""
        child = run.child
        if child.detached is run:  # stopped from its own tree: done now
            child.detached = None
            table.log_ended(child.spec, run)
            return None
        if child.run is not run:
            return None  # stale: the supervisor stopped or replaced this incarnation itself
        child.run = None
        reason = run.reason
        restart = will_restart(child.spec, reason)
        # Truthful at once, while siblings are being stopped for the strategy.
        child.status = "restarting" if restart else "stopped"
        table.log(
            logging.INFO if reason is Exit.NORMAL else logging.ERROR,
            "child_terminated",
            child.spec.id,
            f"reason={describe_reason(reason)}",
        )
        if not restart:
            if child.spec.restart == "temporary":
                table.remove(child)
            return None
        return await self._restart(table, child, reason)

    def group(self, table: ChildTable, child: Child) -> list[Child]:
        """The children that restart together with ``child``, in start order."""
        if self.strategy == "one_for_one":
            return [child]
        if self.strategy == "one_for_all":
            return list(table.children)
        return table.children[table.children.index(child) :]

    async def _restart(
        self, table: ChildTable, child: Child, reason: Reason
    ) -> MaxRestartsExceeded | None:
        target = child
        while True:
            group = self.group(table, target)
            # Siblings stop in reverse order, one at a time; temporary siblings are dropped
            # (they are never restarted); every other member is started again in order.
            for member in reversed(group):
                if member is not target and member.run is not None:
                    await table.stop_child(member)
                if member.spec.restart == "temporary" and member is not target:
                    table.remove(member)
                else:
                    member.status = "restarting"
            if not self.window.add(anyio.current_time()):
                return self._escalation(table, target, reason)
            failed = await self._start_group(table, [m for m in group if m in table])
            if failed is None:
                return None
            target, reason = failed
            await anyio.lowlevel.checkpoint()

    @staticmethod
    async def _start_group(
        table: ChildTable, group: list[Child]
    ) -> tuple[Child, BaseException] | None:
        for member in group:
            if table.closing:  # stopping began meanwhile: restart nothing more
                return None
            if member.run is not None:
                continue
            cause = await table.start(member, again=True)
            if cause is None:
                continue
            if isinstance(cause, FATAL):
                member.status = "stopped"  # it left through the event loop; no restart
                continue
            member.status = "restarting"
            return member, cause
        return None

    def _escalation(self, table: ChildTable, child: Child, reason: Reason) -> MaxRestartsExceeded:
        table.log(
            logging.ERROR,
            "reached_max_restart_intensity",
            child.spec.id,
            f"max_restarts={self.max_restarts} max_seconds={self.max_seconds} "
            f"reason={describe_reason(reason)}",
        )
        return MaxRestartsExceeded(
            table.name,
            max_restarts=self.max_restarts,
            max_seconds=self.max_seconds,
            child_id=child.spec.id,
            reason=public_reason(reason),
        )
