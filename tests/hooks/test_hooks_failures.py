"""Failing closed: a handler that raises or times out halts; outside cancellation propagates."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness.hooks import Halt, Hooks, HookTimeoutError


def recorder(calls: list[str], label: str) -> Any:
    def handler(payload: Any) -> None:
        calls.append(label)

    return handler


def rewrite(payload: dict[str, Any]) -> dict[str, Any]:
    return {**payload, "rewritten": True}


def with_neighbours(handler: Any, calls: list[str], **options: Any) -> Hooks:
    return (
        Hooks()
        .register("pre_tool_use", rewrite, name="rewrite")
        .register("pre_tool_use", handler, name="guard", **options)
        .register("pre_tool_use", recorder(calls, "after"), name="after")
    )


def explodes(payload: Any) -> None:
    raise RuntimeError("policy file missing")


async def explodes_async(payload: Any) -> None:
    await anyio.lowlevel.checkpoint()
    raise KeyError("tool_input")


@pytest.mark.parametrize("handler_timeout", [None, 5])
@pytest.mark.parametrize(
    ("handler", "error_type", "text"),
    [
        (explodes, RuntimeError, "RuntimeError(policy file missing)"),
        (explodes_async, KeyError, "KeyError('tool_input')"),
    ],
)
async def test_a_handler_that_raises_halts_the_chain(
    handler: Any, error_type: type[Exception], text: str, handler_timeout: float | None
) -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = with_neighbours(handler, calls, timeout=handler_timeout)
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.halted  # never a silent "continue"
        assert outcome.halted_by == "guard"
        assert outcome.reason == f"handler 'guard' raised {text}"
        assert type(outcome.error) is error_type
        assert outcome.ran == ("rewrite", "guard")
        assert outcome.payload == {"tool_name": "Bash", "rewritten": True}
        assert calls == []


async def test_an_exception_without_a_message_is_still_named() -> None:
    with anyio.fail_after(5):

        def bare(payload: Any) -> None:
            raise ValueError

        outcome = await Hooks().register("pre_tool_use", bare, name="bare").run("pre_tool_use", {})
        assert outcome.reason == "handler 'bare' raised ValueError"


async def test_a_timeout_the_handler_raises_itself_is_an_ordinary_error() -> None:
    with anyio.fail_after(5):

        async def upstream_timeout(payload: Any) -> None:
            raise TimeoutError("policy server did not answer")

        outcome = (
            await Hooks()
            .register("pre_tool_use", upstream_timeout, name="remote")
            .run("pre_tool_use", {})
        )
        assert outcome.halted and outcome.halted_by == "remote"
        assert type(outcome.error) is TimeoutError  # not HookTimeoutError
        assert (
            outcome.reason == "handler 'remote' raised TimeoutError(policy server did not answer)"
        )


async def test_an_async_handler_past_its_timeout_halts_the_chain() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        cancelled = anyio.Event()

        async def hangs(payload: Any) -> None:
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.set()

        hooks = with_neighbours(hangs, calls, timeout=0.05)
        started = time.monotonic()
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert time.monotonic() - started < 2
        assert cancelled.is_set()  # the handler itself was cancelled, not abandoned
        assert outcome.halted and outcome.halted_by == "guard"
        assert outcome.reason == "handler 'guard' ran past its timeout of 0.05s"
        assert isinstance(outcome.error, HookTimeoutError)
        assert isinstance(outcome.error, TimeoutError)
        assert outcome.error.handler_name == "guard" and outcome.error.timeout == 0.05
        assert outcome.ran == ("rewrite", "guard")
        assert outcome.payload == {"tool_name": "Bash", "rewritten": True}
        assert calls == []


async def test_a_sync_handler_that_finishes_late_still_times_out() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        def slow(payload: Any) -> dict[str, Any]:
            time.sleep(0.05)  # a blocking handler cannot be preempted, only judged afterwards
            return {"late": "rewrite must be discarded"}

        outcome = await with_neighbours(slow, calls, timeout=0.01).run("pre_tool_use", {})
        assert outcome.halted and outcome.halted_by == "guard"
        assert isinstance(outcome.error, HookTimeoutError)
        assert outcome.payload == {"rewritten": True}
        assert calls == []


async def test_a_handler_that_swallows_its_timeout_still_times_out() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        async def stubborn(payload: Any) -> Halt | None:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                return None  # pretends all is well
            return Halt("unreachable")

        outcome = await with_neighbours(stubborn, calls, timeout=0.02).run("pre_tool_use", {})
        assert outcome.halted and isinstance(outcome.error, HookTimeoutError)
        assert calls == []


async def test_a_handler_that_turns_its_timeout_into_an_error_still_times_out() -> None:
    with anyio.fail_after(5):

        async def converts(payload: Any) -> None:
            try:
                await anyio.sleep_forever()
            except anyio.get_cancelled_exc_class():
                raise RuntimeError("cleanup failed") from None

        outcome = await with_neighbours(converts, [], timeout=0.02).run("pre_tool_use", {})
        assert outcome.halted and isinstance(outcome.error, HookTimeoutError)
        assert isinstance(outcome.error.__cause__, RuntimeError)


async def test_a_handler_within_its_timeout_continues_normally() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        async def quick(payload: dict[str, Any]) -> dict[str, Any]:
            await anyio.sleep(0.001)
            return {**payload, "quick": True}

        outcome = await with_neighbours(quick, calls, timeout=5).run("pre_tool_use", {})
        assert not outcome.halted and outcome.error is None
        assert outcome.payload == {"rewritten": True, "quick": True}
        assert calls == ["after"]


@pytest.mark.parametrize("handler_timeout", [None, 30])
async def test_outside_cancellation_propagates_and_is_never_a_halt(
    handler_timeout: float | None,
) -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        entered = anyio.Event()
        outcomes: list[object] = []

        async def waits(payload: Any) -> None:
            entered.set()
            await anyio.sleep_forever()

        hooks = with_neighbours(waits, calls, timeout=handler_timeout)

        async def run_it(scope_holder: list[anyio.CancelScope]) -> None:
            with anyio.CancelScope() as scope:
                scope_holder.append(scope)
                outcomes.append(await hooks.run("pre_tool_use", {}))
            scope_holder.append(scope)

        holder: list[anyio.CancelScope] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(run_it, holder)
            await entered.wait()
            holder[0].cancel()
        assert holder[-1].cancelled_caught  # the cancellation reached the caller's scope
        assert outcomes == []  # run() returned no outcome: nothing was turned into a halt
        assert calls == []


@pytest.mark.parametrize("handler_timeout", [None, 30])
async def test_an_outer_deadline_is_not_reported_as_the_handlers_timeout(
    handler_timeout: float | None,
) -> None:
    with anyio.fail_after(5):
        outcomes: list[object] = []

        async def waits(payload: Any) -> None:
            await anyio.sleep_forever()

        hooks = Hooks().register("pre_tool_use", waits, timeout=handler_timeout)
        with anyio.move_on_after(0.05) as outer:
            outcomes.append(await hooks.run("pre_tool_use", {}))
        assert outer.cancelled_caught
        assert outcomes == []


async def test_an_outer_deadline_shorter_than_the_handlers_timeout_wins_even_when_both_expire() -> (
    None
):
    with anyio.fail_after(5):
        outcomes: list[object] = []

        def blocks_then_waits(payload: Any) -> Any:
            time.sleep(0.05)  # both deadlines expire before the awaitable is awaited

            async def waits() -> None:
                await anyio.sleep_forever()

            return waits()

        hooks = Hooks().register("pre_tool_use", blocks_then_waits, timeout=0.01)
        with anyio.move_on_after(0.02) as outer:
            outcomes.append(await hooks.run("pre_tool_use", {}))
        assert outer.cancelled_caught
        assert outcomes == []


@pytest.mark.parametrize("handler_timeout", [None, 30])
async def test_a_native_task_cancel_propagates(handler_timeout: float | None) -> None:
    with anyio.fail_after(5):
        entered = asyncio.Event()

        async def waits(payload: Any) -> None:
            entered.set()
            await asyncio.sleep(3600)

        hooks = Hooks().register("pre_tool_use", waits, timeout=handler_timeout)
        task = asyncio.ensure_future(hooks.run("pre_tool_use", {}))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()


class Fatal(BaseException):
    """Stands in for KeyboardInterrupt/SystemExit: not an Exception, so not a handler failure."""


async def test_base_exceptions_that_are_not_errors_propagate() -> None:
    with anyio.fail_after(5):

        def fatal(payload: Any) -> None:
            raise Fatal

        with pytest.raises(Fatal):
            await Hooks().register("pre_tool_use", fatal).run("pre_tool_use", {})


async def _fails_in_cleanup(entered: asyncio.Event) -> None:
    try:
        entered.set()
        await asyncio.sleep(3600)
    finally:
        raise RuntimeError("cleanup failed")  # replaces the CancelledError in flight


async def _swallows(entered: asyncio.Event, verdict: object) -> object:
    try:
        entered.set()
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        pass  # swallowed without uncancel(): the cancellation is still pending
    return verdict


def _cancel_swallowers() -> list[Any]:
    return [
        pytest.param(lambda e: _fails_in_cleanup(e), id="raises-in-cleanup"),
        pytest.param(lambda e: _swallows(e, None), id="swallows-and-continues"),
        pytest.param(lambda e: _swallows(e, Halt("stopped")), id="swallows-and-halts"),
    ]


def _swallower(make: Any, entered: asyncio.Event, is_async: bool, timeout: float | None) -> Hooks:
    """One handler from ``make``: an ``async def`` or a sync callable returning the awaitable."""

    async def async_handler(payload: Any) -> object:
        return await make(entered)

    def sync_handler(payload: Any) -> object:
        return make(entered)

    handler = async_handler if is_async else sync_handler
    return Hooks().register("pre_tool_use", handler, timeout=timeout)


swallow_cases = pytest.mark.parametrize(
    ("is_async", "handler_timeout"), [(True, None), (False, None), (True, 30), (False, 30)]
)


@swallow_cases
@pytest.mark.parametrize("make", _cancel_swallowers())
async def test_a_native_cancel_a_handler_swallows_still_propagates(
    make: Any, is_async: bool, handler_timeout: float | None
) -> None:
    with anyio.fail_after(5):
        entered = asyncio.Event()
        calls: list[str] = []
        hooks = _swallower(make, entered, is_async, handler_timeout)
        hooks = hooks.register("pre_tool_use", recorder(calls, "after"))
        task = asyncio.ensure_future(hooks.run("pre_tool_use", {}))
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()
        assert calls == []


@swallow_cases
@pytest.mark.parametrize("make", _cancel_swallowers())
async def test_an_outer_scope_cancel_a_handler_swallows_still_reaches_the_scope(
    make: Any, is_async: bool, handler_timeout: float | None
) -> None:
    with anyio.fail_after(5):
        entered = asyncio.Event()
        outcomes: list[object] = []
        hooks = _swallower(make, entered, is_async, handler_timeout)
        with anyio.move_on_after(0.05) as outer:
            outcomes.append(await hooks.run("pre_tool_use", {}))
        assert outer.cancelled_caught
        assert outcomes == []
        await anyio.lowlevel.checkpoint()  # the caller is not left cancelled after its scope


async def test_a_handlers_own_cancelled_error_halts_without_cancelling_the_caller() -> None:
    with anyio.fail_after(5):

        async def awaits_a_cancelled_task(payload: Any) -> None:
            other = asyncio.ensure_future(asyncio.sleep(3600))
            await asyncio.sleep(0)
            other.cancel()
            await other  # raises CancelledError, but nobody cancelled the caller

        calls: list[str] = []
        outcome = await with_neighbours(awaits_a_cancelled_task, calls).run("pre_tool_use", {})
        assert outcome.halted and outcome.halted_by == "guard"
        assert isinstance(outcome.error, asyncio.CancelledError)
        assert "CancelledError" in (outcome.reason or "")
        assert calls == []
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0
        await asyncio.sleep(0)  # and it can go on awaiting


def _sync_guard(payload: Any) -> None:
    raise RuntimeError("nope")


async def _async_guard(payload: Any) -> None:
    await asyncio.sleep(0)
    raise RuntimeError("nope")


@pytest.mark.parametrize("guard", [_sync_guard, _async_guard])
async def test_hooks_run_in_shielded_cleanup_of_a_cancelled_task_report_halts(guard: Any) -> None:
    """Cancellation that was already pending when run() began is not this run's business."""
    with anyio.fail_after(5):
        entered = asyncio.Event()
        outcomes: list[Any] = []
        hooks = Hooks().register("session_end", guard)

        async def session() -> None:
            try:
                entered.set()
                await asyncio.sleep(3600)
            finally:
                with anyio.CancelScope(shield=True):
                    outcomes.append(await hooks.run("session_end", {}))

        task = asyncio.ensure_future(session())
        await entered.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        [outcome] = outcomes
        assert outcome.halted and outcome.halted_by == guard.__qualname__
        assert isinstance(outcome.error, RuntimeError)


@pytest.mark.parametrize("swallow", [False, True])
async def test_a_cancellation_requested_just_before_the_run_propagates(swallow: bool) -> None:
    """The task cancelled itself (or another thread cancelled it) before run() began: the
    request lands inside the handler, and is still a cancellation from outside."""
    with anyio.fail_after(5):

        async def waits(payload: Any) -> None:
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                if not swallow:
                    raise

        hooks = Hooks().register("pre_tool_use", waits)

        async def body() -> object:
            current = asyncio.current_task()
            assert current is not None
            current.cancel()  # requested, not yet delivered
            return await hooks.run("pre_tool_use", {})

        task = asyncio.ensure_future(body())
        with pytest.raises(asyncio.CancelledError):
            await task
