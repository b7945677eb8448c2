"""TaskSupervisor: run a function whose crash never crashes the caller.

A session's model or tool call, say: if it raises, the session reads the error from the
``TaskRef`` and keeps running::

    import anyio
    from harness.runtime import TaskSupervisor

    async def flaky_tool(name: str) -> str:
        raise RuntimeError(f"{name} failed")

    async def main() -> None:
        async with TaskSupervisor(shutdown=1.0) as tasks:
            ref = await tasks.start_nolink(flaky_tool, "grep")
            try:
                await ref.result(timeout=5.0)
            except RuntimeError as exc:
                print("the tool crashed:", exc)   # the caller is untouched

    anyio.run(main)

``result`` raises the function's exception, ``TimeoutError`` after ``timeout``, or
``ActorExited("shutdown")`` if the TaskSupervisor stopped the task first. Leaving the
``async with`` cancels the tasks still running, each bounded by ``shutdown`` seconds.
"""

# A TaskSupervisor is a DynamicSupervisor of temporary children (never restarted, dropped when
# they end): the same table, policy and life cycle, no code of its own for any of them.

from __future__ import annotations

from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

import anyio
from anyio.abc import TaskStatus

from harness.runtime._child import ChildSpec, Shutdown
from harness.runtime._dynamic import DynamicSupervisor
from harness.runtime._errors import ActorExited

__all__ = ["TaskRef", "TaskSupervisor"]

T = TypeVar("T")


class TaskRef(Generic[T]):
    """The outcome of one ``start_nolink`` task, once it is there."""

    __slots__ = ("_done", "_error", "_value", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._done = anyio.Event()
        self._error: BaseException | None = None
        self._value: Any = None

    def __repr__(self) -> str:
        state = "running" if not self._done.is_set() else "failed" if self._error else "done"
        return f"<TaskRef {self.name!r} {state}>"

    @property
    def done(self) -> bool:
        return self._done.is_set()

    async def result(self, timeout: float | None = 5.0) -> T:  # noqa: ASYNC109
        """The function's return value; its exception, or ``TimeoutError`` after ``timeout``."""
        with anyio.fail_after(timeout):
            await self._done.wait()
        if self._error is not None:
            raise self._error
        value: T = self._value
        return value

    async def _run(
        self, fn: Callable[..., Awaitable[T]], args: tuple[Any, ...], task_status: TaskStatus[None]
    ) -> None:
        task_status.started()
        try:
            self._value = await fn(*args)
        except anyio.get_cancelled_exc_class():
            self._error = ActorExited("shutdown", "task")
            raise
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            self._done.set()


class TaskSupervisor:
    """Supervised, unlinked tasks; an async context manager."""

    def __init__(self, *, shutdown: Shutdown = 5.0) -> None:
        self.shutdown = shutdown
        ChildSpec("check", _never, shutdown=shutdown)  # refuses a bad shutdown here
        # Tasks are never restarted, so the intensity never applies.
        self._tasks = DynamicSupervisor()
        self._tasks._table.name = "task_supervisor"

    def __repr__(self) -> str:
        return f"<TaskSupervisor tasks={self._tasks.count_children()['active']}>"

    async def start_nolink(self, fn: Callable[..., Awaitable[T]], *args: Any) -> TaskRef[T]:
        """Run ``fn(*args)`` in a supervised task; returns once it runs."""
        ref: TaskRef[T] = TaskRef(getattr(fn, "__name__", "task"))

        async def start(task_status: TaskStatus[None]) -> None:
            await ref._run(fn, args, task_status)

        spec = ChildSpec(ref.name, start, restart="temporary", shutdown=self.shutdown)
        await self._tasks.start_child(spec)
        return ref

    async def __aenter__(self) -> Self:
        await self._tasks.__aenter__()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._tasks.__aexit__(exc_type, exc, tb)


async def _never(task_status: TaskStatus[None]) -> None:
    """A start function never run (the spec it is in only validates ``shutdown``)."""
