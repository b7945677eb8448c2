"""The admin calls of a running supervisor: start, terminate, restart and delete a child.

OTP's ``start_child``/``terminate_child``/``restart_child``/``delete_child``, as async methods
of ``Supervisor``, callable from the body of the ``async with`` or from any child::

    import anyio
    from harness.runtime import ChildSpec, Supervisor

    async def job(task_status=anyio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        await anyio.sleep_forever()

    async def main() -> None:
        async with Supervisor() as sup:
            await sup.start_child(ChildSpec("job", job))
            await sup.terminate_child("job")  # stopped; its spec stays
            await sup.restart_child("job")    # running again, restarts=1
            await sup.terminate_child("job")
            await sup.delete_child("job")     # forgotten

    anyio.run(main)

Design notes:

- Admin calls and the initial start hold the same lock as the manager. A child that has not
  signalled ready yet cannot get that lock (its supervisor holds it while waiting for that very
  readiness), so such a call fails at once with ``AdminCallBeforeReady`` instead of
  deadlocking.
- Each admin call runs in its own cancel scope, cancelled when the supervisor stops, so
  stopping never waits behind an admin call blocked on a child that will not become ready.
- Exits that happened before a call are handled first, as OTP's supervisor handles its mailbox
  in order, so a crash is not erased by the call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import NoReturn

import anyio

from harness.errors import ArgumentTypeError
from harness.runtime.child import ChildSpec
from harness.runtime.errors import (
    AdminCallBeforeReady,
    ChildRunning,
    DuplicateChild,
    FailedToStartChild,
    SupervisorNotRunning,
)
from harness.runtime.incarnation import FATAL, Child, own_runs
from harness.runtime.restarts import Restarts

__all__ = ["AdminCalls"]


class AdminCalls(Restarts):
    """A restarting child list that can be changed while it runs."""

    async def start_child(self, spec: ChildSpec) -> None:
        """Add ``spec`` at the end of the child list and start it (waiting for readiness).

        Raises ``DuplicateChild`` if the id exists, ``FailedToStartChild`` if it fails to
        start (it is then not added).
        """
        if not isinstance(spec, ChildSpec):
            raise ArgumentTypeError(f"start_child expects a ChildSpec, got {spec!r}")
        async with self._admin("start_child"):
            existing = self._find(spec.id)
            if existing is not None:
                raise DuplicateChild(spec.id, existing.status)
            child = Child(spec)
            await self._start_or_raise(child)
            self._children.append(child)

    async def terminate_child(self, id: str) -> None:
        """Stop a child (bounded by its shutdown); its spec stays unless it is temporary.

        A child terminating itself (from its own task or any task it spawned) is not waited for
        here, since it would wait for its own exit: its cancellation lands at its next
        ``await``, as OTP kills the calling process. It is waited for (bounded by its
        shutdown) before it is started again and when the supervisor stops.
        """
        async with self._admin("terminate_child"):
            child = self._get(id)
            await self._stop_child(child)
            if child.spec.restart == "temporary":
                self._children.remove(child)

    async def restart_child(self, id: str) -> None:
        """Start a stopped child again; a running one must be terminated first."""
        async with self._admin("restart_child"):
            child = self._stopped("restart", id)
            await self._start_or_raise(child, again=True)

    async def delete_child(self, id: str) -> None:
        """Forget a stopped child's spec; a running one must be terminated first."""
        async with self._admin("delete_child"):
            self._children.remove(self._stopped("delete", id))

    # ------------------------------------------------------------------ internals

    def _stopped(self, action: str, id: str) -> Child:
        """The child ``id``, which must be stopped for ``action``."""
        child = self._get(id)
        if child.status != "stopped":
            raise ChildRunning(id, child.status, action)
        return child

    async def _start_or_raise(self, child: Child, *, again: bool = False) -> None:
        """Start ``child``; ``FailedToStartChild`` if it fails (KeyboardInterrupt and
        SystemExit propagate as they are)."""
        cause = await self._start(child, again=again)
        if cause is None:
            return
        _raise_start_failure(child.spec.id, cause)

    @contextlib.asynccontextmanager
    async def _admin(self, action: str) -> AsyncIterator[None]:
        """Serialise an admin call with the manager, in a scope cancelled on stopping.

        Cancelled that way, the call has cleaned up what it started (``_start`` stops a
        half-started child) and raises ``SupervisorNotRunning``: the supervisor is stopping.
        """
        lock = self._lock
        if not self._active or self._closing or lock is None:
            raise SupervisorNotRunning(action)
        own = own_runs(self)
        for run in own:
            if not run.ready:  # we hold the lock until that very readiness: it would deadlock
                raise AdminCallBeforeReady(action, run.child_id)
        scope = anyio.CancelScope()
        self._admin_scopes.add(scope)
        try:
            with scope:
                async with lock:
                    # Not from inside a child's own tree: a restart there could stop the
                    # caller itself (its exits stay with the manager; a crash of a child this
                    # call stops is still logged, by _stop_run).
                    if not own:
                        await self._settle_exits()
                    if not self._active or self._closing:
                        raise SupervisorNotRunning(action)
                    yield
        finally:
            self._admin_scopes.discard(scope)
        if scope.cancelled_caught:
            raise SupervisorNotRunning(action)

    async def _settle_exits(self) -> None:
        """Handle the exits of children that ended but whose exit is still queued."""
        while not self._closing:
            ended = next(
                (c.run for c in self._children if c.run is not None and c.run.done.is_set()),
                None,
            )
            if ended is None:
                return
            await self._handle_exit(ended)

    def _cancel_admin_calls(self) -> None:
        for scope in self._admin_scopes:
            scope.cancel()


def _raise_start_failure(id: str, cause: BaseException) -> NoReturn:
    """``FailedToStartChild``, except for KeyboardInterrupt/SystemExit, which propagate."""
    if isinstance(cause, FATAL):
        raise cause
    raise FailedToStartChild(id, cause) from cause
