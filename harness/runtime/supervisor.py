"""Supervisor and ChildSpec: OTP supervision rebuilt on anyio (asyncio backend).

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

Design notes (the WHY behind the shape):

- Each child runs in its own task, created unstructured (``loop.create_task``), with an anyio
  ``CancelScope`` around its start function. A structured task group could not honour OTP's
  shutdown contract: a child that swallows cancellation would keep the group's ``__aexit__``
  waiting forever, whereas OTP abandons (kills) it after ``shutdown`` seconds. Being
  unstructured, the supervisor owns the children's whole life cycle explicitly: it starts them in
  order, stops them in reverse, and never lets a child's exception propagate anywhere. That is
  also why one child's error can never reach the host as an ``ExceptionGroup``: each child's
  outcome is caught and classified inside its own wrapper and turned into an exit *reason*.
- Exits are reported to one manager task through a memory stream; the manager and the admin
  calls serialise on one lock, like the single OTP supervisor process does with its mailbox.
- Escalation (``MaxRestartsExceeded``) first cancels a cancel scope entered around the body of
  the ``async with``, THEN stops the children: stopping first would fail a body awaiting a
  child (e.g. an ``Actor.call``) with that child's exit, masking the escalation.
  ``__aexit__`` recognises its own cancellation and raises the bare error.
- Admin calls and the initial start hold the same lock. A child that has not signalled ready
  yet cannot get that lock (its supervisor holds it while waiting for that very readiness), so
  such a call fails at once with ``AdminCallBeforeReady`` instead of deadlocking. Each admin
  call also runs in its own cancel scope, cancelled when the supervisor stops, so stopping
  never waits behind an admin call blocked on a child that will not become ready.
- ``KeyboardInterrupt`` and ``SystemExit`` in a child are not exit reasons to restart: they
  leave the child's task as they leave any asyncio task (the event loop re-raises them).
- All stopping happens inside shielded scopes, each child bounded by its ``shutdown``, so a
  cancelled host still stops its children in reverse order, and the host's cancellation then
  propagates (nothing is restarted once stopping began).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from types import TracebackType
from typing import Any, Final, Literal, NoReturn, Self, TypeAlias

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.errors import ArgumentError, ArgumentTypeError, StateError, single_cause
from harness.runtime.errors import (
    AdminCallBeforeReady,
    ChildRunning,
    DuplicateChild,
    FailedToStartChild,
    MaxRestartsExceeded,
    SupervisorNotRunning,
    UnknownChild,
    describe,
)

__all__ = [
    "ChildInfo",
    "ChildSpec",
    "Restart",
    "RestartStrategy",
    "Shutdown",
    "Status",
    "Supervisor",
]

logger = logging.getLogger(__name__)

Restart: TypeAlias = Literal["permanent", "transient", "temporary"]
Shutdown: TypeAlias = float | Literal["brutal"] | None
RestartStrategy: TypeAlias = Literal["one_for_one", "one_for_all", "rest_for_one"]
Status: TypeAlias = Literal["running", "restarting", "stopped"]
StartFunction: TypeAlias = Callable[[TaskStatus[Any]], Awaitable[object]]

_RESTARTS: Final = ("permanent", "transient", "temporary")
_STRATEGIES: Final = ("one_for_one", "one_for_all", "rest_for_one")
# Not exit reasons: they stop the program, so they leave the child's task (as from any asyncio
# task) and are never turned into a restart or a FailedToStartChild.
_FATAL: Final = (KeyboardInterrupt, SystemExit)


@dataclass(frozen=True, slots=True)
class ChildSpec:
    """How to start one child and what to do when it exits.

    ``start`` is an async callable taking ``task_status``: it calls ``task_status.started()``
    once ready, then runs until it returns (a normal exit) or raises (an abnormal exit).
    ``shutdown`` bounds how long stopping it may take: seconds, ``None`` (wait forever) or
    ``"brutal"`` (cancel without waiting).
    """

    id: str
    start: StartFunction
    restart: Restart = field(default="permanent", kw_only=True)
    shutdown: Shutdown = field(default=5.0, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ArgumentError(f"ChildSpec id must be a non-empty string, got {self.id!r}")
        if not callable(self.start):
            raise ArgumentTypeError(f"ChildSpec {self.id!r}: start must be an async callable")
        if self.restart not in _RESTARTS:
            raise ArgumentError(
                f"ChildSpec {self.id!r}: restart must be one of {_RESTARTS}, got {self.restart!r}"
            )
        shutdown = self.shutdown
        if shutdown is None or shutdown == "brutal":
            return
        if (
            isinstance(shutdown, bool)
            or not isinstance(shutdown, int | float)
            or math.isnan(shutdown)
            or shutdown < 0
        ):
            raise ArgumentError(
                f"ChildSpec {self.id!r}: shutdown must be seconds >= 0, None (wait forever) "
                f"or 'brutal', got {shutdown!r}"
            )


@dataclass(frozen=True, slots=True)
class ChildInfo:
    """A snapshot of one child, as ``which_children()`` reports it.

    ``restarts`` counts how often the supervisor started this child again after its first
    start (automatic restarts, sibling restarts under one_for_all/rest_for_one, restart_child).
    """

    id: str
    status: Status
    restarts: int


class _Exit(Enum):
    NORMAL = "normal"
    SHUTDOWN = "shutdown"


_Reason: TypeAlias = BaseException | _Exit


class _Run:
    """One incarnation of a child: its task, cancel scope and outcome."""

    __slots__ = ("child_id", "done", "on_ready", "ready", "reason", "scope", "settled", "task")

    def __init__(self, child_id: str) -> None:
        self.child_id = child_id
        self.scope = anyio.CancelScope()
        self.ready = False
        self.settled = anyio.Event()  # ready, or finished before becoming ready
        self.done = anyio.Event()
        self.reason: _Reason = _Exit.NORMAL
        self.task: asyncio.Task[None] | None = None
        self.on_ready: Callable[[], None] | None = None


class _ReadySignal(TaskStatus[Any]):
    """The ``task_status`` handed to a child's start function."""

    __slots__ = ("_run",)

    def __init__(self, run: _Run) -> None:
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


