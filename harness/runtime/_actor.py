"""Actor: a GenServer-style base class with a bounded mailbox.

Subclass it, override ``handle_call`` (and optionally ``init``, ``handle_continue``,
``handle_cast``, ``handle_info``, ``handle_idle``, ``terminate``), and run it under a
supervisor through ``actor.child_spec(id=...)``. Messages are handled one at a time, in
arrival order, so the actor's state needs no locks::

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

A caller must never hang on an actor that is gone:

- ``await actor.call(msg, timeout=5.0)`` returns ``handle_call``'s result. If the actor is not
  running it raises ``NoProc`` at once; if the actor exits before replying, the caller gets
  ``ActorExited`` at once, and so does every caller still queued or deferred. After ``timeout``
  seconds it raises ``TimeoutError``; the call stays in the mailbox and is still handled but
  its late reply is dropped. On a full mailbox ``call`` waits for room (within the timeout).
- Inside ``handle_call``, ``caller = self.defer()`` means the return value is not the reply:
  the caller waits (within its timeout) for ``self.reply(caller, value)``, from any task,
  while the actor handles other messages.
- An actor calling itself gets ``CallingSelf`` at once: the call could never be answered.
- ``actor.cast(msg)`` (to ``handle_cast``) and ``actor.send(msg)`` (to ``handle_info``) never
  block: they raise ``NoProc`` if the actor is not running and ``MailboxFull`` if the mailbox
  is full. A message is never silently dropped.
- An exception in a callback crashes the actor; its supervisor decides what follows.
  ``self.stop()`` ends it after the current message, a normal exit. ``terminate(reason)`` runs
  once each time the actor stops: ``reason`` is the exception, ``"normal"`` or
  ``"shutdown"`` (its supervisor stopped it); not when ``init`` failed.
- ``handle_continue`` runs after ``init`` (the actor already counts as started) and before the
  first message; with ``idle_timeout`` set, ``handle_idle`` runs after that many seconds
  without a message.
- The same instance is reused across restarts: a restart runs ``init`` again on it, so
  ``init`` should (re)set the state. One instance should be the child of one supervisor only.
"""

# The actor's own task (and every task it starts, which inherit its context) carries the
# actor in a context variable, which is how a call to self is recognised.

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Hashable
from typing import Any, ClassVar, Protocol, TypeAlias

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.errors import ArgumentError, StateError
from harness.runtime._child import ChildSpec, Restart, Shutdown
from harness.runtime._deadlines import Deadlines
from harness.runtime._errors import CallingSelf, MailboxFull, NoProc
from harness.runtime._incarnation import SERVING
from harness.runtime._messages import (
    NORMAL_STOPS,
    Caller,
    Cast,
    Envelope,
    ExitReason,
    Info,
    exited,
    fail,
)

__all__ = ["Actor", "Caller", "ExitReason", "Name"]

logger = logging.getLogger(__name__)


class Registrar(Protocol):
    """What an actor needs of a registry it is named in (``harness.runtime.Registry``)."""

    def register(self, key: Hashable, actor: Actor) -> None: ...
    def unregister(self, key: Hashable, actor: Actor | None = None) -> None: ...


Name: TypeAlias = tuple[Registrar, Hashable]
"""``(registry, key)``: where a child registers itself while it runs."""


