"""Actor: call/cast semantics, crashes, timeouts, and life under a supervisor."""

from __future__ import annotations

import gc
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.runtime import (
    Actor,
    ActorExited,
    ChildInfo,
    FailedToStartChild,
    MailboxFull,
    NoProc,
    Supervisor,
)


class Boom(Exception):
    pass


class Counter(Actor):
    """A small stateful actor whose handlers the tests can hold at a gate."""

    def __init__(self) -> None:
        super().__init__()
        self.inits = 0
        self.terminations: list[Any] = []
        self.gate = anyio.Event()
        self.entered = anyio.Event()
        self.handled: list[Any] = []

    async def init(self) -> None:
        self.inits += 1
        self.count = 0

    async def handle_call(self, msg: Any) -> Any:
        self.handled.append(msg)
        if msg == "get":
            return self.count
        if msg == "wait":
            self.entered.set()
            await self.gate.wait()
            return "waited"
        if msg == "crash":
            raise Boom("call")
        if msg == "wait-then-crash":
            self.entered.set()
            await self.gate.wait()
            raise Boom("mid-call")
        return ("echo", msg)

    async def handle_cast(self, msg: Any) -> None:
        if msg == "crash":
            raise Boom("cast")
        if msg == "block":
            self.entered.set()
            await self.gate.wait()
            return
        self.count += msg

    async def terminate(self, reason: Any) -> None:
        self.terminations.append(reason)


async def test_call_and_cast_in_order() -> None:
    with anyio.fail_after(5):
        actor = Counter()
        assert not actor.running
        async with Supervisor([actor.child_spec("counter")]):
            assert actor.running
            actor.cast(2)
            actor.cast(3)
            assert await actor.call("get") == 5  # casts queued before the call run first
            assert await actor.call("hello") == ("echo", "hello")
            assert actor.inits == 1
        assert actor.terminations == ["shutdown"]
        assert not actor.running


