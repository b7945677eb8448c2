"""Hooks under random behaviour: each handler leaves the payload unchanged, rewrites it, halts,
raises, sleeps past its timeout (or swallows / converts the cancellation that enforces it), or
returns after its timeout from sync code. The outcome always equals the ten-line reference
model in ``scenarios.hook_reference``, and no handler runs after one that failed."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import Halt, Hooks, HookTimeoutError
from tests.scenarios import (
    BEHAVIOURS,
    MATCHERS,
    Step,
    build_chain,
    check_chain,
    run_hook_chains,
)

steps_strategy = st.lists(
    st.builds(Step, st.sampled_from(BEHAVIOURS), st.booleans(), st.sampled_from(MATCHERS)),
    max_size=8,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps_strategy, st.sampled_from(["Bash", "Edit", "Read"]))
def test_outcome_equals_the_reference_model(steps: list[Step], tool: str) -> None:
    calls: list[int] = []
    hooks = build_chain(steps, calls)

    async def main() -> Any:
        with anyio.fail_after(10):
            return await hooks.run("pre_tool_use", {"tool_name": tool, "trail": ()})

    outcome = anyio.run(main)
    problem = check_chain(steps, tool, outcome, calls)
    assert problem is None, problem


async def test_three_hundred_random_chains() -> None:
    """The benchmark's generator, 300 chains: zero wrong outcomes, zero hangs, no leaks."""
    with anyio.fail_after(60):
        figures = await run_hook_chains(300, seed=11)
    assert figures.operations == 300 and figures.faults > 0
    assert figures.clean, figures.summary()


async def test_one_value_serves_concurrent_runs_independently() -> None:
    """200 concurrent runs of one Hooks value, each payload taking a different path through
    the same chain (rewrite, halt, raise or time out depending on the payload)."""

    async def first(payload: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        return {**payload, "trail": (*payload["trail"], "first")}

    async def gate(payload: dict[str, Any]) -> Any:
        mode = payload["n"] % 4
        if mode == 0:
            return Halt(f"halted {payload['n']}")
        if mode == 1:
            raise ValueError(f"broken {payload['n']}")
        if mode == 2:
            await anyio.sleep(60)
        return None

    seen: list[int] = []

    def last(payload: dict[str, Any]) -> Any:
        seen.append(payload["n"])
        return {**payload, "trail": (*payload["trail"], "last")}

    hooks = (
        Hooks()
        .register("pre_tool_use", first, name="first")
        .register("pre_tool_use", gate, name="gate", timeout=0.05)
        .register("pre_tool_use", last, name="last")
    )
    outcomes: dict[int, Any] = {}

    async def one(n: int) -> None:
        outcomes[n] = await hooks.run("pre_tool_use", {"tool_name": "Bash", "n": n, "trail": ()})

    with anyio.fail_after(20):
        async with anyio.create_task_group() as group:
            for n in range(200):
                group.start_soon(one, n)
    for n, outcome in outcomes.items():
        mode = n % 4
        assert outcome.halted == (mode != 3)
        assert outcome.ran == (("first", "gate") if mode != 3 else ("first", "gate", "last"))
        assert outcome.payload["trail"] == (("first",) if mode != 3 else ("first", "last"))
        if mode == 1:
            assert isinstance(outcome.error, ValueError) and f"broken {n}" in outcome.reason
        if mode == 2:
            assert isinstance(outcome.error, HookTimeoutError)
    assert sorted(seen) == [n for n in range(200) if n % 4 == 3]


@pytest.mark.parametrize("handler_timeout", [None, 30.0])
async def test_outside_cancellation_propagates_and_is_never_a_halt(
    handler_timeout: float | None,
) -> None:
    """A caller's deadline expiring inside a slow handler cancels the run: no outcome, no halt,
    and the handlers after it never run (a cancelled guard is not an allowed tool)."""
    after: list[str] = []

    async def slow(payload: object) -> None:
        await anyio.sleep(60)

    hooks = (
        Hooks()
        .register("pre_tool_use", slow, timeout=handler_timeout)
        .register("pre_tool_use", lambda p: after.append("ran"))
    )
    results: list[object] = []
    with anyio.fail_after(10):
        with anyio.move_on_after(0.05) as scope:
            results.append(await hooks.run("pre_tool_use", {"tool_name": "Bash"}))
    assert scope.cancelled_caught
    assert results == [] and after == []
