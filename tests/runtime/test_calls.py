"""Actor.call: calling self fails at once; timeouts share one timer; full mailboxes and NaN."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.errors import HarnessError
from harness.runtime import (
    Actor,
    ActorError,
    ActorExited,
    CallingSelf,
    ChildSpec,
    NoProc,
    Supervisor,
)


class Selfish(Actor):
    """Calls itself in the ways a real actor might, on request."""

    def __init__(self) -> None:
        super().__init__()
        self.errors: list[BaseException] = []
        self.casts: list[Any] = []

    async def handle_call(self, msg: Any) -> Any:
        if msg == "self":
            return await self.call("inner", timeout=None)  # would wait forever
        if msg == "helper":
            result: list[Any] = []

            async def helper() -> None:
                result.append(await self.call("inner", timeout=None))

            async with anyio.create_task_group() as tg:
                tg.start_soon(helper)  # a task started inside the callback: same context
            return result
        if msg == "guarded":
            try:
                await self.call("inner")
            except CallingSelf as exc:
                self.errors.append(exc)
            self.cast("to myself")  # a cast to self is fine
            return "survived"
        return msg

    async def handle_cast(self, msg: Any) -> None:
        self.casts.append(msg)


async def test_an_actor_calling_itself_fails_at_once_instead_of_deadlocking() -> None:
    actor = Selfish()
    with anyio.fail_after(5):  # timeout=None inside: only CallingSelf can end this call
        async with Supervisor([actor.child_spec("selfish", restart="temporary")]):
            with pytest.raises(ActorExited) as info:
                await actor.call("self", timeout=None)
            assert isinstance(info.value.reason, CallingSelf)


async def test_a_helper_task_inside_a_callback_is_recognised_too() -> None:
    actor = Selfish()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec("selfish", restart="temporary")]):
            with pytest.raises(ActorExited) as info:
                await actor.call("helper", timeout=None)
            reason = info.value.reason
            assert isinstance(reason, BaseExceptionGroup)
            assert reason.subgroup(CallingSelf) is not None


async def test_calling_self_is_typed_and_catchable_and_other_callers_are_unaffected() -> None:
    actor = Selfish()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec("selfish")]):
            assert await actor.call("guarded") == "survived"
            assert await actor.call("ping") == "ping"  # an outside caller: not self
            assert actor.casts == ["to myself"]
    [error] = actor.errors
    assert isinstance(error, ActorError) and isinstance(error, HarnessError)
    assert isinstance(error, RuntimeError)
    assert "called itself" in str(error)


async def test_a_child_the_actor_starts_through_its_supervisor_may_call_it() -> None:
    outcomes: list[Any] = []

    class Spawner(Actor):
        async def handle_call(self, msg: Any) -> Any:
            if msg == "spawn":

                async def child(task_status: Any) -> None:
                    task_status.started()
                    try:
                        outcomes.append(await actor.call("ping"))
                    except Exception as exc:
                        outcomes.append(exc)
                    done.set()
                    await anyio.sleep_forever()

                await supervisor.start_child(ChildSpec("child", child))  # a separate process
                return "spawned"
            return msg

    actor, done = Spawner(), anyio.Event()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec("spawner")]) as supervisor:
            assert await actor.call("spawn") == "spawned"
            await done.wait()
    assert outcomes == ["ping"]


class Slow(Actor):
    async def handle_call(self, msg: Any) -> Any:
        if isinstance(msg, float):
            await anyio.sleep(msg)
        return msg


async def test_timeouts_of_mixed_lengths_each_fire_and_late_replies_are_dropped() -> None:
    actor = Slow()
    with anyio.fail_after(10):
        async with Supervisor([actor.child_spec("slow")]):
            outcomes: dict[float, Any] = {}

            async def caller(timeout: float) -> None:  # noqa: ASYNC109
                try:
                    outcomes[timeout] = await actor.call(0.3, timeout=timeout)
                except TimeoutError as exc:
                    outcomes[timeout] = exc

            async with anyio.create_task_group() as tg:
                # A long deadline first, then shorter ones: the shared timer must re-arm
                # earlier, and every caller must get its own outcome.
                for timeout in (5.0, 0.05, 0.02, 3.0):
                    tg.start_soon(caller, timeout)
                    await anyio.lowlevel.checkpoint()
            assert isinstance(outcomes[0.02], TimeoutError)
            assert isinstance(outcomes[0.05], TimeoutError)
            # Queued behind the timed-out calls (still handled, as in OTP, replies dropped).
            assert outcomes[5.0] == 0.3 and outcomes[3.0] == 0.3
            assert await actor.call("after") == "after"


async def test_many_answered_calls_leave_the_deadline_heap_bounded() -> None:
    actor = Slow()
    with anyio.fail_after(10):
        async with Supervisor([actor.child_spec("slow")]):
            for i in range(2_000):
                assert await actor.call(i) == i
            deadlines = actor._deadlines
            assert deadlines is not None
            assert len(deadlines._heap) <= 2 * deadlines._pending + 65
            assert deadlines._pending == 0


async def test_a_cancelled_caller_leaves_no_deadline_to_fire() -> None:
    actor = Slow()
    loop = asyncio.get_running_loop()
    unretrieved: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    with anyio.fail_after(10):
        async with Supervisor([actor.child_spec("slow")]):
            with anyio.move_on_after(0.02):
                await actor.call(0.2, timeout=0.1)  # cancelled from outside first
            await anyio.sleep(0.3)  # past the call's own deadline and the late reply
            assert await actor.call("after") == "after"
    assert unretrieved == []


async def test_callers_queued_at_exit_get_actor_exited_and_later_ones_no_proc() -> None:
    class Gate(Actor):
        def __init__(self) -> None:
            super().__init__()
            self.entered = anyio.Event()

        async def handle_call(self, msg: Any) -> Any:
            self.entered.set()
            await anyio.sleep_forever()

    actor = Gate()
    errors: list[BaseException] = []

    async def caller() -> None:
        try:
            await actor.call("x", timeout=30)
        except ActorExited as exc:
            errors.append(exc)

    with anyio.fail_after(10):
        async with (
            anyio.create_task_group() as tg,
            Supervisor([actor.child_spec("gate", shutdown=1.0)]),
        ):
            for _ in range(3):
                tg.start_soon(caller)
            await actor.entered.wait()
            await anyio.sleep(0.01)
        assert len(errors) == 3  # the one being handled and the two queued, at once
        with pytest.raises(NoProc):
            await actor.call("x")


async def test_a_nan_call_timeout_is_refused() -> None:
    with anyio.fail_after(5):
        actor = Slow()
        async with Supervisor([actor.child_spec("a")]):
            with pytest.raises(ValueError, match="nan"):
                await actor.call("x", timeout=math.nan)


class Tiny(Actor):
    mailbox_size = 1

    def __init__(self) -> None:
        super().__init__()
        self.entered = anyio.Event()
        self.gate = anyio.Event()

    async def handle_call(self, msg: Any) -> Any:
        if msg == "boom":
            self.entered.set()
            await self.gate.wait()
            raise RuntimeError("mid-call")
        return msg


async def test_callers_waiting_for_room_get_actor_exited_when_the_actor_crashes() -> None:
    with anyio.fail_after(5):
        actor = Tiny()
        results: dict[str, BaseException] = {}

        async def caller(msg: str) -> None:
            try:
                await actor.call(msg, timeout=4)
            except Exception as exc:
                results[msg] = exc

        spec = actor.child_spec("a", restart="temporary")
        async with Supervisor([spec]), anyio.create_task_group() as tg:
            tg.start_soon(caller, "boom")
            await actor.entered.wait()
            for name in ("queued", "waiting-1", "waiting-2"):  # 1 fits, 2 wait for room
                tg.start_soon(caller, name)
            await anyio.wait_all_tasks_blocked()
            actor.gate.set()
        assert sorted(results) == ["boom", "queued", "waiting-1", "waiting-2"]
        for error in results.values():
            assert isinstance(error, ActorExited), error
            assert isinstance(error.reason, RuntimeError)
