"""Property: any chain behaves like the reference fold (a reduce that stops at the first halt)."""

from __future__ import annotations

from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.hooks import Halt, HookOutcome, Hooks

ACTIONS = ("continue", "rewrite", "halt", "raise")
step = st.tuples(
    st.sampled_from(ACTIONS),
    st.booleans(),  # async?
    st.sampled_from([None, "*", "Bash", "Edit", "Bash|Edit", "NotebookEdit"]),
)


def make_handler(index: int, action: str, is_async: bool, calls: list[int]) -> Any:
    def act(payload: dict[str, Any]) -> Any:
        calls.append(index)
        if action == "rewrite":
            return {**payload, "trail": (*payload["trail"], index)}
        if action == "halt":
            return Halt(f"halt {index}")
        if action == "raise":
            raise RuntimeError(f"boom {index}")
        return None

    if not is_async:
        return act

    async def async_act(payload: dict[str, Any]) -> Any:
        await anyio.lowlevel.checkpoint()
        return act(payload)

    return async_act


def reference(
    steps: list[tuple[str, bool, str | None]], payload: dict[str, Any]
) -> tuple[bool, str | None, tuple[str, ...], dict[str, Any]]:
    ran: list[str] = []
    for index, (action, _, match) in enumerate(steps):
        if match not in (None, "*") and payload["tool_name"] not in match.split("|"):
            continue
        ran.append(f"h{index}")
        if action in ("halt", "raise"):
            return True, f"h{index}", tuple(ran), payload
        if action == "rewrite":
            payload = {**payload, "trail": (*payload["trail"], index)}
    return False, None, tuple(ran), payload


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(step, max_size=8), tool=st.sampled_from(["Bash", "Edit", "Read"]))
def test_run_matches_the_reference_fold(
    steps: list[tuple[str, bool, str | None]], tool: str
) -> None:
    calls: list[int] = []
    hooks = Hooks()
    for index, (action, is_async, match) in enumerate(steps):
        handler = make_handler(index, action, is_async, calls)
        hooks = hooks.register("pre_tool_use", handler, name=f"h{index}", match=match)
    payload = {"tool_name": tool, "trail": ()}

    async def main() -> HookOutcome:
        with anyio.fail_after(5):
            return await hooks.run("pre_tool_use", payload)

    outcome = anyio.run(main)
    halted, halted_by, ran, final = reference(steps, payload)
    assert (outcome.halted, outcome.halted_by, outcome.ran) == (halted, halted_by, ran)
    assert outcome.payload == final
    assert [f"h{i}" for i in calls] == list(ran)
    if halted:
        index = int(halted_by[1:]) if halted_by else -1
        action = steps[index][0]
        if action == "halt":
            assert outcome.reason == f"halt {index}" and outcome.error is None
        else:
            assert isinstance(outcome.error, RuntimeError)
            assert outcome.reason == f"handler 'h{index}' raised RuntimeError(boom {index})"
    else:
        assert outcome.reason is None and outcome.error is None