class RestartWindow:
    """OTP's restart intensity: at most ``max_restarts`` restarts in any ``max_seconds``.

    A sliding window over a monotonic clock. It keeps only the timestamps still inside the
    window (at most ``max_restarts + 1`` floats), never old exit reasons, so a long-lived
    supervisor's memory does not grow with its history.
    """

    __slots__ = ("_times", "max_restarts", "max_seconds")

    def __init__(self, max_restarts: int, max_seconds: float) -> None:
        self.max_restarts = max_restarts
        self.max_seconds = max_seconds
        self._times: deque[float] = deque(maxlen=max_restarts + 1)

    def __len__(self) -> int:
        return len(self._times)

    def clear(self) -> None:
        self._times.clear()

    def add(self, now: float) -> bool:
        """Record a restart at ``now``; False if that exceeds the intensity."""
        times = self._times
        while times and now - times[0] >= self.max_seconds:
            times.popleft()
        times.append(now)
        return len(times) <= self.max_restarts

    def times(self) -> tuple[float, ...]:
        return tuple(self._times)


class _Child:
    __slots__ = ("detached", "restarts", "run", "spec", "status")

    def __init__(self, spec: ChildSpec) -> None:
        self.spec = spec
        self.run: _Run | None = None
        self.status: Status = "stopped"
        self.restarts = 0
        # An incarnation stopped from inside its own task tree (it cannot be waited for
        # there): cancelled, and waited for later, before a new one starts or at shutdown.
        self.detached: _Run | None = None


_Lineage: TypeAlias = "tuple[tuple[Supervisor, _Run], ...]"
_LINEAGE: contextvars.ContextVar[_Lineage] = contextvars.ContextVar(
    "harness_runtime_lineage", default=()
)
"""The (supervisor, incarnation) pairs whose task tree the current task belongs to, outermost
first. Tasks a child spawns inherit it, so a call from anywhere inside a child's tree is
recognised as coming from that child (and from its ancestors, through nested supervisors)."""


SERVING: contextvars.ContextVar[object] = contextvars.ContextVar(
    "harness_runtime_actor", default=None
)
"""The actor whose task tree the current task belongs to (set by ``Actor.run``, see
``harness.runtime.actor``); a supervised child's task starts with none, whoever started it."""


def _own_runs(sup: Supervisor) -> list[_Run]:
    """The incarnations of ``sup``'s children whose task tree the calling task is in."""
    return [run for owner, run in _LINEAGE.get() if owner is sup]


