"""monitor: the exit reason of the watched incarnation, without linking fates."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from harness.runtime import Actor, DynamicSupervisor, NoProc, Supervisor, monitor
from tests.runtime.support import until


class Worker(Actor):
    async def handle_call(self, msg: Any) -> Any:
        if msg == "crash":
            raise ValueError("bad input")
        if msg == "stop":
            self.stop()
        return msg


async def test_down_returns_the_exception_of_a_crash_and_the_watcher_lives_on() -> None:
    worker = Worker()
    with anyio.fail_after(5):
        async with Supervisor([worker.child_spec(id="w", restart="temporary")]):
            watch = monitor(worker)
            assert not watch.is_down
            with pytest.raises(Exception, match="exited"):
                await worker.call("crash")
            reason = await watch.down()
            assert isinstance(reason, ValueError) and str(reason) == "bad input"
            await (
                anyio.lowlevel.checkpoint()
            )  # the monitoring task was not cancelled: it still runs


async def test_down_is_normal_after_stop_and_shutdown_when_the_supervisor_stops_it() -> None:
    stopping, stopped = Worker(), Worker()
    with anyio.fail_after(5):
        async with DynamicSupervisor() as sup:
            await sup.start_child(stopping.child_spec(id="a", restart="transient"))
            ref = await sup.start_child(stopped.child_spec(id="b"))
            normal, shutdown = monitor(stopping), monitor(stopped)
            assert await stopping.call("stop") == "stop"  # replies, then ends
            assert await normal.down() == "normal"
            await sup.terminate_child(ref)
            assert await shutdown.down() == "shutdown"


async def test_a_monitor_watches_one_incarnation() -> None:
    worker = Worker()
    with anyio.fail_after(5):
        async with Supervisor([worker.child_spec(id="w")]):
            first = monitor(worker)
            with pytest.raises(Exception, match="exited"):
                await worker.call("crash")
            await first.down()
            await until(lambda: bool(worker.running))
            second = monitor(worker)
            assert first.is_down and not second.is_down


async def test_monitoring_an_actor_that_is_not_alive_resolves_at_once() -> None:
    with anyio.fail_after(5):
        assert isinstance(await monitor(Worker()).down(), NoProc)
