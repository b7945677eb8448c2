"""Cancellation from outside and the chain: it always propagates, before, during or after the
handlers; shields are respected; a run outside any task works; no private internals are read."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

import harness.hooks
from harness.hooks import Halt, Hooks


def sync_hooks(calls: list[str]) -> Hooks:
    return Hooks().register("pre_tool_use", lambda p: calls.append("h"), name="h")


@pytest.mark.parametrize("match", [None, "Bash"])
async def test_a_scope_cancelled_before_a_sync_run_propagates(match: str | None) -> None:
    """Sync handlers cannot be interrupted, so they may run; the run still returns nothing."""
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = Hooks().register("pre_tool_use", lambda p: calls.append("h"), match=match)
        reached = False
        with anyio.CancelScope() as scope:
            scope.cancel()
            await hooks.run("pre_tool_use", {"tool_name": "Bash"})
            reached = True
        assert not reached and scope.cancelled_caught


async def test_a_scope_cancelled_before_an_async_run_stops_the_first_handler() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        async def waits(payload: Any) -> None:
            await anyio.lowlevel.checkpoint()
            calls.append("past its first await")

        hooks = Hooks().register("pre_tool_use", waits).register("pre_tool_use", waits)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await hooks.run("pre_tool_use", {})
        assert scope.cancelled_caught and calls == []


async def test_an_expired_deadline_before_a_sync_run_propagates() -> None:
    with anyio.fail_after(5):
        hooks = sync_hooks([])
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0):
                await hooks.run("pre_tool_use", {})


@pytest.mark.parametrize("verdict", [None, Halt("even a halt does not hide it")])
async def test_a_scope_cancelled_by_a_sync_handler_propagates(verdict: Halt | None) -> None:
    with anyio.fail_after(5):
        reached = False
        with anyio.CancelScope() as scope:

            def cancels(payload: Any) -> Halt | None:
                scope.cancel()
                return verdict

            await Hooks().register("pre_tool_use", cancels).run("pre_tool_use", {})
            reached = True
        assert not reached and scope.cancelled_caught


async def test_an_outer_scope_cancelled_inside_a_mixed_chain_stops_it() -> None:
    """Cancellation inside a chain: a sync handler cancels, the next (async) one never ends."""
    with anyio.fail_after(5):
        calls: list[str] = []
        with anyio.CancelScope() as outer:

            def cancels(payload: Any) -> dict[str, Any]:
                outer.cancel()
                return {**payload, "rewritten": True}

            async def later(payload: Any) -> None:
                await anyio.lowlevel.checkpoint()
                calls.append("later finished")

            hooks = Hooks().register("pre_tool_use", cancels).register("pre_tool_use", later)
            await hooks.run("pre_tool_use", {})
        assert outer.cancelled_caught and calls == []


async def test_a_task_cancelled_by_a_sync_handler_propagates() -> None:
    with anyio.fail_after(5):

        def cancels(payload: Any) -> None:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()

        task = asyncio.ensure_future(
            Hooks().register("pre_tool_use", cancels).run("pre_tool_use", {})
        )
        with pytest.raises(asyncio.CancelledError):
            await task
        assert task.cancelled()


async def test_a_task_cancel_pending_before_a_sync_run_propagates() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []

        async def body() -> None:
            task = asyncio.current_task()
            assert task is not None
            task.cancel()
            await sync_hooks(calls).run("pre_tool_use", {})
            calls.append("after run")

        task = asyncio.ensure_future(body())
        with pytest.raises(asyncio.CancelledError):
            await task
        assert calls == []  # a pending Task.cancel() lands before the first handler


async def test_a_shielded_scope_runs_the_hooks() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        with anyio.CancelScope() as outer:
            outer.cancel()
            with anyio.CancelScope(shield=True):
                outcome = await sync_hooks(calls).run("pre_tool_use", {})
        assert calls == ["h"] and not outcome.halted


async def test_a_cancelled_scope_inside_a_shield_still_propagates() -> None:
    with anyio.fail_after(5):
        with anyio.CancelScope() as outer:
            outer.cancel()
            with anyio.CancelScope(shield=True):
                with anyio.CancelScope() as inner:
                    inner.cancel()
                    await sync_hooks([]).run("pre_tool_use", {})
                    pytest.fail("the inner cancellation was swallowed")
                assert inner.cancelled_caught
        assert not outer.cancelled_caught  # the shield held the outer one off


async def test_a_cancelled_outer_scope_reaches_through_unshielded_scopes() -> None:
    with anyio.fail_after(5):
        with anyio.CancelScope() as outer:
            with anyio.CancelScope(), anyio.CancelScope():
                outer.cancel()
                await sync_hooks([]).run("pre_tool_use", {})
                pytest.fail("the outer cancellation was swallowed")
        assert outer.cancelled_caught


async def test_a_run_outside_any_task_returns_its_outcome() -> None:
    """Driven from a plain event-loop callback (no task, no cancel scope): nothing to check."""
    with anyio.fail_after(5):
        hooks = Hooks().register("pre_tool_use", lambda p: Halt("no"), name="deny")
        done: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def drive() -> None:
            assert asyncio.current_task() is None
            try:
                hooks.run("pre_tool_use", {}).send(None)
            except StopIteration as stop:
                done.set_result(stop.value)

        asyncio.get_running_loop().call_soon(drive)
        outcome = await done
        assert outcome.halted and outcome.halted_by == "deny"


def test_no_private_internals_of_anyio_or_asyncio_are_read() -> None:
    private = re.compile(r"_task_states|_current_tasks|_thread_id|_cancel_called|_parent_scope")
    package = Path(harness.hooks.__file__).parent
    for module in sorted(package.glob("*.py")):
        text = module.read_text(encoding="utf-8")
        assert not private.search(text), f"{module.name} reads a private internal"
        assert "anyio._" not in text and "asyncio.tasks." not in text, module.name
