"""Reacting to exits: the restart types, the restart strategies and escalation.

When a child exits, its restart type decides whether it comes back, the supervisor's strategy
which siblings come back with it, and the restart intensity when to give up::

    import anyio
    from harness.runtime import ChildSpec, MaxRestartsExceeded, Supervisor

    async def crasher(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        raise RuntimeError("boom")  # an abnormal exit: a permanent child is restarted

    async def main() -> None:
        try:
            async with Supervisor([ChildSpec("crasher", crasher)], max_restarts=2):
                await anyio.sleep_forever()
        except MaxRestartsExceeded as exc:
            print(exc.child_id, repr(exc.reason))  # crasher RuntimeError('boom')

    anyio.run(main)

Design notes:

- ``permanent`` always restarts, ``transient`` only after an abnormal exit, ``temporary``
  never (its spec is dropped). ``one_for_one`` restarts the child alone, ``one_for_all`` every
  child, ``rest_for_one`` the child and those started after it; siblings stop in reverse order
  and start again in order.
- Exits reach one manager task through a memory stream; it handles them one at a time under
  the lock shared with the admin calls.
- Escalation (``MaxRestartsExceeded``) first cancels a cancel scope entered around the body of
  the ``async with``, THEN stops the children: stopping first would fail a body awaiting a
  child (e.g. an ``Actor.call``) with that child's exit, masking the escalation.
"""

from __future__ import annotations

import logging

import anyio

from harness.runtime.child import ChildSpec, RestartStrategy
from harness.runtime.children import Children, logger
from harness.runtime.errors import MaxRestartsExceeded
from harness.runtime.incarnation import (
    FATAL,
    Child,
    Exit,
    Reason,
    Run,
    describe_reason,
    public_reason,
    will_restart,
)
from harness.runtime.restart_window import RestartWindow

__all__ = ["Restarts"]


class Restarts(Children):
    """A child list that restarts its exited children by restart type and strategy."""

    def __init__(
        self,
        specs: tuple[ChildSpec, ...],
        *,
        strategy: RestartStrategy,
        max_restarts: int,
        max_seconds: float,
    ) -> None:
        super().__init__(specs)
        self._strategy: RestartStrategy = strategy
        self._max_restarts = max_restarts
        self._max_seconds = max_seconds
        self._history = RestartWindow(max_restarts, max_seconds)
        self._escalation: BaseException | None = None
        # Entered around the body of the `async with`: escalation cancels it.
        self._host_scope: anyio.CancelScope | None = None
        self._manager_scope: anyio.CancelScope | None = None
        self._manager_done: anyio.Event | None = None

    async def _manage(self) -> None:
        """React to exits, one at a time, under the lock shared with the admin calls."""
        assert self._manager_scope is not None and self._manager_done is not None
        assert self._exits_recv is not None and self._lock is not None
        try:
            with self._manager_scope:
                async for run in self._exits_recv:
                    async with self._lock:
                        if self._closing:
                            return
                        await self._handle_exit(run)
        except Exception as exc:  # a bug in the supervisor itself: fail loudly, stop cleanly
            logger.exception("supervisor %s: internal error", self._name)
            await self._give_up(exc)
        finally:
            self._manager_done.set()

    async def _handle_exit(self, run: Run) -> None:
        child = self._find(run.child_id)
        if child is not None and child.detached is run:  # stopped from its own tree: done now
            child.detached = None
            self._log_ended(child.spec, run)
            return
        if child is None or child.run is not run:
            return  # stale: the supervisor stopped or replaced this incarnation itself
        child.run = None
        reason = run.reason
        restart = will_restart(child.spec, reason)
        # Truthful at once, while siblings are being stopped for the strategy.
        child.status = "restarting" if restart else "stopped"
        self._log(
            logging.INFO if reason is Exit.NORMAL else logging.ERROR,
            "child_terminated",
            child.spec.id,
            f"reason={describe_reason(reason)}",
        )
        if not restart:
            if child.spec.restart == "temporary":
                self._children.remove(child)
            return
        await self._restart(child, reason)

    def _restart_group(self, child: Child) -> list[Child]:
        if self._strategy == "one_for_one":
            return [child]
        if self._strategy == "one_for_all":
            return list(self._children)
        return self._children[self._children.index(child) :]

    async def _restart(self, child: Child, reason: Reason) -> None:
        target = child
        while True:
            group = self._restart_group(target)
            # Siblings stop in reverse order, one at a time; temporary siblings are dropped
            # (OTP never restarts them); every other member will be started again in order.
            for member in reversed(group):
                if member is not target and member.run is not None:
                    await self._stop_child(member)
                if member.spec.restart == "temporary" and member is not target:
                    self._children.remove(member)
                else:
                    member.status = "restarting"
            if not self._history.add(anyio.current_time()):
                await self._escalate(target, reason)
                return
            failed = await self._start_group([m for m in group if m in self._children])
            if failed is None:
                return
            target, reason = failed
            await anyio.lowlevel.checkpoint()

    async def _start_group(self, group: list[Child]) -> tuple[Child, BaseException] | None:
        for member in group:
            if self._closing:  # stopping began meanwhile: restart nothing more
                return None
            if member.run is not None:
                continue
            cause = await self._start(member, again=True)
            if cause is None:
                continue
            if isinstance(cause, FATAL):
                member.status = "stopped"  # it left through the event loop; no restart
                continue
            member.status = "restarting"
            return member, cause
        return None

    async def _escalate(self, child: Child, reason: Reason) -> None:
        self._log(
            logging.ERROR,
            "reached_max_restart_intensity",
            child.spec.id,
            f"max_restarts={self._max_restarts} max_seconds={self._max_seconds} "
            f"reason={describe_reason(reason)}",
        )
        await self._give_up(
            MaxRestartsExceeded(
                self._name,
                max_restarts=self._max_restarts,
                max_seconds=self._max_seconds,
                child_id=child.spec.id,
                reason=public_reason(reason),
            )
        )

    async def _give_up(self, error: BaseException) -> None:
        """Stop for good with ``error``, which then leaves the ``async with``."""
        self._closing = True
        self._escalation = error
        # Cancel the body FIRST: stopping the children first would fail a body awaiting one
        # of them (e.g. an Actor.call gets ActorExited), and that error would mask this one.
        if self._host_scope is not None:
            self._host_scope.cancel()
        await self._stop_all()
