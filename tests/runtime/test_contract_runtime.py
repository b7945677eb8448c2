"""CONTRACT §5 Runtime (harness.runtime): acceptance tests derived from the contract text only."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from harness.runtime import (
    Actor,
    ActorExited,
    ChildSpec,
    FailedToStartChild,
    MaxRestartsExceeded,
    NoProc,
    Supervisor,
)


async def maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def wait_until(pred: Callable[[], bool], step: float = 0.005) -> None:
    while not pred():  # noqa: ASYNC110 - polling public introspection, no event exposed
        await anyio.sleep(step)


def info(sup: Supervisor, child_id: str) -> Any:
    found = [c for c in sup.which_children() if c.id == child_id]
    assert len(found) <= 1
    return found[0] if found else None


def recorder(
    log: list[str], name: str, *, body: Callable[[], Awaitable[None]] | None = None
) -> Callable[..., Awaitable[None]]:
    async def start(task_status: Any) -> None:
        log.append(f"start {name}")
        task_status.started()
        try:
            if body is None:
                await anyio.sleep_forever()
            else:
                await body()
        finally:
            log.append(f"stop {name}")

    return start


# --- ChildSpec ------------------------------------------------------------------------------


def test_child_spec_defaults() -> None:
    async def start(task_status: Any) -> None:
        task_status.started()

    spec = ChildSpec("c", start)
    assert spec.id == "c"
    assert spec.restart == "permanent"
    assert spec.shutdown == 5.0
    for restart in ("permanent", "transient", "temporary"):
        assert ChildSpec("c", start, restart=restart).restart == restart
    for shutdown in (None, "brutal", 0.5):
        assert ChildSpec("c", start, shutdown=shutdown).shutdown == shutdown


# --- Start and stop order ---------------------------------------------------------------------


async def test_children_start_in_order_after_ready_and_stop_in_reverse() -> None:
    with anyio.fail_after(10):
        log: list[str] = []

        def slow_ready(name: str) -> Callable[..., Awaitable[None]]:
            async def start(task_status: Any) -> None:
                log.append(f"begin {name}")
                await anyio.sleep(0.02)
                log.append(f"ready {name}")
                task_status.started()
                try:
                    await anyio.sleep_forever()
                finally:
                    log.append(f"stop {name}")

            return start

        specs = [ChildSpec(n, slow_ready(n)) for n in ("a", "b", "c")]
        async with Supervisor(specs) as sup:
            assert log == ["begin a", "ready a", "begin b", "ready b", "begin c", "ready c"]
            assert [c.id for c in sup.which_children()] == ["a", "b", "c"]
            assert all(c.status == "running" and c.restarts == 0 for c in sup.which_children())
            assert isinstance(sup.count_children(), dict)
        assert log[-3:] == ["stop c", "stop b", "stop a"]


async def test_failed_start_stops_started_in_reverse_and_raises() -> None:
    with anyio.fail_after(10):
        log: list[str] = []
        cause = RuntimeError("cannot open")

        async def broken(task_status: Any) -> None:
            raise cause

        specs = [
            ChildSpec("a", recorder(log, "a")),
            ChildSpec("b", recorder(log, "b")),
            ChildSpec("bad", broken),
            ChildSpec("never", recorder(log, "never")),
        ]
        with pytest.raises(FailedToStartChild) as exc:
            async with Supervisor(specs):
                pytest.fail("body must not run")
        assert log == ["start a", "start b", "stop b", "stop a"]
        assert exc.value.id == "bad"
        assert exc.value.cause is cause


# --- Restart types ----------------------------------------------------------------------------


def exiting_child(counter: dict[str, int], name: str, *, crash: bool) -> Callable[..., Any]:
    async def start(task_status: Any) -> None:
        counter[name] = counter.get(name, 0) + 1
        task_status.started()
        await anyio.sleep(0.01)
        if counter[name] <= 2:
            if crash:
                raise RuntimeError("boom")
            return
        await anyio.sleep_forever()

    return start


@pytest.mark.parametrize(
    ("restart", "crash", "restarts"),
    [
        ("permanent", False, True),
        ("permanent", True, True),
        ("transient", True, True),
        ("transient", False, False),
        ("temporary", True, False),
        ("temporary", False, False),
    ],
)
async def test_restart_types(restart: str, crash: bool, restarts: bool) -> None:
    with anyio.fail_after(10):
        counter: dict[str, int] = {}
        spec = ChildSpec("c", exiting_child(counter, "c", crash=crash), restart=restart)  # type: ignore[arg-type]
        async with Supervisor([spec], max_restarts=10, max_seconds=5) as sup:
            if restarts:
                await wait_until(lambda: counter.get("c", 0) >= 3)
                await wait_until(
                    lambda: info(sup, "c") is not None and info(sup, "c").restarts >= 2
                )
                assert info(sup, "c").status == "running"
            else:
                await anyio.sleep(0.15)
                assert counter["c"] == 1
                if restart == "temporary":
                    assert info(sup, "c") is None, "a temporary child's spec is dropped"
                else:
                    assert info(sup, "c").status == "stopped"


# --- Strategies -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "expected"),
    [
        ("one_for_one", {"a": 1, "b": 2, "c": 1}),
        ("one_for_all", {"a": 2, "b": 2, "c": 2}),
        ("rest_for_one", {"a": 1, "b": 2, "c": 2}),
    ],
)
async def test_strategies(strategy: str, expected: dict[str, int]) -> None:
    with anyio.fail_after(10):
        starts: dict[str, int] = {}
        crash_b = anyio.Event()

        def child(name: str) -> Callable[..., Any]:
            async def start(task_status: Any) -> None:
                starts[name] = starts.get(name, 0) + 1
                task_status.started()
                if name == "b" and starts[name] == 1:
                    await crash_b.wait()
                    raise RuntimeError("b crashed")
                await anyio.sleep_forever()

            return start

        specs = [ChildSpec(n, child(n)) for n in "abc"]
        async with Supervisor(specs, strategy=strategy) as sup:  # type: ignore[arg-type]
            crash_b.set()
            await wait_until(lambda: starts.get("b", 0) == 2)
            await wait_until(lambda: all(c.status == "running" for c in sup.which_children()))
            await anyio.sleep(0.05)
            assert starts == expected
            assert [c.id for c in sup.which_children()] == ["a", "b", "c"]


# --- Restart intensity ------------------------------------------------------------------------


async def test_max_restarts_exceeded_stops_all_in_reverse() -> None:
    with anyio.fail_after(10):
        log: list[str] = []
        crashes = 0

        async def crasher(task_status: Any) -> None:
            nonlocal crashes
            task_status.started()
            await anyio.sleep(0.005)
            crashes += 1
            raise RuntimeError("again")

        specs = [
            ChildSpec("a", recorder(log, "a")),
            ChildSpec("crasher", crasher),
            ChildSpec("z", recorder(log, "z")),
        ]
        with pytest.raises(MaxRestartsExceeded):
            async with Supervisor(specs, max_restarts=2, max_seconds=5.0):
                await anyio.sleep_forever()
        assert crashes == 3, "more than 2 restarts: the third crash gives up"
        assert log == ["start a", "start z", "stop z", "stop a"]


async def test_restarts_outside_window_are_allowed() -> None:
    with anyio.fail_after(10):
        crashes = 0

        async def slow_crasher(task_status: Any) -> None:
            nonlocal crashes
            task_status.started()
            await anyio.sleep(0.12)
            crashes += 1
            raise RuntimeError("again")

        # Too many restarts in the window would raise MaxRestartsExceeded out of the block.
        async with Supervisor(
            [ChildSpec("c", slow_crasher)], max_restarts=1, max_seconds=0.1
        ) as sup:
            await wait_until(lambda: crashes >= 4)
            assert [child.id for child in sup.which_children()] == ["c"]
        assert crashes >= 4


# --- Stopping ---------------------------------------------------------------------------------


async def test_child_ignoring_cancellation_is_abandoned_after_shutdown() -> None:
    with anyio.fail_after(10):

        async def stubborn(task_status: Any) -> None:
            task_status.started()
            with anyio.CancelScope(shield=True):
                await anyio.sleep(30)

        start = anyio.current_time()
        async with Supervisor([ChildSpec("s", stubborn, shutdown=0.2)]):
            pass
        assert anyio.current_time() - start < 5


async def test_brutal_shutdown_stops_child() -> None:
    with anyio.fail_after(10):
        log: list[str] = []
        async with Supervisor([ChildSpec("b", recorder(log, "b"), shutdown="brutal")]):
            assert log == ["start b"]
        assert "start b" in log


async def test_outside_cancellation_propagates_and_restarts_nothing() -> None:
    with anyio.fail_after(10):
        log: list[str] = []
        entered = False
        with anyio.move_on_after(0.1) as scope:
            async with Supervisor(
                [ChildSpec("a", recorder(log, "a")), ChildSpec("b", recorder(log, "b"))]
            ):
                entered = True
                await anyio.sleep_forever()
        assert entered
        assert scope.cancelled_caught
        assert log == ["start a", "start b", "stop b", "stop a"]


# --- Dynamic children -------------------------------------------------------------------------


async def test_dynamic_child_management() -> None:
    with anyio.fail_after(10):
        log: list[str] = []
        async with Supervisor([ChildSpec("a", recorder(log, "a"))]) as sup:
            await maybe_await(sup.start_child(ChildSpec("d", recorder(log, "d"))))
            assert log == ["start a", "start d"]
            assert info(sup, "d").status == "running"
            await maybe_await(sup.terminate_child("d"))
            assert "stop d" in log
            assert info(sup, "d").status == "stopped"
            await maybe_await(sup.restart_child("d"))
            assert log.count("start d") == 2
            assert info(sup, "d").status == "running"
            await maybe_await(sup.terminate_child("d"))
            await maybe_await(sup.delete_child("d"))
            assert info(sup, "d") is None
            assert [c.id for c in sup.which_children()] == ["a"]


# --- Actor ------------------------------------------------------------------------------------


class Counter(Actor):
    def __init__(self) -> None:
        super().__init__()
        self.terminated: list[Any] = []
        self.inits = 0

    async def init(self) -> None:
        self.inits += 1
        self.n = 0

    async def handle_call(self, msg: Any) -> Any:
        if msg == "get":
            return self.n
        if msg == "crash":
            raise RuntimeError("handle_call crashed")
        if isinstance(msg, tuple) and msg[0] == "sleep":
            await anyio.sleep(msg[1])
            return msg[2]
        if isinstance(msg, tuple) and msg[0] == "wait":
            await msg[1].wait()
            raise RuntimeError("crash while others queue")
        return ("echo", msg)

    async def handle_cast(self, msg: Any) -> None:
        if msg == "crash":
            raise RuntimeError("handle_cast crashed")
        self.n += msg

    async def terminate(self, reason: Any) -> None:
        self.terminated.append(reason)


def test_actor_takes_no_arguments_and_builds_child_spec() -> None:
    class Plain(Actor):
        async def handle_call(self, msg: Any) -> Any:
            return msg

    a = Plain()
    spec = a.child_spec(id="plain")
    assert isinstance(spec, ChildSpec)
    assert spec.id == "plain"


async def test_actor_defaults_are_noops_and_call_cast_work() -> None:
    with anyio.fail_after(10):

        class Plain(Actor):
            async def handle_call(self, msg: Any) -> Any:
                return ("got", msg)

        a = Plain()
        async with Supervisor([a.child_spec(id="p")]):
            a.cast("ignored")  # default handle_cast: a no-op, the actor keeps running
            assert await a.call("x") == ("got", "x")


async def test_actor_call_cast_and_terminate_once() -> None:
    with anyio.fail_after(10):
        c = Counter()
        async with Supervisor([c.child_spec(id="counter")]):
            c.cast(2)
            c.cast(3)
            assert await c.call("get") == 5
            assert await c.call("hi", timeout=1.0) == ("echo", "hi")
        assert len(c.terminated) == 1


async def test_call_to_actor_not_running_raises_noproc() -> None:
    with anyio.fail_after(5):
        c = Counter()
        with pytest.raises(NoProc):
            await c.call("get")


async def test_call_timeout_and_late_reply_dropped() -> None:
    with anyio.fail_after(10):
        c = Counter()
        async with Supervisor([c.child_spec(id="c")]):
            with pytest.raises(TimeoutError):
                await c.call(("sleep", 0.2, "late"), timeout=0.05)
            assert await c.call(("sleep", 0, "fresh"), timeout=2.0) == "fresh"
            assert await c.call("get") == 0


async def test_handle_call_exception_crashes_actor_and_caller_gets_actor_exited() -> None:
    with anyio.fail_after(10):
        c = Counter()
        async with Supervisor([c.child_spec(id="c")], max_restarts=5) as sup:
            c.cast(7)
            assert await c.call("get") == 7
            with pytest.raises(ActorExited):
                await c.call("crash")
            await wait_until(
                lambda: info(sup, "c").restarts >= 1 and info(sup, "c").status == "running"
            )
            assert await c.call("get") == 0, "restarted actor runs init again"
            assert len(c.terminated) >= 1


async def test_handle_cast_exception_crashes_actor() -> None:
    with anyio.fail_after(10):
        c = Counter()
        async with Supervisor([c.child_spec(id="c")], max_restarts=5) as sup:
            c.cast(4)
            assert await c.call("get") == 4
            c.cast("crash")
            await wait_until(
                lambda: info(sup, "c").restarts >= 1 and info(sup, "c").status == "running"
            )

            async def get() -> Any:
                while True:
                    try:
                        return await c.call("get")
                    except (NoProc, ActorExited):
                        await anyio.sleep(0.005)

            assert await get() == 0


async def test_queued_callers_fail_when_actor_exits() -> None:
    with anyio.fail_after(10):
        c = Counter()
        gate = anyio.Event()
        errors: list[BaseException] = []

        async def caller(msg: Any) -> None:
            try:
                await c.call(msg, timeout=5.0)
            except BaseException as e:
                errors.append(e)

        async with Supervisor([c.child_spec(id="c")], max_restarts=5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(caller, ("wait", gate))
                await anyio.sleep(0.02)
                tg.start_soon(caller, "get")
                tg.start_soon(caller, "get")
                await anyio.sleep(0.02)
                start = anyio.current_time()
                gate.set()
            assert anyio.current_time() - start < 2
        assert len(errors) == 3
        assert all(isinstance(e, ActorExited) for e in errors)


def test_error_types() -> None:
    assert issubclass(MaxRestartsExceeded, BaseException)
    assert issubclass(ActorExited, BaseException)
    assert issubclass(NoProc, BaseException)
    err = FailedToStartChild("x", ValueError("v"))
    assert err.id == "x" and isinstance(err.cause, ValueError)
    exited = ActorExited("why")
    assert "why" in repr(exited) or getattr(exited, "reason", None) == "why"
