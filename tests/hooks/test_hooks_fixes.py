"""The chain's fixes: generators fail closed, "returned True" wording, cancellation before or
during a run of sync handlers propagates, re.Pattern matchers, typed errors."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from harness.errors import HarnessError
from harness.hooks import (
    Halt,
    HookResultError,
    Hooks,
    HookTimeoutError,
    HookValueError,
    load_hook_settings,
)


def gen_handler(payload: Any) -> Iterator[int]:
    yield 1


async def agen_handler(payload: Any) -> AsyncIterator[int]:
    yield 1


@pytest.mark.parametrize(
    ("handler", "kind"), [(gen_handler, "a generator"), (agen_handler, "an async generator")]
)
async def test_a_generator_handler_fails_closed(handler: Any, kind: str) -> None:
    with anyio.fail_after(5):
        later: list[str] = []
        hooks = (
            Hooks()
            .register("pre_tool_use", handler, name="gen")
            .register("pre_tool_use", lambda p: later.append("guard"), name="guard")
        )
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.halted and outcome.halted_by == "gen"
        assert outcome.reason is not None and f"returned {kind}" in outcome.reason
        assert isinstance(outcome.error, HookResultError)
        assert later == []


async def test_returning_true_is_reported_as_returned_not_raised() -> None:
    with anyio.fail_after(5):
        outcome = (
            await Hooks()
            .register("pre_tool_use", lambda p: True, name="yes")
            .run("pre_tool_use", {})
        )
        assert outcome.halted
        assert outcome.reason is not None
        assert outcome.reason.startswith("handler 'yes' returned True")
        assert "raised" not in outcome.reason


def sync_hooks(calls: list[str]) -> Hooks:
    return Hooks().register("pre_tool_use", lambda p: calls.append("h"), name="h")


@pytest.mark.parametrize("match", [None, "Bash"])
async def test_a_scope_cancelled_before_a_sync_run_propagates(match: str | None) -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        hooks = Hooks().register("pre_tool_use", lambda p: calls.append("h"), match=match)
        reached = False
        with anyio.CancelScope() as scope:
            scope.cancel()
            await hooks.run("pre_tool_use", {"tool_name": "Bash"})
            reached = True
        assert not reached and scope.cancelled_caught
        assert calls == []


async def test_an_expired_deadline_before_a_sync_run_propagates() -> None:
    with anyio.fail_after(5):
        hooks = sync_hooks([])
        with pytest.raises(TimeoutError):
            with anyio.fail_after(0):
                await hooks.run("pre_tool_use", {})


async def test_a_scope_cancelled_by_a_sync_handler_propagates() -> None:
    with anyio.fail_after(5):
        reached = False
        with anyio.CancelScope() as scope:

            def cancels(payload: Any) -> Halt:
                scope.cancel()
                return Halt("even a halt does not hide it")

            await Hooks().register("pre_tool_use", cancels).run("pre_tool_use", {})
            reached = True
        assert not reached and scope.cancelled_caught


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
        assert "after run" not in calls


async def test_a_shielded_scope_runs_the_hooks() -> None:
    with anyio.fail_after(5):
        calls: list[str] = []
        with anyio.CancelScope() as outer:
            outer.cancel()
            with anyio.CancelScope(shield=True):
                outcome = await sync_hooks(calls).run("pre_tool_use", {})
        assert calls == ["h"] and not outcome.halted


async def test_a_compiled_pattern_is_searched_in_the_tool_name() -> None:
    with anyio.fail_after(5):
        hooks = Hooks().register("pre_tool_use", lambda p: Halt("mcp"), match=re.compile("mcp__.*"))
        assert (await hooks.run("pre_tool_use", {"tool_name": "mcp__memory__read"})).halted
        assert not (await hooks.run("pre_tool_use", {"tool_name": "Bash"})).halted
        assert hooks.registrations("pre_tool_use")[0].match == re.compile("mcp__.*")


async def test_a_rewrite_changes_what_later_matchers_see() -> None:
    with anyio.fail_after(5):
        hooks = (
            Hooks()
            .register("pre_tool_use", lambda p: {**p, "tool_name": "Edit"}, name="rename")
            .register("pre_tool_use", lambda p: Halt("edit"), name="edit", match="Edit")
        )
        outcome = await hooks.run("pre_tool_use", {"tool_name": "Bash"})
        assert outcome.halted_by == "edit" and outcome.ran == ("rename", "edit")


def test_a_pattern_string_points_to_re_compile() -> None:
    with pytest.raises(HookValueError, match=r"re\.compile"):
        Hooks().register("pre_tool_use", print, match="mcp__.*")


def test_hook_errors_are_harness_errors() -> None:
    with pytest.raises(HarnessError):
        Hooks().register("nope", print)
    with pytest.raises(ValueError):
        Hooks().register("nope", print)
    with pytest.raises(HarnessError):
        Halt("")
    with pytest.raises(HarnessError):
        load_hook_settings({"PreToolUse": {}}, cwd=".")
    assert issubclass(HookTimeoutError, HarnessError) and issubclass(HookTimeoutError, TimeoutError)
    with pytest.raises(HarnessError):
        Hooks().register("pre_tool_use", 42)  # type: ignore[arg-type]