class _StartFailed(Exception):
    def __init__(self, cause: BaseException) -> None:
        self.cause = cause


class Supervisor:
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
        if strategy not in _STRATEGIES:
            raise ArgumentError(f"strategy must be one of {_STRATEGIES}, got {strategy!r}")
        if isinstance(max_restarts, bool) or not isinstance(max_restarts, int) or max_restarts < 0:
            raise ArgumentError(f"max_restarts must be an int >= 0, got {max_restarts!r}")
        if not isinstance(max_seconds, int | float) or not max_seconds > 0:
            raise ArgumentError(f"max_seconds must be > 0, got {max_seconds!r}")
        self._specs = specs
        self._strategy: RestartStrategy = strategy
        self._max_restarts = max_restarts
        self._max_seconds = float(max_seconds)
        self._name = "supervisor"
        self._children: list[_Child] = [_Child(spec) for spec in specs]
        self._history = RestartWindow(max_restarts, float(max_seconds))
        self._tasks: set[asyncio.Task[None]] = set()
        self._active = False
        self._closing = False
        self._escalation: BaseException | None = None
        self._lock: anyio.Lock | None = None
        self._host_scope: anyio.CancelScope | None = None
        self._host_task: asyncio.Task[Any] | None = None
        self._exits_send: MemoryObjectSendStream[_Run] | None = None
        self._exits_recv: MemoryObjectReceiveStream[_Run] | None = None
        self._manager_scope: anyio.CancelScope | None = None
        self._manager_done: anyio.Event | None = None
        # Where this supervisor runs in a supervision tree (set on entering): its children's
        # lineage extends it, whatever task happens to start them.
        self._lineage: _Lineage = ()
        # One scope per admin call in flight, cancelled when the supervisor stops.
        self._admin_scopes: set[anyio.CancelScope] = set()

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
        self._children = [_Child(spec) for spec in self._specs]
        self._history.clear()
        self._closing = False
        self._escalation = None
        self._lock = anyio.Lock()
        self._exits_send, self._exits_recv = anyio.create_memory_object_stream[_Run](math.inf)
        self._active = True
        self._lineage = _LINEAGE.get()
        # Start under the lock: an admin call from a child that is already ready waits until
        # the whole initial list is up (it cannot reorder or double-start it).
        lock = self._lock
        lock.acquire_nowait()  # a brand-new lock: never contended
        try:
            for child in list(self._children):
                try:
                    await self._start(child)
                except _StartFailed as failed:
                    _raise_start_failure(child.spec.id, failed.cause)
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
        self._manager_scope = anyio.CancelScope()
        self._manager_done = anyio.Event()
        self._spawn(self._manage(), "manager")
        # Entered last, exited in __aexit__: escalation cancels the body of the `async with`.
        self._host_scope = anyio.CancelScope()
        self._host_scope.__enter__()
        self._host_task = asyncio.current_task()
        return self

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

    # ------------------------------------------------------------------ admin calls

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
            child = _Child(spec)
            try:
                await self._start(child)
            except _StartFailed as failed:
                _raise_start_failure(spec.id, failed.cause)
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
            child = self._get(id)
            if child.status != "stopped":
                raise ChildRunning(id, child.status, "restart")
            try:
                await self._start(child, again=True)
            except _StartFailed as failed:
                _raise_start_failure(id, failed.cause)

    async def delete_child(self, id: str) -> None:
        """Forget a stopped child's spec; a running one must be terminated first."""
        async with self._admin("delete_child"):
            child = self._get(id)
            if child.status != "stopped":
                raise ChildRunning(id, child.status, "delete")
            self._children.remove(child)

    # ------------------------------------------------------------------ internals

    @contextlib.asynccontextmanager
    async def _admin(self, action: str) -> AsyncIterator[None]:
        """Serialise an admin call with the manager, in a scope cancelled on stopping.

        Cancelled that way, the call has cleaned up what it started (``_start`` stops a
        half-started child) and raises ``SupervisorNotRunning``: the supervisor is stopping.
        """
        lock = self._lock
        if not self._active or self._closing or lock is None:
            raise SupervisorNotRunning(action)
        own = _own_runs(self)
        for run in own:
            if not run.ready:  # we hold the lock until that very readiness: it would deadlock
                raise AdminCallBeforeReady(action, run.child_id)
        scope = anyio.CancelScope()
        self._admin_scopes.add(scope)
        try:
            with scope:
                async with lock:
                    # Exits that happened before this call are handled first, as OTP's
                    # supervisor handles its mailbox in order, so a crash is not erased by the
                    # call. Not from inside a child's own tree: a restart there could stop the
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

    def _will_restart(self, spec: ChildSpec, reason: _Reason) -> bool:
        """Whether an exit with ``reason`` restarts the child (its restart type decides)."""
        if isinstance(reason, _FATAL) or spec.restart == "temporary":
            return False
        return not (spec.restart == "transient" and reason is _Exit.NORMAL)

    def _status(self, child: _Child) -> Status:
        """The child's status, counting an ended incarnation whose exit is not processed yet."""
        run = child.run
        if child.status == "running" and run is not None and run.done.is_set():
            if not self._closing and self._will_restart(child.spec, run.reason):
                return "restarting"
            return "stopped"
        return child.status

    def _find(self, id: str) -> _Child | None:
        for child in self._children:
            if child.spec.id == id:
                return child
        return None

    def _get(self, id: str) -> _Child:
        child = self._find(id)
        if child is None:
            raise UnknownChild(id, [c.spec.id for c in self._children])
        return child

    def _spawn(self, coro: Any, label: str) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(
            coro, name=f"harness.runtime:{self._name}/{label}"
        )
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(_retrieved)
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

    async def _child_main(
        self, spec: ChildSpec, run: _Run, exits: MemoryObjectSendStream[_Run]
    ) -> None:
        """Run one incarnation and classify its outcome.

        No error escapes, except KeyboardInterrupt/SystemExit (recorded as the exit first).
        """
        reason: _Reason = _Exit.NORMAL
        # This task's tree is this incarnation's, whichever task started it.
        _LINEAGE.set((*self._lineage, (self, run)))
        SERVING.set(None)  # started from an actor's callback or not, it is not that actor
        try:
            with run.scope:
                await spec.start(_ReadySignal(run))
            if run.scope.cancelled_caught:
                reason = _Exit.SHUTDOWN
        except asyncio.CancelledError as exc:
            # Cancelled from outside our scope (e.g. the event loop is closing): an abnormal
            # exit for the supervisor, and the task still ends as cancelled.
            reason = exc
            raise
        except BaseException as exc:
            reason = single_cause(exc)  # a child's own task groups wrap its error
            if isinstance(reason, _FATAL):
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

    async def _start(self, child: _Child, *, again: bool = False) -> None:
        """Start one child and wait for its readiness; raise _StartFailed if it fails.

        ``again``: this is a restart, counted in the child's ``restarts``.
        """
        spec = child.spec
        run = _Run(spec.id)

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
        if not run.ready:
            cause = run.reason
            if not isinstance(cause, BaseException):
                cause = RuntimeError(
                    f"child {spec.id!r}: start returned before calling task_status.started()"
                )
            self._log(logging.ERROR, "start_error", spec.id, f"reason={describe(cause)}")
            raise _StartFailed(cause)

    async def _stop_run(self, spec: ChildSpec, run: _Run) -> None:
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

    async def _stop_child(self, child: _Child) -> None:
        run, child.run = child.run, None
        child.status = "stopped"
        if run is None:
            return
        if run in _own_runs(self):
            # Called from inside this incarnation's own task tree: waiting would wait for
            # ourselves. Cancel it now; it is waited for later (see _wait_detached).
            run.scope.cancel()
            child.detached = run
            self._log(logging.DEBUG, "child_terminated", child.spec.id, "reason=shutdown (itself)")
            return
        await self._stop_run(child.spec, run)

    async def _wait_detached(self, child: _Child) -> None:
        """Wait (bounded by its shutdown) for an incarnation stopped from its own tree, unless
        the caller is still inside that tree (then the new one starts alongside its exit)."""
        run = child.detached
        if run is None or run in _own_runs(self):
            return
        child.detached = None
        await self._stop_run(child.spec, run)

    def _log_ended(self, spec: ChildSpec, run: _Run) -> None:
        reason = run.reason
        if isinstance(reason, BaseException):
            self._log(logging.ERROR, "child_terminated", spec.id, f"reason={describe(reason)}")
        else:
            self._log(logging.DEBUG, "child_terminated", spec.id, f"reason={reason.value}")

    async def _stop_all(self) -> None:
        """Stop every child, in reverse start order, one at a time."""
        with anyio.CancelScope(shield=True):
            for child in reversed(list(self._children)):
                await self._stop_child(child)
                await self._wait_detached(child)

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
            self._closing = True
            self._escalation = exc
            if self._host_scope is not None:
                self._host_scope.cancel()  # before stopping: see _escalate
            await self._stop_all()
        finally:
            self._manager_done.set()

    async def _handle_exit(self, run: _Run) -> None:
        child = self._find(run.child_id)
        if child is not None and child.detached is run:  # stopped from its own tree: done now
            child.detached = None
            self._log_ended(child.spec, run)
            return
        if child is None or child.run is not run:
            return  # stale: the supervisor stopped or replaced this incarnation itself
        child.run = None
        reason = run.reason
        # Truthful at once, while siblings are being stopped for the strategy.
        child.status = "restarting" if self._will_restart(child.spec, reason) else "stopped"
        normal = reason is _Exit.NORMAL
        self._log(
            logging.INFO if normal else logging.ERROR,
            "child_terminated",
            child.spec.id,
            f"reason={describe(reason.value if isinstance(reason, _Exit) else reason)}",
        )
        if not self._will_restart(child.spec, reason):
            child.status = "stopped"
            if child.spec.restart == "temporary":
                self._children.remove(child)
            return
        await self._restart(child, reason)

    def _restart_group(self, child: _Child) -> list[_Child]:
        if self._strategy == "one_for_one":
            return [child]
        if self._strategy == "one_for_all":
            return list(self._children)
        return self._children[self._children.index(child) :]

    def _record_restart(self) -> bool:
        """Add a restart to the sliding window; False if the intensity is exceeded."""
        return self._history.add(anyio.current_time())

    async def _restart(self, child: _Child, reason: _Reason) -> None:
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
            if not self._record_restart():
                await self._escalate(target, reason)
                return
            failed = await self._start_group([m for m in group if m in self._children])
            if failed is None:
                return
            target, reason = failed
            await anyio.lowlevel.checkpoint()

    async def _start_group(self, group: list[_Child]) -> tuple[_Child, BaseException] | None:
        for member in group:
            if self._closing:  # stopping began meanwhile: restart nothing more
                return None
            if member.run is not None:
                continue
            try:
                await self._start(member, again=True)
            except _StartFailed as failed:
                if isinstance(failed.cause, _FATAL):
                    member.status = "stopped"  # it left through the event loop; no restart
                    continue
                member.status = "restarting"
                return member, failed.cause
        return None

    async def _escalate(self, child: _Child, reason: _Reason) -> None:
        self._log(
            logging.ERROR,
            "reached_max_restart_intensity",
            child.spec.id,
            f"max_restarts={self._max_restarts} max_seconds={self._max_seconds} "
            f"reason={describe(reason.value if isinstance(reason, _Exit) else reason)}",
        )
        self._closing = True
        self._escalation = MaxRestartsExceeded(
            self._name,
            max_restarts=self._max_restarts,
            max_seconds=self._max_seconds,
            child_id=child.spec.id,
            reason=reason.value if isinstance(reason, _Exit) else reason,
        )
        # Cancel the body FIRST: stopping the children first would fail a body awaiting one
        # of them (e.g. an Actor.call gets ActorExited), and that error would mask this one.
        if self._host_scope is not None:
            self._host_scope.cancel()
        await self._stop_all()


def _retrieved(task: asyncio.Task[None]) -> None:
    """Mark a finished task's exception as seen.

    Only KeyboardInterrupt/SystemExit end a child's task with an exception; they already went
    out through the event loop, so asyncio must not report them a second time as "never
    retrieved" when the task is collected (a report that, made from a finaliser, can also
    trip CPython 3.11's re-entrancy bug in ``ast.parse`` used by traceback formatting).
    """
    if not task.cancelled():
        task.exception()


def _raise_start_failure(id: str, cause: BaseException) -> NoReturn:
    """``FailedToStartChild``, except for KeyboardInterrupt/SystemExit, which propagate."""
    if isinstance(cause, _FATAL):
        raise cause
    raise FailedToStartChild(id, cause) from cause


def _is_supervisor(spec: ChildSpec) -> bool:
    return isinstance(getattr(spec.start, "__self__", None), Supervisor)
