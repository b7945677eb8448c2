"""CONTRACT §3 Hooks: acceptance tests derived from the contract text only."""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from harness import PHASES, Halt, HookOutcome, Hooks

FROZEN_ERRORS = (AttributeError, TypeError, ValueError)


def module_level_handler(payload: Any) -> None:
    return None


# --- Names -----------------------------------------------------------------------------------


def test_phases_constant() -> None:
    assert PHASES == ("pre_tool_use", "post_tool_use", "session_start", "session_end")


def test_halt_reason_and_empty_reason_raises() -> None:
    assert Halt("because").reason == "because"
    with pytest.raises(ValueError):
        Halt("")


def test_empty_hooks_have_no_handlers() -> None:
    h = Hooks()
    for phase in PHASES:
        assert h.handlers(phase) == ()


# --- register ---------------------------------------------------------------------------------


def test_register_returns_new_value_old_unchanged() -> None:
    h0 = Hooks()
    h1 = h0.register("pre_tool_use", module_level_handler)
    assert isinstance(h1, Hooks)
    assert h1 is not h0
    assert h0.handlers("pre_tool_use") == ()
    assert h1.handlers("pre_tool_use") == (module_level_handler,)
    h2 = h1.register("pre_tool_use", print)
    assert h1.handlers("pre_tool_use") == (module_level_handler,)
    assert h2.handlers("pre_tool_use") == (module_level_handler, print)
    assert h2.handlers("post_tool_use") == ()


def test_handlers_in_registration_order() -> None:
    def a(p: Any) -> None: ...
    def b(p: Any) -> None: ...
    def c(p: Any) -> None: ...

    h = (
        Hooks()
        .register("session_start", b)
        .register("session_start", a)
        .register("session_start", c)
    )
    assert h.handlers("session_start") == (b, a, c)


def test_unknown_phase_raises_at_register() -> None:
    with pytest.raises(ValueError):
        Hooks().register("pre_tool_usage", module_level_handler)


async def test_unknown_phase_raises_at_run() -> None:
    with anyio.fail_after(5):
        with pytest.raises(ValueError):
            await Hooks().run("not_a_phase", {})


async def test_default_name_is_qualname() -> None:
    with anyio.fail_after(5):

        def inner(p: Any) -> None:
            return None

        class Guard:
            def check(self, p: Any) -> None:
                return None

        h = (
            Hooks()
            .register("session_start", module_level_handler)
            .register("session_start", inner)
            .register("session_start", Guard().check)
        )
        out = await h.run("session_start", {})
        assert out.ran == (
            "module_level_handler",
            inner.__qualname__,
            Guard.check.__qualname__,
        )
        assert "<locals>" in inner.__qualname__


async def test_explicit_name_used_in_ran_and_halted_by() -> None:
    with anyio.fail_after(5):
        h = (
            Hooks()
            .register("pre_tool_use", module_level_handler, name="first")
            .register("pre_tool_use", lambda p: Halt("no"), name="blocker")
        )
        out = await h.run("pre_tool_use", {"tool_name": "Bash"})
        assert out.ran == ("first", "blocker")
        assert out.halted_by == "blocker"


# --- run ------------------------------------------------------------------------------------


async def test_run_order_and_payload_passing() -> None:
    with anyio.fail_after(5):
        seen: list[tuple[str, Any]] = []

        def one(p: dict[str, Any]) -> dict[str, Any]:
            seen.append(("one", p))
            return {**p, "n": p["n"] + 1}

        def two(p: dict[str, Any]) -> None:
            seen.append(("two", p))
            return None

        async def three(p: dict[str, Any]) -> dict[str, Any]:
            seen.append(("three", p))
            return {**p, "n": p["n"] * 10}

        h = (
            Hooks()
            .register("post_tool_use", one)
            .register("post_tool_use", two)
            .register("post_tool_use", three)
        )
        original = {"n": 1}
        out = await h.run("post_tool_use", original)
        assert [s[0] for s in seen] == ["one", "two", "three"]
        assert seen[1][1] == {"n": 2}
        assert seen[2][1] == {"n": 2}
        assert out.payload == {"n": 20}
        assert out.ran == (one.__qualname__, two.__qualname__, three.__qualname__)
        assert out.halted is False and out.reason is None and out.halted_by is None
        assert out.error is None
        assert original == {"n": 1}


async def test_none_returns_leave_payload_unchanged() -> None:
    with anyio.fail_after(5):
        payload = {"tool_name": "Bash", "x": 1}
        out = (
            await Hooks()
            .register("pre_tool_use", module_level_handler)
            .run("pre_tool_use", payload)
        )
        assert out.payload == payload
        assert out.halted is False


