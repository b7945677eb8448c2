"""TaskSupervisor.start_nolink: a task's crash never crashes its caller."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.runtime import Actor, ActorExited, DynamicSupervisor, TaskSupervisor


async def add(a: int, b: int) -> int:
    await anyio.lowlevel.checkpoint()
    return a + b


async def explode() -> None:
    await anyio.lowlevel.checkpoint()
    raise LookupError("tool not found")


async def test_result_is_the_return_value_or_the_exception() -> None:
    with anyio.fail_after(5):
        async with TaskSupervisor() as tasks:
            ok = await tasks.start_nolink(add, 2, 3)
            bad = await tasks.start_nolink(explode)
            assert await ok.result() == 5
            with pytest.raises(LookupError, match="tool not found"):
                await bad.result()
            assert ok.done and bad.done


async def test_result_times_out_and_the_task_keeps_running() -> None:
    with anyio.fail_after(5):
        async with TaskSupervisor() as tasks:
            ref = await tasks.start_nolink(anyio.sleep, 0.2)
            with pytest.raises(TimeoutError):
                await ref.result(timeout=0.01)
            assert await ref.result(timeout=5) is None


async def test_a_crashing_task_leaves_its_session_running() -> None:
    class Session(Actor):
        def __init__(self, tasks: TaskSupervisor) -> None:
            super().__init__()
            self.tasks = tasks

        async def handle_call(self, msg: Any) -> Any:
            ref = await self.tasks.start_nolink(explode)
            try:
                await ref.result()
            except LookupError as exc:
                return f"tool failed: {exc}"

    with anyio.fail_after(5):
        async with TaskSupervisor() as tasks, DynamicSupervisor() as sessions:
            session = Session(tasks)
            ref = await sessions.start_child(session.child_spec(id="s"))
            assert await session.call("turn") == "tool failed: tool not found"
            assert session.running and ref.restarts == 0


async def test_leaving_cancels_running_tasks_bounded_by_shutdown() -> None:
    release = anyio.Event()

    async def stubborn() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await release.wait()

    with anyio.fail_after(5):
        async with TaskSupervisor(shutdown=0.1) as tasks:
            forever = await tasks.start_nolink(anyio.sleep_forever)
            ignoring = await tasks.start_nolink(stubborn)
        with pytest.raises(ActorExited) as info:
            await forever.result()
        assert info.value.reason == "shutdown"
        assert not ignoring.done  # abandoned after its shutdown
        release.set()
        with pytest.raises(ActorExited, match="task exited"):
            await ignoring.result()