async def test_crash_mid_call_fails_the_caller_at_once_and_every_queued_caller() -> None:
    with anyio.fail_after(5):
        actor = Counter()
        results: dict[int, ActorExited] = {}

        async def caller(i: int, msg: Any) -> None:
            try:
                await actor.call(msg, timeout=30)  # far beyond the test's own bound
            except ActorExited as exc:
                results[i] = exc

        async with (
            Supervisor([actor.child_spec(restart="temporary")]),
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(caller, 0, "wait-then-crash")
            await actor.entered.wait()
            for i in range(1, 4):
                tg.start_soon(caller, i, "get")
            await anyio.wait_all_tasks_blocked()
            actor.gate.set()
        assert sorted(results) == [0, 1, 2, 3]
        assert all(isinstance(e.reason, Boom) for e in results.values())
        assert isinstance(results[0].__cause__, Boom)
        assert actor.handled == ["wait-then-crash"]  # queued calls were failed, not handled
        assert len(actor.terminations) == 1 and isinstance(actor.terminations[0], Boom)


async def test_exception_in_handle_call_crashes_the_actor(supervision_log: Any) -> None:
    with anyio.fail_after(5):
        actor = Counter()
        async with Supervisor([actor.child_spec(restart="temporary")]) as sup:
            with pytest.raises(ActorExited) as info:
                await actor.call("crash")
            assert isinstance(info.value.reason, Boom)
            await supervision_log.wait("child_terminated", "Counter")
            assert sup.which_children() == []  # temporary: forgotten after its exit
            with pytest.raises(NoProc):
                await actor.call("get")


async def test_not_running_raises_noproc_at_once() -> None:
    with anyio.fail_after(1):
        actor = Counter()
        with pytest.raises(NoProc, match="not running"):
            await actor.call("get")
        with pytest.raises(NoProc):
            actor.cast(1)
        async with Supervisor([actor.child_spec()]) as sup:
            await sup.terminate_child("Counter")
            with pytest.raises(NoProc):
                await actor.call("get")
        with pytest.raises(NoProc):
            await actor.call("get")


async def test_timeout_raises_and_the_late_reply_is_dropped() -> None:
    with anyio.fail_after(5):
        actor = Counter()
        async with Supervisor([actor.child_spec()]):
            with pytest.raises(TimeoutError):
                await actor.call("wait", timeout=0.05)
            actor.gate.set()
            # the late "waited" reply went nowhere: the next call gets its own answer
            assert await actor.call("get") == 0
            assert actor.handled == ["wait", "get"]  # the timed-out call was still handled
        gc.collect()


async def test_a_restarted_actor_serves_calls_again(supervision_log: Any) -> None:
    with anyio.fail_after(5):
        actor = Counter()
        async with Supervisor([actor.child_spec("counter")]) as sup:
            actor.cast(7)
            assert await actor.call("get") == 7
            actor.cast("crash")
            await supervision_log.wait("child_started", "counter", 2)
            assert sup.which_children() == [ChildInfo("counter", "running", 1)]
            # the same instance, re-initialised by init()
            assert await actor.call("get") == 0
            assert actor.inits == 2
            assert len(actor.terminations) == 1 and isinstance(actor.terminations[0], Boom)
        assert actor.terminations[1:] == ["shutdown"]


async def test_shutdown_mid_call_fails_the_caller_with_shutdown() -> None:
    with anyio.fail_after(5):
        actor = Counter()
        async with Supervisor([actor.child_spec("c")]) as sup:
            async with anyio.create_task_group() as tg:

                async def stop_it() -> None:
                    await actor.entered.wait()
                    await sup.terminate_child("c")

                tg.start_soon(stop_it)
                with pytest.raises(ActorExited) as info:
                    await actor.call("wait")
            assert info.value.reason == "shutdown"


async def test_full_mailbox_cast_raises_and_call_waits_for_room() -> None:
    class Small(Counter):
        mailbox_size = 2

    with anyio.fail_after(5):
        actor = Small()
        async with Supervisor([actor.child_spec()]):
            actor.cast("block")
            await actor.entered.wait()
            actor.cast(1)
            actor.cast(1)
            with pytest.raises(MailboxFull, match="not delivered"):
                actor.cast(1)
            with pytest.raises(TimeoutError):
                await actor.call("get", timeout=0.05)
            actor.gate.set()
            assert await actor.call("get") == 2  # the refused cast was never delivered


async def test_default_handle_call_crashes_with_not_implemented() -> None:
    class Quiet(Actor):
        pass

    with anyio.fail_after(5):
        actor = Quiet()
        spec = actor.child_spec(restart="temporary")
        assert spec.id == "Quiet"
        async with Supervisor([spec]):
            actor.cast("ignored")  # handle_cast defaults to a no-op
            with pytest.raises(ActorExited) as info:
                await actor.call("anything")
            assert isinstance(info.value.reason, NotImplementedError)


async def test_init_failure_is_a_start_failure_and_skips_terminate() -> None:
    class Broken(Counter):
        async def init(self) -> None:
            raise Boom("init")

    with anyio.fail_after(5):
        actor = Broken()
        with pytest.raises(FailedToStartChild) as info:
            async with Supervisor([actor.child_spec("b")]):
                pass
        assert isinstance(info.value.cause, Boom)
        assert actor.terminations == []
        assert not actor.running


async def test_terminate_errors_are_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    class Messy(Counter):
        async def terminate(self, reason: Any) -> None:
            raise Boom("terminate")

    caplog.set_level(logging.ERROR, logger="harness.runtime")
    with anyio.fail_after(5):
        actor = Messy()
        async with Supervisor([actor.child_spec("m")]):
            assert await actor.call("get") == 0
        assert any("terminate_error" in r.getMessage() for r in caplog.records)


class CrashingCleanup(Actor):
    """Crashes on any cast; its terminate after a crash is slow as the test wants."""

    def __init__(self, cleanup: Callable[[], Awaitable[None]]) -> None:
        super().__init__()
        self.cleanup = cleanup
        self.finished: list[Any] = []

    async def handle_call(self, msg: Any) -> Any:
        return msg

    async def handle_cast(self, msg: Any) -> None:
        raise Boom("cast")

    async def terminate(self, reason: Any) -> None:
        if isinstance(reason, Boom):
            await self.cleanup()
            self.finished.append(reason)


async def test_terminate_after_a_crash_is_cut_off_after_the_shutdown(
    supervision_log: Any,
) -> None:
    with anyio.fail_after(3):
        actor = CrashingCleanup(anyio.sleep_forever)
        async with Supervisor([actor.child_spec("a", shutdown=0.2)]):
            actor.cast("crash")
            await supervision_log.wait("child_started", "a", 2)  # restarted meanwhile
            assert supervision_log.count("terminate_timeout", "a") == 1
            assert await actor.call("ping") == "ping"
        assert actor.finished == []


async def test_a_brutal_actor_terminate_does_not_run_its_awaits(supervision_log: Any) -> None:
    with anyio.fail_after(3):
        actor = CrashingCleanup(lambda: anyio.lowlevel.checkpoint())
        async with Supervisor([actor.child_spec("a", shutdown="brutal")]):
            actor.cast("crash")
            await supervision_log.wait("child_started", "a", 2)
        assert actor.finished == []
        assert supervision_log.count("terminate_timeout", "a") == 1


async def test_an_unbounded_actor_terminate_is_waited_for(supervision_log: Any) -> None:
    with anyio.fail_after(3):
        cleaning = anyio.Event()
        release = anyio.Event()

        async def cleanup() -> None:
            cleaning.set()
            await release.wait()

        actor = CrashingCleanup(cleanup)
        async with Supervisor([actor.child_spec("a", shutdown=None)]):
            actor.cast("crash")
            await cleaning.wait()
            release.set()
            await supervision_log.wait("child_started", "a", 2)
        assert len(actor.finished) == 1
        assert supervision_log.count("terminate_timeout", "a") == 0