async def test_no_handlers_returns_payload() -> None:
    with anyio.fail_after(5):
        out = await Hooks().run("session_end", {"a": 1})
        assert out.payload == {"a": 1}
        assert out.ran == ()
        assert out.halted is False


async def test_halt_stops_chain_and_keeps_rewritten_payload() -> None:
    with anyio.fail_after(5):
        called: list[str] = []

        def rewrite(p: dict[str, Any]) -> dict[str, Any]:
            called.append("rewrite")
            return {**p, "rewritten": True}

        def stop(p: dict[str, Any]) -> Halt:
            called.append("stop")
            return Halt("rm -rf is not allowed")

        def never(p: dict[str, Any]) -> None:
            called.append("never")

        h = (
            Hooks()
            .register("pre_tool_use", rewrite)
            .register("pre_tool_use", stop)
            .register("pre_tool_use", never)
        )
        out = await h.run("pre_tool_use", {"tool_name": "Bash"})
        assert called == ["rewrite", "stop"]
        assert out.halted is True
        assert out.reason == "rm -rf is not allowed"
        assert out.halted_by == stop.__qualname__
        assert out.ran == (rewrite.__qualname__, stop.__qualname__)
        assert out.payload == {"tool_name": "Bash", "rewritten": True}
        assert out.error is None


async def test_async_handler_kinds() -> None:
    with anyio.fail_after(5):

        async def add(p: dict[str, Any], key: str) -> dict[str, Any]:
            await anyio.lowlevel.checkpoint()
            return {**p, key: True}

        class AsyncCallable:
            async def __call__(self, p: dict[str, Any]) -> dict[str, Any]:
                await anyio.lowlevel.checkpoint()
                return {**p, "obj": True}

        def returns_awaitable(p: dict[str, Any]) -> Any:
            return add(p, "aw")

        h = (
            Hooks()
            .register("session_start", functools.partial(add, key="partial"))
            .register("session_start", AsyncCallable())
            .register("session_start", returns_awaitable)
        )
        out = await h.run("session_start", {})
        assert out.payload == {"partial": True, "obj": True, "aw": True}
        assert len(out.ran) == 3
        assert out.halted is False


async def test_async_halt() -> None:
    with anyio.fail_after(5):

        async def guard(p: Any) -> Halt:
            return Halt("async no")

        out = await Hooks().register("pre_tool_use", guard).run("pre_tool_use", {})
        assert out.halted and out.reason == "async no" and out.halted_by == guard.__qualname__


async def test_handlers_run_one_at_a_time() -> None:
    with anyio.fail_after(5):
        active = 0
        peak = 0

        async def slow(p: Any) -> None:
            nonlocal active, peak
            active += 1
            peak = max(peak, active)
            await anyio.sleep(0.01)
            active -= 1

        h = Hooks()
        for i in range(4):
            h = h.register("session_start", slow, name=f"s{i}")
        out = await h.run("session_start", {})
        assert peak == 1
        assert out.ran == ("s0", "s1", "s2", "s3")


# --- match ----------------------------------------------------------------------------------


@dataclass
class ToolCall:
    tool_name: str
    command: str = ""


@pytest.mark.parametrize(
    ("match", "tool", "runs"),
    [
        (None, "Anything", True),
        ("*", "Anything", True),
        ("Bash", "Bash", True),
        ("Bash|Edit", "Edit", True),
        ("Bash|Edit", "Bash", True),
        ("Bash|Edit", "Write", False),
        ("Edit", "NotebookEdit", False),
        ("bash", "Bash", False),
        ("Bash", "bash", False),
        ("Bash", "Bash2", False),
    ],
)
async def test_match_rules_mapping_and_attribute(match: str | None, tool: str, runs: bool) -> None:
    with anyio.fail_after(5):
        h = Hooks().register("pre_tool_use", module_level_handler, name="m", match=match)
        for payload in ({"tool_name": tool}, ToolCall(tool_name=tool)):
            out = await h.run("pre_tool_use", payload)
            assert out.ran == (("m",) if runs else ())
            assert out.halted is False


async def test_skipped_handler_is_not_called() -> None:
    with anyio.fail_after(5):
        called: list[str] = []

        def guard(p: Any) -> Halt:
            called.append("guard")
            return Halt("blocked")

        h = Hooks().register("pre_tool_use", guard, match="Bash")
        out = await h.run("pre_tool_use", {"tool_name": "Edit"})
        assert called == [] and out.halted is False and out.ran == ()
        out = await h.run("pre_tool_use", {"tool_name": "Bash"})
        assert called == ["guard"] and out.halted is True


