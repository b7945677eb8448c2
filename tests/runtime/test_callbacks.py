"""Actor callbacks beyond call/cast: handle_continue, handle_info/send, defer/reply, idle, stop."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.errors import ArgumentError, StateError
from harness.runtime import (
    Actor,
    ActorExited,
    Caller,
    MailboxFull,
    NoProc,
    Supervisor,
    monitor,
)
from tests.runtime.support import until


class Ordered(Actor):
    async def init(self) -> None:
        self.log: list[str] = ["init"]

    async def handle_continue(self) -> None:
        self.log.append("continue")
        await anyio.sleep(0.01)  # the first message, already queued, waits for this

    async def handle_call(self, msg: Any) -> Any:
        self.log.append(f"call {msg}")
        return list(self.log)

    async def handle_info(self, msg: Any) -> None:
        self.log.append(f"info {msg}")


async def test_handle_continue_runs_after_init_and_before_the_first_message() -> None:
    actor = Ordered()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a")]):
            assert actor.running  # already started while handle_continue runs
            actor.send("x")
            assert await actor.call(1) == ["init", "continue", "info x", "call 1"]


async def test_send_never_blocks_and_is_never_dropped() -> None:
    class Tiny(Ordered):
        mailbox_size = 1

        async def handle_continue(self) -> None:
            self.gate = anyio.Event()
            await self.gate.wait()

    actor = Tiny()
    with pytest.raises(NoProc):
        actor.send("early")
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a")]):
            actor.send(1)
            with pytest.raises(MailboxFull):
                actor.send(2)
            actor.gate.set()
            assert await actor.call("done") == ["init", "info 1", "call done"]


class Deferring(Actor):
    async def init(self) -> None:
        self.waiting: list[Caller] = []

    async def handle_call(self, msg: Any) -> Any:
        if msg == "wait":
            self.waiting.append(self.defer())
            return "not the reply"
        if msg == "release":
            for caller in self.waiting:
                self.reply(caller, "released")
            self.waiting.clear()
            return "ok"
        if msg == "crash":
            raise RuntimeError("crash")
        return msg


async def test_a_deferred_caller_waits_while_the_actor_handles_other_messages() -> None:
    actor = Deferring()
    results: list[Any] = []
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a")]), anyio.create_task_group() as group:

            async def wait() -> None:
                results.append(await actor.call("wait"))

            group.start_soon(wait)
            group.start_soon(wait)
            await until(lambda: len(actor.waiting) == 2)
            assert await actor.call("echo") == "echo"  # served meanwhile
            assert await actor.call("release") == "ok"
    assert results == ["released", "released"]


async def test_a_deferred_caller_gets_actor_exited_if_the_actor_dies_first() -> None:
    actor = Deferring()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a", restart="temporary")]):
            async with anyio.create_task_group() as group:
                errors: list[BaseException] = []

                async def wait() -> None:
                    try:
                        await actor.call("wait")
                    except ActorExited as exc:
                        errors.append(exc)

                group.start_soon(wait)
                await until(lambda: bool(actor.waiting))
                with pytest.raises(ActorExited):
                    await actor.call("crash")
            assert len(errors) == 1 and isinstance(errors[0].__cause__, RuntimeError)


async def test_a_deferred_call_times_out_and_a_late_reply_is_dropped() -> None:
    actor = Deferring()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a")]):
            with pytest.raises(TimeoutError):
                await actor.call("wait", timeout=0.05)
            assert await actor.call("release") == "ok"  # replying to a gone caller: fine


async def test_defer_outside_handle_call_is_refused() -> None:
    with pytest.raises(StateError):
        Deferring().defer()


async def test_handle_idle_runs_after_idle_timeout_without_messages() -> None:
    class Idle(Actor):
        idle_timeout = 0.02

        async def init(self) -> None:
            self.idles = 0
            self.idled = anyio.Event()

        async def handle_call(self, msg: Any) -> Any:
            return self.idles

        async def handle_idle(self) -> None:
            self.idles += 1
            if self.idles == 3:
                self.idled.set()

    actor = Idle()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a")]):
            await actor.idled.wait()
            assert await actor.call("count") >= 3


async def test_stop_ends_the_actor_after_the_current_message() -> None:
    class Stopper(Actor):
        async def init(self) -> None:
            self.reasons: list[Any] = []

        async def handle_call(self, msg: Any) -> Any:
            self.stop(msg)
            return "bye"

        async def terminate(self, reason: Any) -> None:
            self.reasons.append(reason)

    actor = Stopper()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a", restart="transient")]):
            watch = monitor(actor)
            assert await actor.call("normal") == "bye"
            assert await watch.down() == "normal"
            assert actor.reasons == ["normal"] and not actor.running
    with pytest.raises(ArgumentError):
        Stopper().stop("later")


async def test_stop_with_an_exception_is_a_crash_and_restarts() -> None:
    class Stopper(Actor):
        async def handle_cast(self, msg: Any) -> None:
            self.stop(RuntimeError("giving up"))

        async def handle_call(self, msg: Any) -> Any:
            return msg

    actor = Stopper()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a", restart="transient")]):
            watch = monitor(actor)
            actor.cast("x")
            assert isinstance(await watch.down(), RuntimeError)
            await until(lambda: bool(actor.running))
            assert await actor.call(1) == 1  # restarted: it was abnormal


async def test_stop_from_outside_wakes_an_idle_actor() -> None:
    class Quiet(Actor):
        async def handle_call(self, msg: Any) -> Any:
            return msg

    actor = Quiet()
    with anyio.fail_after(5):
        async with Supervisor([actor.child_spec(id="a", restart="temporary")]):
            watch = monitor(actor)
            actor.stop()
            assert await watch.down() == "normal"
