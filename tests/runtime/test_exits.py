"""How exits are judged: escalation, KeyboardInterrupt/SystemExit, status of an ended run,
and the messages that explain them."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.runtime import (
    Actor,
    ActorExited,
    ChildSpec,
    DuplicateChild,
    MaxRestartsExceeded,
    Supervisor,
)
from tests.runtime.support import Boom, crash_on


async def ready_then_forever(task_status: Any) -> None:
    task_status.started()
    await anyio.sleep_forever()


class Hang(Actor):
    """An actor whose calls never reply."""

    async def handle_call(self, msg: Any) -> Any:
        await anyio.sleep_forever()


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


def test_a_nan_or_negative_shutdown_is_refused() -> None:
    with pytest.raises(ValueError, match="nan"):
        ChildSpec("s", ready_then_forever, shutdown=math.nan)
    with pytest.raises(ValueError, match="-1"):
        ChildSpec("s", ready_then_forever, shutdown=-1.0)
    with pytest.raises(ValueError, match="nan"):
        Hang().child_spec("s", shutdown=math.nan)
