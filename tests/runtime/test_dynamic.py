"""DynamicSupervisor: children started on demand, max_children, restarts, concurrent stopping."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.runtime import (
    Actor,
    ChildSpec,
    DynamicSupervisor,
    FailedToStartChild,
    MaxChildrenReached,
    MaxRestartsExceeded,
    SupervisorNotRunning,
    UnknownChild,
)
from tests.runtime.support import until


class Session(Actor):
    async def init(self) -> None:
        self.turns = 0

    async def handle_call(self, msg: Any) -> Any:
        if msg == "crash":
            raise RuntimeError("session crashed")
        self.turns += 1
        return self.turns


async def test_start_child_returns_once_the_actor_is_ready() -> None:
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            session = Session()
            ref = await sup.start_child(session.child_spec(id="s1"))
            assert session.running  # init returned before start_child did
            assert await session.call("turn") == 1
            assert ref.id == "s1" and ref.status == "running"
            assert sup.count_children() == {
                "specs": 1,
                "active": 1,
                "supervisors": 0,
                "workers": 1,
            }


async def test_max_children_refuses_and_starts_nothing() -> None:
    started: list[str] = []

    async def child(task_status: Any) -> None:
        started.append("x")
        task_status.started()
        await anyio.sleep_forever()

    with anyio.fail_after(5):
        async with DynamicSupervisor(max_children=2) as sup:
            first = await sup.start_child(ChildSpec("a", child))
            await sup.start_child(ChildSpec("b", child))
            with pytest.raises(MaxChildrenReached) as info:
                await sup.start_child(ChildSpec("c", child))
            assert info.value.max_children == 2
            assert started == ["x", "x"]  # the refused child never ran
            await sup.terminate_child(first)  # frees its slot
            assert first.status == "stopped"
            await sup.start_child(ChildSpec("c", child))
            assert [c.id for c in sup.which_children()] == ["b", "c"]


async def test_a_crashed_child_awaiting_its_restart_still_counts_against_max_children() -> None:
    from harness.runtime import monitor

    with anyio.fail_after(5):
        async with DynamicSupervisor(max_children=1) as sup:
            session = Session()
            ref = await sup.start_child(session.child_spec(id="s"))
            watch = monitor(session)
            session.cast("ignored")  # handle_cast is a no-op; now crash it through a call
            with pytest.raises(Exception, match="exited"):
                await session.call("crash")
            assert isinstance(await watch.down(), RuntimeError)
            with pytest.raises(MaxChildrenReached):
                await sup.start_child(Session().child_spec(id="other"))
            assert ref.status == "running" and ref.restarts == 1


async def test_a_crashed_child_is_restarted_alone_and_siblings_keep_their_state() -> None:
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            a, b = Session(), Session()
            ref_a = await sup.start_child(a.child_spec(id="a"))
            await sup.start_child(b.child_spec(id="b"))
            assert await b.call("turn") == 1
            with pytest.raises(Exception, match="exited"):
                await a.call("crash")
            await until(lambda: bool(a.running and ref_a.restarts == 1))
            assert await b.call("turn") == 2  # b was not restarted
            assert await a.call("turn") == 1  # a was, init ran again


async def test_too_many_restarts_escalate() -> None:
    async def crasher(task_status: Any) -> None:
        task_status.started()
        raise RuntimeError("boom")

    with anyio.fail_after(5), pytest.raises(MaxRestartsExceeded):
        async with DynamicSupervisor(max_restarts=2, max_seconds=5) as sup:
            await sup.start_child(ChildSpec("crasher", crasher))
            await anyio.sleep_forever()


async def test_a_child_failing_to_start_is_not_added() -> None:
    async def broken(task_status: Any) -> None:
        raise ValueError("no config")

    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            with pytest.raises(FailedToStartChild) as info:
                await sup.start_child(ChildSpec("broken", broken))
            assert isinstance(info.value.cause, ValueError)
            assert sup.which_children() == []


async def test_terminating_an_unknown_ref_and_calls_outside_the_block() -> None:
    sup = DynamicSupervisor()
    with anyio.fail_after(5):
        async with sup:
            ref = await sup.start_child(Session().child_spec(id="s"))
            await sup.terminate_child(ref)
            with pytest.raises(UnknownChild):
                await sup.terminate_child(ref)
        with pytest.raises(SupervisorNotRunning):
            await sup.start_child(Session().child_spec(id="s"))


async def test_stopping_1000_sessions_one_ignoring_cancellation_is_bounded(
    supervision_log: Any,
) -> None:
    release = anyio.Event()

    async def stubborn(task_status: Any) -> None:
        task_status.started()
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):  # ignores cancellation until released
                await release.wait()

    sessions = [Session() for _ in range(1000)]
    with anyio.fail_after(20):  # bounded by the shutdown settings, not by the stubborn child
        async with DynamicSupervisor() as sup:
            for n, session in enumerate(sessions):
                await sup.start_child(session.child_spec(id=f"s{n}", shutdown=2.0))
            await sup.start_child(ChildSpec("stubborn", stubborn, shutdown=0.2))
    assert not any(session.running for session in sessions)
    assert supervision_log.count("shutdown_error", "stubborn") == 1  # abandoned, and logged
    release.set()  # the abandoned task may finish before the loop closes
    await anyio.sleep(0.01)


async def test_nested_under_a_supervisor() -> None:
    from harness.runtime import Supervisor

    inner = DynamicSupervisor()
    with anyio.fail_after(5):
        async with Supervisor([inner.child_spec("sessions")]) as outer:
            session = Session()
            await inner.start_child(session.child_spec(id="s"))
            assert await session.call("turn") == 1
            assert outer.count_children()["supervisors"] == 1