class Actor:
    """GenServer-style base class; subclass and override the callbacks.

    ``mailbox_size`` bounds the mailbox and ``idle_timeout`` (seconds or None) says when
    ``handle_idle`` runs; override either in a subclass (or set them on the instance).
    """

    mailbox_size: ClassVar[int] = 1024
    idle_timeout: float | None = None

    # Remembered by child_spec() (these are its defaults): the shutdown bounds terminate().
    _shutdown: Shutdown = 5.0
    _id: str | None = None
    _name: Name | None = None

    def __init__(self) -> None:
        self._mailbox: MemoryObjectSendStream[Envelope] | None = None
        self._deadlines: Deadlines | None = None  # set with _mailbox, per run
        # The running incarnation's exit reason, once known (set with _mailbox, per run).
        self._exit: list[ExitReason] = []
        self._current: list[Caller] = []  # the call being handled, if any
        self._deferred: set[Caller] = set()
        self._stopping: list[ExitReason] = []
        # Per incarnation while it starts or runs (None otherwise): its registrations and
        # what to tell when it is gone (monitors).
        self._names: list[tuple[Registrar, Hashable]] | None = None
        self._on_exit: list[Callable[[ExitReason], None]] = []

    def __repr__(self) -> str:
        state = "running" if self._mailbox is not None else "not running"
        return f"<{type(self).__name__} actor, {state}>"

    # ------------------------------------------------------------------ callbacks

    async def init(self) -> None:
        """Set up state before the first message; an exception here fails the start."""

    async def handle_continue(self) -> None:
        """Runs once after ``init``, the actor already started, before the first message."""

    async def handle_call(self, msg: Any) -> Any:
        """Handle ``call(msg)``; the return value is the reply. Override it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement handle_call")

    async def handle_cast(self, msg: Any) -> None:
        """Handle ``cast(msg)``; there is no reply."""

    async def handle_info(self, msg: Any) -> None:
        """Handle ``send(msg)``; there is no reply."""

    async def handle_idle(self) -> None:
        """Runs after ``idle_timeout`` seconds without a message (default: nothing)."""

    async def terminate(self, reason: ExitReason) -> None:
        """Clean up when the actor stops (after a crash or a stop alike).

        Runs shielded from cancellation, and is cut off (logged as ``terminate_timeout``)
        after the ``shutdown`` that :meth:`child_spec` was given: that many seconds; never
        with ``None``; with ``"brutal"``, at its first ``await`` (only its synchronous part
        runs). An actor run without ``child_spec`` uses its default, 5 s. When the supervisor
        stops the actor, it also stops waiting for it after ``shutdown``.
        """

    # ------------------------------------------------------------------ inside callbacks

    def defer(self) -> Caller:
        """Inside ``handle_call``: answer later with ``reply(caller, value)``.

        Whatever ``handle_call`` returns is then not the reply; the caller keeps waiting
        (within its timeout) and gets ``ActorExited`` if the actor exits first.
        """
        if not self._current:
            raise StateError("defer() is only valid inside handle_call, before it returns")
        caller = self._current.pop()
        self._deferred.add(caller)
        return caller

    def reply(self, caller: Caller, value: Any) -> None:
        """Answer a deferred call; a reply to a caller that timed out or left is dropped."""
        self._deferred.discard(caller)
        if not caller.future.done():
            caller.future.set_result(value)

    def stop(self, reason: ExitReason = "normal") -> None:
        """End the actor after the current message: ``"normal"`` (or ``"shutdown"``) is a
        normal exit; an exception is a crash with that exception."""
        if not isinstance(reason, BaseException) and reason not in NORMAL_STOPS:
            raise ArgumentError(
                f"stop reason must be 'normal', 'shutdown' or an exception, got {reason!r}"
            )
        if self._mailbox is None:
            return
        self._stopping.append(reason)
        if SERVING.get() is not self:  # from outside: wake a waiting mailbox
            # A full mailbox: the stop is seen after the next message anyway.
            with contextlib.suppress(anyio.WouldBlock, anyio.ClosedResourceError):
                self._mailbox.send_nowait(None)

    # ------------------------------------------------------------------ running

    @property
    def running(self) -> bool:
        """True while the actor accepts messages."""
        return self._mailbox is not None

    def child_spec(
        self,
        id: str | None = None,
        *,
        name: Name | None = None,
        restart: Restart = "permanent",
        shutdown: Shutdown = 5.0,
    ) -> ChildSpec:
        """A ChildSpec that runs this actor under a supervisor (id defaults to the class name).

        ``name=(registry, key)`` registers each incarnation under ``key`` while it runs; a
        taken key fails the start with ``AlreadyRegistered``. ``shutdown`` also bounds
        :meth:`terminate`, on every path (see there).
        """
        spec = ChildSpec(id or type(self).__name__, self.run, restart=restart, shutdown=shutdown)
        if name is not None and (not isinstance(name, tuple) or len(name) != 2):
            raise ArgumentError(f"name must be a (registry, key) pair, got {name!r}")
        self._shutdown = spec.shutdown
        self._id = spec.id
        self._name = name
        return spec

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the actor: ``init``, signal ready, then serve the mailbox until stopped."""
        serving = SERVING.set(self)
        names: list[tuple[Registrar, Hashable]] = []
        on_exit: list[Callable[[ExitReason], None]] = []
        self._names, self._on_exit = names, on_exit
        reason: ExitReason = "shutdown"
        try:
            if self._name is not None:
                registry, key = self._name
                registry.register(key, self)  # before init: a taken name starts nothing
            reason = await self._run(task_status)
        except BaseException as exc:
            reason = _exit_reason(exc)
            raise
        finally:
            self._names = None
            for registry, key in names:
                registry.unregister(key, self)
            SERVING.reset(serving)
            for callback in on_exit:
                callback(reason)

    def _registered(self, registry: Registrar, key: Hashable) -> None:
        """Remember a registration, dropped when this incarnation ends (NoProc if none runs)."""
        if self._names is None:
            raise NoProc(repr(self))
        self._names.append((registry, key))

    def _notify_on_exit(self, callback: Callable[[ExitReason], None]) -> bool:
        """Call ``callback(reason)`` when this incarnation is gone; False if none runs."""
        if self._names is None:
            return False
        self._on_exit.append(callback)
        return True

    async def _run(self, task_status: TaskStatus[None]) -> ExitReason:
        await self.init()
        send, receive = anyio.create_memory_object_stream[Envelope](self.mailbox_size)
        current: list[Caller] = []
        reason: ExitReason = "shutdown"
        exit_reason: list[ExitReason] = []
        deadlines = Deadlines(asyncio.get_running_loop())
        self._exit, self._current, self._deferred, self._stopping = exit_reason, current, set(), []
        self._deadlines = deadlines
        self._mailbox = send
        try:
            task_status.started()
            reason = await self._serve(receive, current)
            return reason
        except BaseException as exc:
            reason = _exit_reason(exc)
            raise
        finally:
            # Fail every waiting caller before anything else can block: they get it "at once".
            exit_reason.append(reason)  # read by callers waiting for room in a full mailbox
            if self._mailbox is send:
                self._mailbox = None
                self._deadlines = None
            self._fail_callers(send, receive, current, reason)
            deadlines.close()
            await self._run_terminate(reason)

    def _fail_callers(
        self,
        send: MemoryObjectSendStream[Envelope],
        receive: MemoryObjectReceiveStream[Envelope],
        current: list[Caller],
        reason: ExitReason,
    ) -> None:
        send.close()
        for call in (*current, *self._deferred):
            fail(call, reason)
        self._deferred.clear()
        while True:
            try:
                envelope = receive.receive_nowait()
            except (anyio.WouldBlock, anyio.EndOfStream):
                break
            if type(envelope) is Caller:
                fail(envelope, reason)
        receive.close()

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
        self, receive: MemoryObjectReceiveStream[Envelope], current: list[Caller]
    ) -> ExitReason:
        """Serve the mailbox until ``stop()``; the reason of that normal exit."""
        stopping = self._stopping
        await self.handle_continue()
        if stopping:
            return self._stopped(stopping)
        if self.idle_timeout is None:
            async for envelope in receive:
                await self._dispatch(envelope, current)
                if stopping:
                    return self._stopped(stopping)
        else:
            while True:
                await self._dispatch(await self._next_or_idle(receive), current)
                if stopping:
                    return self._stopped(stopping)
        return "shutdown"  # the mailbox closed: only when the actor is being stopped

    async def _next_or_idle(self, receive: MemoryObjectReceiveStream[Envelope]) -> Envelope:
        """The next message; ``handle_idle`` runs for each ``idle_timeout`` without one."""
        while True:
            try:
                return receive.receive_nowait()
            except anyio.WouldBlock:
                pass
            with anyio.move_on_after(self.idle_timeout):
                return await receive.receive()
            await self.handle_idle()
            if self._stopping:
                return None

    async def _dispatch(self, envelope: Envelope, current: list[Caller]) -> None:
        kind = type(envelope)
        if kind is Caller:
            assert isinstance(envelope, Caller)
            current.append(envelope)
            result = await self.handle_call(envelope.msg)
            if current:  # else deferred: the reply comes from self.reply()
                current.pop()
                future = envelope.future
                if not future.done():  # else: the caller timed out or left; drop the reply
                    future.set_result(result)
        elif kind is Cast:
            assert isinstance(envelope, Cast)
            await self.handle_cast(envelope.msg)
        elif kind is Info:
            assert isinstance(envelope, Info)
            await self.handle_info(envelope.msg)

    @staticmethod
    def _stopped(stopping: list[ExitReason]) -> ExitReason:
        reason = stopping[0]
        if isinstance(reason, BaseException):
            raise reason
        return reason

    # ------------------------------------------------------------------ client API

    async def call(self, msg: Any, timeout: float | None = 5.0) -> Any:  # noqa: ASYNC109
        """Send ``msg`` to ``handle_call`` and wait for the reply (see the module docstring)."""
        if timeout is not None and timeout != timeout:
            raise ArgumentError(f"call timeout must be seconds or None, got {timeout!r}")
        if SERVING.get() is self:
            raise CallingSelf(repr(self))
        mailbox, deadlines = self._mailbox, self._deadlines
        if mailbox is None or deadlines is None:
            raise NoProc(repr(self))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        envelope = Caller(msg, future)
        deadline = None if timeout is None else loop.time() + timeout
        try:
            mailbox.send_nowait(envelope)
        except anyio.WouldBlock:
            await self._wait_for_room(mailbox, envelope, timeout)
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

    async def _wait_for_room(
        self,
        mailbox: MemoryObjectSendStream[Envelope],
        envelope: Caller,
        timeout: float | None,  # noqa: ASYNC109
    ) -> None:
        exit_reason = self._exit  # of the incarnation that owns ``mailbox``
        try:
            with anyio.fail_after(timeout):
                await mailbox.send(envelope)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            # The actor exited while we waited for room: as for a queued caller.
            reason = exit_reason[0] if exit_reason else "shutdown"
            raise exited(reason) from (reason if isinstance(reason, BaseException) else None)

    def cast(self, msg: Any) -> None:
        """Queue ``msg`` for ``handle_cast`` without waiting; raises if it cannot be queued."""
        self._post(Cast(msg))

    def send(self, msg: Any) -> None:
        """Queue ``msg`` for ``handle_info`` without waiting; raises if it cannot be queued."""
        self._post(Info(msg))

    def _post(self, envelope: Cast) -> None:
        mailbox = self._mailbox
        if mailbox is None:
            raise NoProc(repr(self))
        try:
            mailbox.send_nowait(envelope)
        except anyio.WouldBlock:
            raise MailboxFull(repr(self), self.mailbox_size) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise NoProc(repr(self)) from None


def _exit_reason(exc: BaseException) -> ExitReason:
    """Why an incarnation ended when ``exc`` left it: cancellation is a ``"shutdown"``."""
    return "shutdown" if isinstance(exc, anyio.get_cancelled_exc_class()) else exc
