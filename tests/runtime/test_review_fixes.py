"""Regressions from the black-box review of the runtime (one test or more per finding)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.runtime import (
    Actor,
    ActorExited,
    AdminCallBeforeReady,
    ChildSpec,
    DuplicateChild,
    FailedToStartChild,
    MaxRestartsExceeded,
    Supervisor,
    SupervisorNotRunning,
)


class Boom(Exception):
    pass


async def ready_then_forever(task_status: Any) -> None:
    task_status.started()
    await anyio.sleep_forever()


# --------------------------------------------------------------------------- 1: escalation


class Hang(Actor):
    """An actor whose calls never reply."""

    async def handle_call(self, msg: Any) -> Any:
        await anyio.sleep_forever()


def crash_on(event: anyio.Event) -> Callable[[Any], Awaitable[None]]:
    async def crasher(task_status: Any) -> None:
        task_status.started()
        await event.wait()
        raise Boom("crasher")

    return crasher


async def test_escalation_is_not_masked_by_a_body_awaiting_a_supervised_actor() -> None:
    with anyio.fail_after(5):
        actor = Hang()
        crash = anyio.Event()
        children = [actor.child_spec("actor"), ChildSpec("crasher", crash_on(crash))]
        with pytest.raises(MaxRestartsExceeded) as info:
            async with Supervisor(children, max_restarts=0):
                crash.set()
                await actor.call("work", timeout=None)  # pending when the supervisor gives up
        assert info.value.child_id == "crasher"
        assert isinstance(info.value.reason, Boom)


async def test_escalation_wins_over_an_error_raised_by_the_cancelled_body() -> None:
    with anyio.fail_after(5):
        crash = anyio.Event()
        with pytest.raises(MaxRestartsExceeded) as info:
            async with Supervisor([ChildSpec("crasher", crash_on(crash))], max_restarts=0):
                try:
                    crash.set()
                    await anyio.sleep_forever()
                finally:
                    raise ValueError("cleanup failed while cancelled")
        # the body's error is kept as the context, not lost
        assert isinstance(info.value.__context__, ValueError)


# --------------------------------------------------------------------------- 2: admin calls
# from children that are starting


async def test_a_ready_child_calling_start_child_during_startup_waits_for_it() -> None:
    with anyio.fail_after(5):
        worker_starts = 0
        worker_ready = anyio.Event()
        sup: Supervisor

        async def worker(task_status: Any) -> None:
            nonlocal worker_starts
            worker_starts += 1
            task_status.started()
            worker_ready.set()
            await anyio.sleep_forever()

        async def pool(task_status: Any) -> None:
            task_status.started()
            await sup.start_child(ChildSpec("w", worker))
            await anyio.sleep_forever()

        later = [ChildSpec(id, ready_then_forever) for id in ("b", "c")]
        sup = Supervisor([ChildSpec("pool", pool), *later])
        async with sup:
            await worker_ready.wait()
            assert [c.id for c in sup.which_children()] == ["pool", "b", "c", "w"]
            assert worker_starts == 1
        assert worker_starts == 1


async def test_a_child_calling_start_child_before_ready_during_startup_fails_to_start() -> None:
    with anyio.fail_after(5):
        before = {t for t in asyncio.all_tasks() if not t.done()}
        worker_starts = 0
        sup: Supervisor

        async def worker(task_status: Any) -> None:
            nonlocal worker_starts
            worker_starts += 1
            await ready_then_forever(task_status)

        async def pool(task_status: Any) -> None:
            await sup.start_child(ChildSpec("w", worker))
            await ready_then_forever(task_status)

        sup = Supervisor([ChildSpec("pool", pool)])
        with pytest.raises(FailedToStartChild) as info:
            async with sup:
                pass
        cause = info.value.cause
        assert isinstance(cause, AdminCallBeforeReady)
        assert (cause.action, cause.id) == ("start_child", "pool")
        assert "task_status.started()" in str(cause)
        assert worker_starts == 0
        await anyio.wait_all_tasks_blocked()
        assert {t for t in asyncio.all_tasks() if not t.done()} == before


@pytest.mark.parametrize(
    "action", ["start_child", "terminate_child", "restart_child", "delete_child"]
)
async def test_an_admin_call_from_an_unready_child_fails_at_once(action: str) -> None:
    with anyio.fail_after(3):
        seen: list[BaseException] = []
        sup = Supervisor([ChildSpec("other", ready_then_forever)])

        async def eager(task_status: Any) -> None:
            try:
                if action == "start_child":
                    await sup.start_child(ChildSpec("x", ready_then_forever))
                else:
                    await getattr(sup, action)("other")
            except Exception as exc:
                seen.append(exc)
                raise
            await ready_then_forever(task_status)

        async with sup:
            with pytest.raises(FailedToStartChild) as info:
                await sup.start_child(ChildSpec("eager", eager))
            assert isinstance(info.value.cause, AdminCallBeforeReady)
            assert seen == [info.value.cause]
            assert info.value.cause.action == action
            assert [(c.id, c.status) for c in sup.which_children()] == [("other", "running")]


async def test_a_child_adding_a_sibling_before_ready_on_restart_does_not_wedge() -> None:
    with anyio.fail_after(3):
        incarnations = 0
        crash = anyio.Event()
        sup: Supervisor

        async def pool(task_status: Any) -> None:
            nonlocal incarnations
            incarnations += 1
            if incarnations > 1:  # only the restarted incarnation calls too early
                await sup.start_child(ChildSpec(f"w{incarnations}", ready_then_forever))
            task_status.started()
            await crash.wait()
            raise Boom("pool")

        sup = Supervisor([ChildSpec("pool", pool)], max_restarts=1)
        with pytest.raises(MaxRestartsExceeded) as info:
            async with sup:
                crash.set()
                await anyio.sleep_forever()
        # the early call failed the restart (it did not deadlock the supervisor)
        assert isinstance(info.value.reason, AdminCallBeforeReady)
        assert incarnations == 2
        assert [c.id for c in sup.which_children()] == ["pool"]


# --------------------------------------------------------------------------- 3: stopping vs
# an admin call in flight


async def test_stopping_cancels_an_admin_call_blocked_on_a_child_that_never_gets_ready() -> None:
    with anyio.fail_after(5):
        before = {t for t in asyncio.all_tasks() if not t.done()}
        entered = anyio.Event()
        never_started = anyio.Event()
        never_stopped = anyio.Event()
        outcome: list[BaseException] = []
        sup = Supervisor([])

        async def never(task_status: Any) -> None:
            never_started.set()
            try:
                await anyio.sleep_forever()
            finally:
                never_stopped.set()

        async def adder() -> None:
            await entered.wait()
            with anyio.move_on_after(2) as safety_net:  # only fires if stopping waits for us
                try:
                    await sup.start_child(ChildSpec("never", never, shutdown=5.0))
                except SupervisorNotRunning as exc:
                    outcome.append(exc)
            assert not safety_net.cancelled_caught

        async with anyio.create_task_group() as tg:
            tg.start_soon(adder)
            async with sup:
                entered.set()
                await never_started.wait()
        assert len(outcome) == 1 and "start_child" in str(outcome[0])
        assert never_stopped.is_set()  # the half-started child was stopped
        assert sup.which_children() == []
        await anyio.wait_all_tasks_blocked()
        assert {t for t in asyncio.all_tasks() if not t.done()} == before


# --------------------------------------------------------------------------- 4: a child
# terminating itself


async def test_a_child_terminating_itself_is_not_waited_for(supervision_log: Any) -> None:
    with anyio.fail_after(5):
        events: list[str] = []
        done = anyio.Event()
        sup: Supervisor

        async def selfish(task_status: Any) -> None:
            task_status.started()
            try:
                await sup.terminate_child("me")
                events.append("returned")
                events.append(sup.which_children()[0].status)
                await anyio.sleep_forever()  # the cancellation lands here
            except anyio.get_cancelled_exc_class():
                events.append("cancelled at next await")
                raise
            finally:
                done.set()

        sup = Supervisor([ChildSpec("me", selfish, shutdown=3.0)])
        async with sup:
            with anyio.move_on_after(1):  # old behaviour: waits its own 3 s shutdown
                await done.wait()
            assert events == ["returned", "stopped", "cancelled at next await"]
            assert supervision_log.count("shutdown_error", "me") == 0
            assert supervision_log.count("child_terminated", "me") == 1
            await anyio.wait_all_tasks_blocked()
            assert [(c.id, c.status, c.restarts) for c in sup.which_children()] == [
                ("me", "stopped", 0)
            ]


# --------------------------------------------------------------------------- 5:
# KeyboardInterrupt and SystemExit


def run_through_interrupt(
    main: Callable[[], Coroutine[Any, Any, Any]], expected: type[BaseException]
) -> Any:
    """Run ``main`` on a fresh loop, expecting ``expected`` to escape the loop once.

    The loop survives it (as asyncio allows), so ``main`` then finishes its own checks.
    """
    loop = asyncio.new_event_loop()
    try:
        task: asyncio.Task[Any] = loop.create_task(main())
        with pytest.raises(expected):
            loop.run_until_complete(task)
        return loop.run_until_complete(task)
    finally:
        for leftover in asyncio.all_tasks(loop):
            leftover.cancel()
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_from_a_running_child_propagates_and_is_not_restarted(
    exc_type: type[BaseException], supervision_log: Any
) -> None:
    starts = 0

    async def kid(task_status: Any) -> None:
        nonlocal starts
        starts += 1
        task_status.started()
        await anyio.lowlevel.checkpoint()
        raise exc_type()

    async def main() -> list[Any]:
        with anyio.fail_after(5):
            sup = Supervisor([ChildSpec("k", kid)])
            async with sup:
                await supervision_log.wait("child_terminated", "k")
                await anyio.wait_all_tasks_blocked()
                return [(c.id, c.status, c.restarts) for c in sup.which_children()]

    assert run_through_interrupt(main, exc_type) == [("k", "stopped", 0)]
    assert starts == 1
    assert supervision_log.count("child_started", "k") == 1


@pytest.mark.parametrize("exc_type", [KeyboardInterrupt, SystemExit])
def test_an_interrupt_before_ready_is_not_a_failed_start(
    exc_type: type[BaseException],
) -> None:
    async def bad_start(task_status: Any) -> None:
        raise exc_type()

    async def main() -> BaseException | None:
        with anyio.fail_after(5):
            async with Supervisor([]) as sup:
                try:
                    await sup.start_child(ChildSpec("k", bad_start))
                except BaseException as exc:  # what the start_child caller sees
                    return exc
                return None

    assert isinstance(run_through_interrupt(main, exc_type), exc_type)


def test_an_interrupt_in_handle_call_fails_the_caller_and_propagates() -> None:
    class Interrupted(Actor):
        async def handle_call(self, msg: Any) -> Any:
            raise KeyboardInterrupt

    actor = Interrupted()

    async def main() -> tuple[Any, bool]:
        with anyio.fail_after(5):
            async with Supervisor([actor.child_spec("a")]):
                try:
                    await actor.call("x")
                except ActorExited as exc:
                    got: Any = exc
                await anyio.wait_all_tasks_blocked()
                return got, actor.running

    got, running = run_through_interrupt(main, KeyboardInterrupt)
    assert isinstance(got, ActorExited) and isinstance(got.reason, KeyboardInterrupt)
    assert not running  # not restarted


# --------------------------------------------------------------------------- 6: NaN


def test_a_nan_or_negative_shutdown_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        ChildSpec("s", ready_then_forever, shutdown=math.nan)
    with pytest.raises(ValueError, match="-1"):
        ChildSpec("s", ready_then_forever, shutdown=-1.0)
    with pytest.raises(ValueError, match="nan"):
        Hang().child_spec("s", shutdown=math.nan)


async def test_a_nan_call_timeout_is_refused() -> None:
    with anyio.fail_after(5):
        actor = Hang()
        async with Supervisor([actor.child_spec("a")]):
            with pytest.raises(ValueError, match="nan"):
                await actor.call("x", timeout=math.nan)


# --------------------------------------------------------------------------- 7: full mailbox


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
            raise Boom("mid-call")
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
            assert isinstance(error.reason, Boom)


# --------------------------------------------------------------------------- 8: status


async def test_an_ended_incarnation_is_not_reported_running() -> None:
    with anyio.fail_after(5):
        cleanup_started = anyio.Event()
        release = anyio.Event()
        go = anyio.Event()
        a_ready = 0

        async def slow(task_status: Any) -> None:
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                cleanup_started.set()
                with anyio.CancelScope(shield=True):
                    await release.wait()  # keeps terminate_child, and the lock, busy

        async def a(task_status: Any) -> None:
            nonlocal a_ready
            a_ready += 1
            task_status.started()
            if a_ready == 1:
                await go.wait()
                raise Boom("a")
            await anyio.sleep_forever()

        async def ends(task_status: Any) -> None:
            task_status.started()
            await go.wait()

        async def crashes(task_status: Any) -> None:
            task_status.started()
            await go.wait()
            raise Boom("crashes")

        sup = Supervisor(
            [
                ChildSpec("a", a),
                ChildSpec("trans", ends, restart="transient"),
                ChildSpec("temp", crashes, restart="temporary"),
                ChildSpec("slow", slow),
            ]
        )
        async with sup:
            async with anyio.create_task_group() as tg:
                tg.start_soon(sup.terminate_child, "slow")
                await cleanup_started.wait()
                go.set()
                await anyio.wait_all_tasks_blocked()  # a, trans, temp ended; exits not processed
                assert [(c.id, c.status) for c in sup.which_children()] == [
                    ("a", "restarting"),
                    ("trans", "stopped"),
                    ("temp", "stopped"),
                    ("slow", "stopped"),
                ]
                assert sup.count_children()["active"] == 0
                release.set()
            await anyio.wait_all_tasks_blocked()  # every exit processed, a restarted
            assert a_ready == 2
            assert [(c.id, c.status, c.restarts) for c in sup.which_children()] == [
                ("a", "running", 1),
                ("trans", "stopped", 0),
                ("slow", "stopped", 0),
            ]


# --------------------------------------------------------------------------- 9: terminate


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


# --------------------------------------------------------------------------- 10: messages


def test_a_duplicate_id_in_the_child_list_says_ids_must_be_unique() -> None:
    spec = ChildSpec("x", ready_then_forever)
    with pytest.raises(DuplicateChild, match="must be unique") as info:
        Supervisor([spec, spec])
    assert "terminate_child" not in str(info.value)
    assert info.value.in_child_list


async def test_max_restarts_after_normal_exits_does_not_blame_a_crash() -> None:
    async def returns(task_status: Any) -> None:
        task_status.started()

    with anyio.fail_after(5):
        with pytest.raises(MaxRestartsExceeded) as info:
            async with Supervisor([ChildSpec("quitter", returns)], max_restarts=0):
                await anyio.sleep_forever()
        message = str(info.value)
        assert "exited normally" in message
        assert "transient" in message
        assert "Fix the crashing child" not in message


# --------------------------------------------------------------------------- second review:
# calls from tasks a child spawns, self-terminated incarnations, exits racing admin calls


@pytest.mark.parametrize("shutdown", [None, 5.0])
async def test_a_childs_helper_task_terminating_the_child_returns_at_once(
    shutdown: float | None,
) -> None:
    with anyio.fail_after(3):
        sup: Supervisor
        returned = anyio.Event()

        async def kid(task_status: Any) -> None:
            task_status.started()

            async def helper() -> None:
                await sup.terminate_child("k")
                returned.set()

            async with anyio.create_task_group() as group:
                group.start_soon(helper)
                await anyio.sleep_forever()

        sup = Supervisor([ChildSpec("k", kid, shutdown=shutdown)])
        async with sup:
            await returned.wait()
            assert [(c.id, c.status) for c in sup.which_children()] == [("k", "stopped")]


async def test_a_grandchild_terminating_its_own_subtree_returns_at_once() -> None:
    with anyio.fail_after(3):
        outer: Supervisor
        returned = anyio.Event()

        async def grandchild(task_status: Any) -> None:
            task_status.started()
            await outer.terminate_child("inner")  # the nested supervisor it lives in
            returned.set()
            await anyio.sleep_forever()

        inner = Supervisor([ChildSpec("gc", grandchild, shutdown=None)])
        outer = Supervisor([inner.child_spec("inner")])
        async with outer:
            await returned.wait()
            assert [(c.id, c.status) for c in outer.which_children()] == [("inner", "stopped")]


async def test_an_unready_childs_helper_task_gets_admin_call_before_ready() -> None:
    with anyio.fail_after(3):
        sup: Supervisor

        async def kid(task_status: Any) -> None:
            async def helper(task_status: Any) -> None:
                await sup.start_child(ChildSpec("other", ready_then_forever))
                task_status.started()

            async with anyio.create_task_group() as group:
                await group.start(helper)  # set up through a helper, then report ready
                task_status.started()
                await anyio.sleep_forever()

        sup = Supervisor([ChildSpec("k", kid)])
        with pytest.raises(FailedToStartChild) as info:
            async with sup:
                pass
        assert isinstance(info.value.cause, AdminCallBeforeReady)


async def test_a_self_terminated_child_is_waited_for_and_its_stop_error_logged(
    supervision_log: Any,
) -> None:
    with anyio.fail_after(3):
        sup: Supervisor
        cleaning = anyio.Event()
        cleaned = anyio.Event()

        async def kid(task_status: Any) -> None:
            task_status.started()
            try:
                await sup.terminate_child("k")
                await anyio.sleep_forever()
            finally:
                cleaning.set()
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(0.1)  # an honest, slow cleanup
                cleaned.set()
                raise OSError("flush failed while stopping")

        sup = Supervisor([ChildSpec("k", kid, shutdown=5.0)])
        async with sup:
            await cleaning.wait()
            assert not cleaned.is_set()
        assert cleaned.is_set()  # the async with waited for the cleanup
        assert ("child_terminated", "k") in supervision_log.records


async def test_restarting_a_self_terminated_child_waits_for_its_exit() -> None:
    with anyio.fail_after(3):
        sup: Supervisor
        alive = 0
        most = 0
        stopped = anyio.Event()

        async def kid(task_status: Any) -> None:
            nonlocal alive, most
            alive += 1
            most = max(most, alive)
            task_status.started()
            try:
                if not stopped.is_set():
                    stopped.set()
                    await sup.terminate_child("k")
                await anyio.sleep_forever()
            finally:
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(0.1)
                alive -= 1

        sup = Supervisor([ChildSpec("k", kid, shutdown=5.0)])
        async with sup:
            await stopped.wait()
            await sup.restart_child("k")
            assert most == 1  # never two incarnations at once
            assert [(c.id, c.status) for c in sup.which_children()] == [("k", "running")]


async def test_a_dead_child_is_restarting_while_its_siblings_are_stopped() -> None:
    with anyio.fail_after(3):
        crash = anyio.Event()
        stopping = anyio.Event()

        async def slow_stop(task_status: Any) -> None:
            task_status.started()
            try:
                await anyio.sleep_forever()
            finally:
                stopping.set()
                with anyio.CancelScope(shield=True):
                    await anyio.sleep(0.3)

        sup = Supervisor(
            [ChildSpec("a", crash_on(crash)), ChildSpec("b", slow_stop)], strategy="one_for_all"
        )
        async with sup:
            crash.set()
            await stopping.wait()  # the manager is stopping b for the strategy
            first = sup.which_children()[0]
            assert (first.id, first.status) == ("a", "restarting")
            assert sup.count_children()["active"] == 0


async def test_an_exit_queued_before_an_admin_call_is_handled_first(supervision_log: Any) -> None:
    """The crash is logged and its strategy applied, not erased by the call."""
    with anyio.fail_after(3):
        crash = anyio.Event()
        starts: list[str] = []

        def kid(name: str) -> Callable[[Any], Coroutine[Any, Any, None]]:
            async def start(task_status: Any) -> None:
                starts.append(name)
                task_status.started()
                if name == "b" and len(starts) <= 3:
                    await crash.wait()
                    raise Boom("b crashed")
                await anyio.sleep_forever()

            return start

        children = [ChildSpec(name, kid(name)) for name in "abc"]
        sup = Supervisor(children, strategy="one_for_all")
        async with sup:
            crash.set()
            while sup.which_children()[1].status == "running":
                await anyio.lowlevel.checkpoint()  # b ended; its exit is still queued
            await sup.terminate_child("b")
            assert ("child_terminated", "b") in supervision_log.records
            assert starts == ["a", "b", "c", "a", "b", "c"]  # the strategy ran first
            assert [(c.id, c.status) for c in sup.which_children()] == [
                ("a", "running"),
                ("b", "stopped"),
                ("c", "running"),
            ]


class SlowTerminate(Actor):
    async def terminate(self, reason: Any) -> None:
        await anyio.sleep(10)


async def test_an_actor_cut_off_at_its_shutdown_is_not_reported_abandoned(
    supervision_log: Any,
) -> None:
    with anyio.fail_after(3):
        actor = SlowTerminate()
        async with Supervisor([actor.child_spec("a", shutdown=0.3)]):
            pass
        assert ("terminate_timeout", "a") in supervision_log.records
        assert ("shutdown_error", "a") not in supervision_log.records
