"""Actor: a GenServer-style base class with a bounded mailbox.

Subclass it, override ``handle_call`` (and optionally ``init``, ``handle_cast``,
``terminate``), and run it under a :class:`~harness.runtime.Supervisor` through
``actor.child_spec(id=...)``. Messages are handled one at a time, in arrival order, so the
actor's state needs no locks::

    import anyio
    from harness.runtime import Actor, Supervisor

    class Greeter(Actor):
        async def handle_call(self, msg):
            return f"hello, {msg}"

    async def main() -> None:
        greeter = Greeter()
        async with Supervisor([greeter.child_spec(id="greeter")]):
            print(await greeter.call("world"))   # hello, world

    anyio.run(main)

Semantics (the WHY: a caller must never hang on an actor that is gone):

- ``await actor.call(msg, timeout=5.0)`` returns ``handle_call``'s result. If the actor is not
  running it raises ``NoProc`` at once; if the actor exits (crash or shutdown) before replying,
  the caller gets ``ActorExited`` at once, and so does every caller still queued in the mailbox.
  After ``timeout`` seconds it raises ``TimeoutError``; the call stays in the mailbox and is
  still handled (as in OTP) but its late reply is dropped. On a full mailbox ``call`` waits for
  room (within the same timeout); if the actor exits meanwhile it raises ``ActorExited``.
- An actor that calls itself, from a callback or from a task started inside one (any code that
  runs in the actor's context), gets ``CallingSelf`` at once (OTP's ``calling_self``): the
  call could never be answered. ``cast`` to self is fine.
- ``actor.cast(msg)`` is synchronous and never blocks: it raises ``NoProc`` if the actor is not
  running and ``MailboxFull`` if the mailbox is full. A cast is never silently dropped.
- An exception in ``handle_call``/``handle_cast`` crashes the actor; its supervisor decides what
  follows. ``terminate(reason)`` runs once each time the actor stops (``reason`` is the
  exception, or ``"shutdown"`` when its supervisor stopped it); not when ``init`` failed. It is
  cut off after the ``shutdown`` the actor's ``child_spec`` was made with (see ``terminate``).
- ``KeyboardInterrupt``/``SystemExit`` raised by a callback fail the waiting callers with
  ``ActorExited`` and then propagate (out of the event loop, as from any asyncio task); the
  supervisor does not restart the actor for them.
- The same instance is reused across restarts: a restart runs ``init`` again on it, so ``init``
  should (re)set the state. One instance should be the child of one supervisor only.

Design notes: the callers' timeouts share one timer per running actor (``_Deadlines``: a heap
of deadlines and a single ``call_at`` for the earliest), instead of a timer handle armed and
cancelled per call, which cost about a quarter of a call. The actor's own task (and every task
it starts, which inherit its context) carries the actor in a context variable, which is how a
call to self is recognised.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import math
from typing import Any, ClassVar, TypeAlias

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.errors import ArgumentError
from harness.runtime.errors import ActorExited, CallingSelf, MailboxFull, NoProc
from harness.runtime.supervisor import SERVING, ChildSpec, Restart, Shutdown

__all__ = ["Actor", "ExitReason"]

logger = logging.getLogger(__name__)

ExitReason: TypeAlias = BaseException | str
"""Why an actor stopped: the exception that crashed it, or ``"shutdown"``."""


class _Call:
    __slots__ = ("future", "msg")

    def __init__(self, msg: Any, future: asyncio.Future[Any]) -> None:
        self.msg = msg
        self.future = future


class _Cast:
    __slots__ = ("msg",)

    def __init__(self, msg: Any) -> None:
        self.msg = msg


_Envelope: TypeAlias = _Call | _Cast


def _expire(future: asyncio.Future[Any], timeout: float) -> None:
    if not future.done():
        future.set_exception(TimeoutError(f"the actor did not reply within {timeout} s"))


class _Deadlines:
    """The pending callers' deadlines of one running actor, kept by one timer.

    A heap of ``(deadline, seq, future, timeout)``; the single timer is armed at the earliest
    deadline and, when it fires, fails the expired futures still waiting with ``TimeoutError``
    and re-arms for the next. Entries of answered calls are dropped lazily: the heap is
    compacted once it holds more than twice the pending calls (plus a little), so it stays
    bounded and the work per call stays constant.
    """

    __slots__ = ("_heap", "_loop", "_pending", "_seq", "_timer", "_timer_at")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._heap: list[tuple[float, int, asyncio.Future[Any], float]] = []
        self._pending = 0
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def add(self, deadline: float, future: asyncio.Future[Any], timeout: float) -> None:
        heapq.heappush(self._heap, (deadline, next(self._seq), future, timeout))
        self._pending += 1
        if deadline < self._timer_at:
            self._arm(deadline)

    def settled(self) -> None:
        """One added call is over (its future is done)."""
        self._pending -= 1
        if len(self._heap) > 2 * self._pending + 64:
            self._heap = [entry for entry in self._heap if not entry[2].done()]
            heapq.heapify(self._heap)
            if not self._heap and self._timer is not None:
                self._timer.cancel()
                self._timer, self._timer_at = None, math.inf

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = None, math.inf
        self._heap.clear()

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._loop.call_at(deadline, self._sweep)
        self._timer_at = deadline

    def _sweep(self) -> None:
        self._timer, self._timer_at = None, math.inf
        heap, now = self._heap, self._loop.time()
        while heap and heap[0][0] <= now:
            _, _, future, timeout = heapq.heappop(heap)
            _expire(future, timeout)
        if heap:
            self._arm(heap[0][0])


# The actor whose task this is: set in ``run``, inherited by every task started from it
# (the supervisor clears it for the children it starts).
_serving = SERVING


def _exited(reason: ExitReason) -> ActorExited:
    error = ActorExited(reason)
    if isinstance(reason, BaseException):
        error.__cause__ = reason
    return error


def _fail(call: _Call, reason: ExitReason) -> None:
    if not call.future.done():
        call.future.set_exception(_exited(reason))


class Actor:
    """GenServer-style base class; subclass and override the callbacks.

    ``mailbox_size`` (class attribute) bounds the mailbox; override it in a subclass.
    """

    mailbox_size: ClassVar[int] = 1024

    # Remembered by child_spec() (these are its defaults): the shutdown bounds terminate().
    _shutdown: Shutdown = 5.0
    _id: str | None = None

    def __init__(self) -> None:
        self._mailbox: MemoryObjectSendStream[_Envelope] | None = None
        self._deadlines: _Deadlines | None = None  # set with _mailbox, per run
        # The running incarnation's exit reason, once known (set with _mailbox, per run).
        self._exit: list[ExitReason] = []

    def __repr__(self) -> str:
        state = "running" if self._mailbox is not None else "not running"
        return f"<{type(self).__name__} actor, {state}>"

    # ------------------------------------------------------------------ callbacks

    async def init(self) -> None:
        """Set up state before the first message; an exception here fails the start."""

    async def handle_call(self, msg: Any) -> Any:
        """Handle ``call(msg)``; the return value is the reply. Override it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement handle_call")

    async def handle_cast(self, msg: Any) -> None:
        """Handle ``cast(msg)``; there is no reply."""

    async def terminate(self, reason: ExitReason) -> None:
        """Clean up when the actor stops (after a crash or a stop alike).

        Runs shielded from cancellation, and is cut off (logged as ``terminate_timeout``)
        after the ``shutdown`` that :meth:`child_spec` was given: that many seconds; never
        with ``None``; with ``"brutal"``, at its first ``await`` (only its synchronous part
        runs). An actor run without ``child_spec`` uses its default, 5 s. When the supervisor
        stops the actor, it also stops waiting for it after ``shutdown``.
        """

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        """True while the actor accepts messages."""
        return self._mailbox is not None

    def child_spec(
        self,
        id: str | None = None,
        *,
        restart: Restart = "permanent",
        shutdown: Shutdown = 5.0,
    ) -> ChildSpec:
        """A ChildSpec that runs this actor under a Supervisor (id defaults to the class name).

        ``shutdown`` also bounds :meth:`terminate`, on every path (see there).
        """
        spec = ChildSpec(id or type(self).__name__, self.run, restart=restart, shutdown=shutdown)
        self._shutdown = spec.shutdown
        self._id = spec.id
        return spec

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the actor: ``init``, signal ready, then serve the mailbox until stopped."""
        serving = _serving.set(self)
        try:
            await self._run(task_status)
        finally:
            _serving.reset(serving)

    async def _run(self, task_status: TaskStatus[None]) -> None:
        await self.init()
        send, receive = anyio.create_memory_object_stream[_Envelope](self.mailbox_size)
        current: list[_Call] = []  # the call being handled, if any
        reason: ExitReason = "shutdown"
        exit_reason: list[ExitReason] = []
        deadlines = _Deadlines(asyncio.get_running_loop())
        self._exit = exit_reason
        self._deadlines = deadlines
        self._mailbox = send
        try:
            task_status.started()
            await self._serve(receive, current)
        except anyio.get_cancelled_exc_class():
            reason = "shutdown"
            raise
        except BaseException as exc:
            reason = exc
            raise
        finally:
            # Fail every waiting caller before anything else can block: they get it "at once".
            exit_reason.append(reason)  # read by callers waiting for room in a full mailbox
            if self._mailbox is send:
                self._mailbox = None
                self._deadlines = None
            send.close()
            for call in current:
                _fail(call, reason)
            while True:
                try:
                    envelope = receive.receive_nowait()
                except (anyio.WouldBlock, anyio.EndOfStream):
                    break
                if isinstance(envelope, _Call):
                    _fail(envelope, reason)
            receive.close()
            deadlines.close()
            await self._run_terminate(reason)

    async def _run_terminate(self, reason: ExitReason) -> None:
        """Run ``terminate`` shielded, cut off after the child's shutdown (see terminate)."""
        shutdown = self._shutdown
        bound: float | None
        if shutdown == "brutal":
            bound = 0.0
        elif shutdown is None:
            bound = None
        else:
            # A little inside the shutdown: the supervisor's own wait for this task started a
            # moment earlier, and must see a cooperating actor finish, not abandon it.
            bound = max(0.0, shutdown - min(0.05, shutdown / 10))
        child_id = self._id or type(self).__name__
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(bound) as cut:
                try:
                    await self.terminate(reason)
                except Exception:
                    logger.exception(
                        "terminate_error actor=%s child=%s",
                        type(self).__name__,
                        child_id,
                        extra={"event": "terminate_error", "child_id": child_id},
                    )
            if cut.cancelled_caught:
                logger.error(
                    "terminate_timeout actor=%s child=%s reason=terminate() did not finish "
                    "within the child's shutdown (%s) and was cut off",
                    type(self).__name__,
                    child_id,
                    "0 s: brutal" if shutdown == "brutal" else f"{shutdown} s",
                    extra={"event": "terminate_timeout", "child_id": child_id},
                )

    async def _serve(
        self, receive: MemoryObjectReceiveStream[_Envelope], current: list[_Call]
    ) -> None:
        async for envelope in receive:
            if type(envelope) is _Call:
                current.append(envelope)
                result = await self.handle_call(envelope.msg)
                current.pop()
                future = envelope.future
                if not future.done():  # else: the caller timed out or left; drop the reply
                    future.set_result(result)
            else:
                await self.handle_cast(envelope.msg)

    # ------------------------------------------------------------------ client API

    async def call(self, msg: Any, timeout: float | None = 5.0) -> Any:  # noqa: ASYNC109
        """Send ``msg`` to ``handle_call`` and wait for the reply (see the module docstring)."""
        if timeout is not None and timeout != timeout:
            raise ArgumentError(f"call timeout must be seconds or None, got {timeout!r}")
        if _serving.get() is self:
            raise CallingSelf(repr(self))
        mailbox, deadlines = self._mailbox, self._deadlines
        if mailbox is None or deadlines is None:
            raise NoProc(repr(self))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        envelope = _Call(msg, future)
        deadline = None if timeout is None else loop.time() + timeout
        try:
            mailbox.send_nowait(envelope)
        except anyio.WouldBlock:
            exit_reason = self._exit  # of the incarnation that owns ``mailbox``
            try:
                with anyio.fail_after(timeout):
                    await mailbox.send(envelope)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                # The actor exited while we waited for room: as for a queued caller.
                reason = exit_reason[0] if exit_reason else "shutdown"
                raise _exited(reason) from (reason if isinstance(reason, BaseException) else None)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise NoProc(repr(self)) from None
        if timeout is None or deadline is None or future.done():
            return await future
        deadlines.add(deadline, future, timeout)
        try:
            return await future
        except BaseException:
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved: we are leaving for another reason
            raise
        finally:
            if not future.done():  # leaving for another reason: the sweep must not fire it
                future.cancel()
            deadlines.settled()

    def cast(self, msg: Any) -> None:
        """Queue ``msg`` for ``handle_cast`` without waiting; raises if it cannot be queued."""
        mailbox = self._mailbox
        if mailbox is None:
            raise NoProc(repr(self))
        try:
            mailbox.send_nowait(_Cast(msg))
        except anyio.WouldBlock:
            raise MailboxFull(repr(self), self.mailbox_size) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise NoProc(repr(self)) from None
