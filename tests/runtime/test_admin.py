"""Admin calls while the supervisor runs: from starting children, from a child's own task
tree, while stopping, and racing exits."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.runtime import (
    Actor,
    AdminCallBeforeReady,
    ChildSpec,
    FailedToStartChild,
    MaxRestartsExceeded,
    Supervisor,
    SupervisorNotRunning,
)
from tests.runtime.support import Boom, crash_on


async def ready_then_forever(task_status: Any) -> None:
    task_status.started()
    await anyio.sleep_forever()


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
