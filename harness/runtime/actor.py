"""Actor: a GenServer-style base class with a bounded mailbox.

Subclass it, override ``handle_call`` (and optionally ``init``, ``handle_cast``,
``terminate``), and run it under a :class:`~harness.runtime.Supervisor` through
``actor.child_spec(id=...)``. Messages are handled one at a time, in arrival order, so the
actor's state needs no locks.

Semantics (the WHY: a caller must never hang on an actor that is gone):

- ``await actor.call(msg, timeout=5.0)`` returns ``handle_call``'s result. If the actor is not
  running it raises ``NoProc`` at once; if the actor exits (crash or shutdown) before replying,
  the caller gets ``ActorExited`` at once, and so does every caller still queued in the mailbox.
  After ``timeout`` seconds it raises ``TimeoutError``; the call stays in the mailbox and is
  still handled (as in OTP) but its late reply is dropped. On a full mailbox ``call`` waits for
  room (within the same timeout).
- ``actor.cast(msg)`` is synchronous and never blocks: it raises ``NoProc`` if the actor is not
  running and ``MailboxFull`` if the mailbox is full. A cast is never silently dropped.
- An exception in ``handle_call``/``handle_cast`` crashes the actor; its supervisor decides what
  follows. ``terminate(reason)`` runs once each time the actor stops (``reason`` is the
  exception, or ``"shutdown"`` when its supervisor stopped it); not when ``init`` failed.
- The same instance is reused across restarts: a restart runs ``init`` again on it, so ``init``
  should (re)set the state. One instance should be the child of one supervisor only.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar, TypeAlias

import anyio
from anyio.abc import TaskStatus
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from harness.runtime.errors import ActorExited, MailboxFull, NoProc
from harness.runtime.supervisor import ChildSpec, Restart, Shutdown

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


def _fail(call: _Call, reason: ExitReason) -> None:
    if not call.future.done():
        error = ActorExited(reason)
        if isinstance(reason, BaseException):
            error.__cause__ = reason
        call.future.set_exception(error)


class Actor:
    """GenServer-style base class; subclass and override the callbacks.

    ``mailbox_size`` (class attribute) bounds the mailbox; override it in a subclass.
    """

    mailbox_size: ClassVar[int] = 1024

    def __init__(self) -> None:
        self._mailbox: MemoryObjectSendStream[_Envelope] | None = None

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
        """Clean up when the actor stops; runs shielded, bounded by the child's shutdown."""

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
        """A ChildSpec that runs this actor under a Supervisor (id defaults to the class name)."""
        return ChildSpec(id or type(self).__name__, self.run, restart=restart, shutdown=shutdown)

    async def run(self, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the actor: ``init``, signal ready, then serve the mailbox until stopped."""
        await self.init()
        send, receive = anyio.create_memory_object_stream[_Envelope](self.mailbox_size)
        current: list[_Call] = []  # the call being handled, if any
        reason: ExitReason = "shutdown"
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
            if self._mailbox is send:
                self._mailbox = None
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
            with anyio.CancelScope(shield=True):
                try:
                    await self.terminate(reason)
                except Exception:
                    logger.exception("terminate_error actor=%s", type(self).__name__)

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
        mailbox = self._mailbox
        if mailbox is None:
            raise NoProc(repr(self))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        envelope = _Call(msg, future)
        deadline = None if timeout is None else loop.time() + timeout
        try:
            mailbox.send_nowait(envelope)
        except anyio.WouldBlock:
            try:
                with anyio.fail_after(timeout):
                    await mailbox.send(envelope)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                raise NoProc(repr(self)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise NoProc(repr(self)) from None
        if timeout is None or deadline is None:
            return await future
        handle = loop.call_at(deadline, _expire, future, timeout)
        try:
            return await future
        except BaseException:
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved: we are leaving for another reason
            raise
        finally:
            handle.cancel()

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