# --- Fail closed ----------------------------------------------------------------------------


async def test_raising_handler_halts_with_named_reason() -> None:
    with anyio.fail_after(5):
        after: list[str] = []

        def guard(p: dict[str, Any]) -> None:
            p["tool_input"]

        def later(p: Any) -> None:
            after.append("later")

        h = Hooks().register("pre_tool_use", guard).register("pre_tool_use", later)
        out = await h.run("pre_tool_use", {"tool_name": "Bash"})
        assert out.halted is True
        assert out.halted_by == guard.__qualname__
        assert out.reason is not None and "guard" in out.reason
        assert "KeyError" in out.reason or "tool_input" in out.reason
        assert isinstance(out.error, KeyError)
        assert out.ran == (guard.__qualname__,)
        assert after == []


async def test_async_raising_handler_halts() -> None:
    with anyio.fail_after(5):

        async def boom(p: Any) -> None:
            raise RuntimeError("kaput")

        out = await Hooks().register("session_end", boom).run("session_end", {})
        assert out.halted and out.halted_by == boom.__qualname__
        assert isinstance(out.error, RuntimeError)
        reason = out.reason or ""
        assert boom.__qualname__ in reason
        assert "kaput" in reason or "RuntimeError" in reason


async def test_timeout_halts_with_named_reason() -> None:
    with anyio.fail_after(5):
        after: list[str] = []

        async def sleepy(p: Any) -> None:
            await anyio.sleep(10)

        def later(p: Any) -> None:
            after.append("later")

        h = Hooks().register("pre_tool_use", sleepy, timeout=0.05).register("pre_tool_use", later)
        out = await h.run("pre_tool_use", {"tool_name": "Bash"})
        assert out.halted is True
        assert out.halted_by == sleepy.__qualname__
        assert out.reason is not None and "sleepy" in out.reason
        assert out.error is not None
        assert after == []
        assert out.ran == (sleepy.__qualname__,)


async def test_fast_handler_with_timeout_runs_normally() -> None:
    with anyio.fail_after(5):

        async def quick(p: dict[str, Any]) -> dict[str, Any]:
            return {**p, "ok": 1}

        out = await Hooks().register("session_start", quick, timeout=2.0).run("session_start", {})
        assert out.halted is False and out.payload == {"ok": 1}


async def test_outside_cancellation_propagates_not_halt() -> None:
    with anyio.fail_after(5):
        started = anyio.Event()
        outcomes: list[HookOutcome] = []

        async def slow(p: Any) -> None:
            started.set()
            await anyio.sleep(10)

        h = Hooks().register("pre_tool_use", slow, timeout=30)
        with anyio.move_on_after(0.1) as scope:
            outcomes.append(await h.run("pre_tool_use", {"tool_name": "Bash"}))
        assert started.is_set()
        assert scope.cancelled_caught is True
        assert outcomes == []


async def test_task_cancel_propagates_from_run() -> None:
    with anyio.fail_after(5):
        started = asyncio.Event()

        async def slow(p: Any) -> None:
            started.set()
            await asyncio.sleep(10)

        h = Hooks().register("pre_tool_use", slow)
        task = asyncio.ensure_future(h.run("pre_tool_use", {}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


# --- HookOutcome ----------------------------------------------------------------------------


async def test_hook_outcome_frozen_and_fields() -> None:
    with anyio.fail_after(5):
        out = (
            await Hooks()
            .register("session_start", module_level_handler)
            .run("session_start", {"k": 1})
        )
        assert isinstance(out, HookOutcome)
        assert isinstance(out.ran, tuple)
        for field in ("halted", "reason", "halted_by", "payload", "ran", "error"):
            assert hasattr(out, field)
        with pytest.raises(FROZEN_ERRORS):
            out.halted = True  # type: ignore[misc]


async def test_concurrent_runs_of_one_value() -> None:
    with anyio.fail_after(5):

        async def bump(p: dict[str, Any]) -> dict[str, Any]:
            await anyio.sleep(0.01)
            return {**p, "n": p["n"] + 1}

        h = Hooks().register("session_start", bump).register("session_start", bump)
        results: dict[int, Any] = {}

        async def one(i: int) -> None:
            results[i] = (await h.run("session_start", {"n": i})).payload["n"]

        async with anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(one, i)
        assert results == {i: i + 2 for i in range(10)}
